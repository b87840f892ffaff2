// A tokenizer for CSL as far as the static checks need it: identifiers, @builtins, numbers,
// strings and single-character punctuation, with // comments dropped and line numbers kept.
// It never fails: odd bytes become punctuation tokens, an unterminated string runs to the end.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace bs::csl {

enum class TokKind : unsigned char { ident, builtin, number, string, punct };

struct Token {
  TokKind kind;
  std::string text;  // identifier / builtin name with its '@' / number / string body without quotes / the char
  int line;
};

std::vector<Token> lex_csl(std::string_view src);

// Tokens with their bracket pairs matched once (the checks look them up often).
struct Tokens {
  explicit Tokens(const std::vector<Token>& tokens);
  const std::vector<Token>& t;
  std::vector<size_t> match;  // for '(' '[' '{': index of the closing bracket, else size()

  size_t size() const { return t.size(); }
  bool is(size_t i, TokKind k, std::string_view text) const {
    return i < t.size() && t[i].kind == k && t[i].text == text;
  }
  bool punct(size_t i, char c) const { return i < t.size() && t[i].kind == TokKind::punct && t[i].text[0] == c; }
  bool ident(size_t i) const { return i < t.size() && t[i].kind == TokKind::ident; }
  // Index of the bracket closing the one at i, or size() when i is not an opening bracket or unbalanced.
  size_t close_of(size_t i) const { return i < match.size() ? match[i] : t.size(); }
};

}  // namespace bs::csl
