#include "cli/csl/csl_lex.h"

#include <cctype>

namespace bs::csl {

namespace {
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

std::vector<Token> lex_csl(std::string_view s) {
  std::vector<Token> out;
  int line = 1;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (ident_start(c) || (c == '@' && i + 1 < s.size() && ident_start(s[i + 1]))) {
      size_t j = i + 1;
      while (j < s.size() && ident_char(s[j])) ++j;
      out.push_back({c == '@' ? TokKind::builtin : TokKind::ident, std::string(s.substr(i, j - i)), line});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) ++j;
      out.push_back({TokKind::number, std::string(s.substr(i, j - i)), line});
      i = j;
    } else if (c == '"') {
      size_t j = i + 1;
      std::string body;
      while (j < s.size() && s[j] != '"' && s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < s.size()) ++j;
        body += s[j++];
      }
      out.push_back({TokKind::string, std::move(body), line});
      i = j < s.size() && s[j] == '"' ? j + 1 : j;
    } else {
      out.push_back({TokKind::punct, std::string(1, c), line});
      ++i;
    }
  }
  return out;
}

Tokens::Tokens(const std::vector<Token>& tokens) : t(tokens), match(tokens.size(), tokens.size()) {
  std::vector<size_t> open;
  for (size_t j = 0; j < t.size(); ++j) {
    if (t[j].kind != TokKind::punct) continue;
    char c = t[j].text[0];
    if (c == '(' || c == '[' || c == '{') {
      open.push_back(j);
    } else if (c == ')' || c == ']' || c == '}') {
      char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      // A stray closer matches nothing; a mismatched one abandons the open bracket (left unbalanced).
      while (!open.empty() && t[open.back()].text[0] != want) open.pop_back();
      if (!open.empty()) {
        match[open.back()] = j;
        open.pop_back();
      }
    }
  }
}

}  // namespace bs::csl
