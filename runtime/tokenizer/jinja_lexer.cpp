#include "runtime/tokenizer/jinja_lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "runtime/base/error.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok::jinja {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& name) : src_(src), name_(name) {
    for (size_t i = 0; i < src.size(); ++i)
      if (src[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      size_t tag = find_tag(pos_);
      std::string text(src_.substr(pos_, tag - pos_));
      if (tag == src_.size()) {
        emit_text(std::move(text), pos_);
        break;
      }
      char type = src_[tag + 1];  // '{', '%' or '#'
      char mod = tag + 2 < src_.size() ? src_[tag + 2] : 0;
      if (mod == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (mod != '+' && type != '{') {
        // lstrip_blocks: drop the indentation before a block or comment tag on its own line.
        size_t l = text.rfind('\n');
        l = l == std::string::npos ? 0 : l + 1;
        bool line_start = l > 0 || pos_ == 0 || src_[pos_ - 1] == '\n';
        bool blank = text.find_first_not_of(" \t\r\v\f", l) == std::string::npos;
        if (line_start && blank) text.resize(l);
      }
      emit_text(std::move(text), pos_);
      size_t body = tag + 2 + ((mod == '-' || mod == '+') ? 1 : 0);
      if (type == '#') {
        size_t end = src_.find("#}", body);
        if (end == std::string::npos) error(tag, "unterminated comment");
        bool strip = end > body && src_[end - 1] == '-';
        pos_ = after_end(end + 2, strip, /*block=*/true, end > body && src_[end - 1] == '+');
      } else if (type == '%' && is_raw(body)) {
        lex_raw(tag, body);
      } else {
        lex_tag(tag, body, type == '%');
      }
    }
    tokens_.push_back({Token::Kind::eof, "", 0, 0, where(src_.size())});
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return src_.size();
  }

  Pos where(size_t offset) const {
    offset = std::min(offset, src_.size());
    size_t line = size_t(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
    Pos p;
    p.line = int(line);
    for (size_t i = line_starts_[line - 1]; i < offset; ++i)
      if ((static_cast<unsigned char>(src_[i]) & 0xC0) != 0x80) ++p.col;  // columns count characters
    return p;
  }

  [[noreturn]] void error(size_t offset, const std::string& msg) const {
    Pos p = where(offset);
    fail("{}:{}:{}: {}", name_, p.line, p.col, msg);
  }

  void emit_text(std::string text, size_t at) {
    if (!text.empty()) tokens_.push_back({Token::Kind::text, std::move(text), 0, 0, where(at)});
  }

  // Where text resumes after a tag ending at `end`: "-%}" eats all whitespace, and trim_blocks
  // eats one newline after a block or comment tag ("+%}" keeps it).
  size_t after_end(size_t end, bool strip, bool block, bool keep) const {
    if (strip) {
      while (end < src_.size() && is_space(src_[end])) ++end;
    } else if (block && !keep && end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    return end;
  }

  size_t skip_ws(size_t i) const {
    while (i < src_.size() && is_space(src_[i])) ++i;
    return i;
  }

  bool word_at(size_t i, std::string_view w) const {
    if (src_.compare(i, w.size(), w) != 0) return false;
    size_t e = i + w.size();
    return e >= src_.size() || !(std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_');
  }

  bool is_raw(size_t body) const { return word_at(skip_ws(body), "raw"); }

  // {% raw %}...{% endraw %}: the inside is text, untouched.
  void lex_raw(size_t tag, size_t body) {
    size_t close = src_.find("%}", body);
    if (close == std::string::npos) error(tag, "unterminated {% raw %} tag");
    size_t start = after_end(close + 2, src_[close - 1] == '-', true, src_[close - 1] == '+');
    for (size_t i = src_.find("{%", start); i != std::string::npos; i = src_.find("{%", i + 2)) {
      size_t j = i + 2;
      char mod = j < src_.size() ? src_[j] : 0;
      if (mod == '-' || mod == '+') ++j;
      j = skip_ws(j);
      if (!word_at(j, "endraw")) continue;
      j = skip_ws(j + 6);
      bool strip_after = j < src_.size() && src_[j] == '-';
      if (strip_after || (j < src_.size() && src_[j] == '+')) ++j;
      if (src_.compare(j, 2, "%}") != 0) error(j, "expected '%}' after endraw");
      std::string text(src_.substr(start, i - start));
      if (mod == '-')
        while (!text.empty() && is_space(text.back())) text.pop_back();
      emit_text(std::move(text), start);
      pos_ = after_end(j + 2, strip_after, true, false);
      return;
    }
    error(tag, "{% raw %} without {% endraw %}");
  }

  void lex_tag(size_t tag, size_t i, bool block) {
    tokens_.push_back({block ? Token::Kind::block_begin : Token::Kind::var_begin, "", 0, 0, where(tag)});
    std::vector<char> brackets;
    const char* close = block ? "%}" : "}}";
    while (true) {
      i = skip_ws(i);
      if (i >= src_.size()) error(tag, block ? "unterminated block tag (missing '%}')" : "unterminated '{{' (missing '}}')");
      if (brackets.empty()) {
        bool strip = src_[i] == '-' && src_.compare(i + 1, 2, close) == 0;
        bool keep = block && src_[i] == '+' && src_.compare(i + 1, 2, close) == 0;
        if (strip || keep || src_.compare(i, 2, close) == 0) {
          size_t end = i + 2 + (strip || keep ? 1 : 0);
          tokens_.push_back({block ? Token::Kind::block_end : Token::Kind::var_end, "", 0, 0, where(i)});
          pos_ = after_end(end, strip, block, keep);
          return;
        }
      }
      size_t start = i;
      char c = src_[i];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[i])) || src_[i] == '_')) ++i;
        tokens_.push_back({Token::Kind::name, std::string(src_.substr(start, i - start)), 0, 0, where(start)});
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number(i);
      } else if (c == '\'' || c == '"') {
        lex_string(i);
      } else {
        static const char* two[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char* t : two)
          if (src_.compare(i, 2, t) == 0) op = t;
        if (op.empty()) {
          if (std::string_view("+-*/%~<>=()[]{}.,:|").find(c) == std::string_view::npos)
            error(i, fmt::format("unexpected character '{}'", c));
          op = std::string(1, c);
          if (c == '(' || c == '[' || c == '{') brackets.push_back(c);
          if (c == ')' || c == ']' || c == '}') {
            char want = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (brackets.empty() || brackets.back() != want) error(i, fmt::format("unbalanced '{}'", c));
            brackets.pop_back();
          }
        }
        i += op.size();
        tokens_.push_back({Token::Kind::op, op, 0, 0, where(start)});
      }
    }
  }

  void lex_number(size_t& i) {
    size_t start = i;
    auto digits = [&] {
      while (i < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[i])) || src_[i] == '_')) ++i;
    };
    digits();
    bool real = false;
    if (i + 1 < src_.size() && src_[i] == '.' && std::isdigit(static_cast<unsigned char>(src_[i + 1]))) {
      real = true;
      ++i;
      digits();
    }
    if (i < src_.size() && (src_[i] == 'e' || src_[i] == 'E')) {
      size_t j = i + 1;
      if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
      if (j < src_.size() && std::isdigit(static_cast<unsigned char>(src_[j]))) {
        real = true;
        i = j;
        digits();
      }
    }
    std::string text;
    for (size_t k = start; k < i; ++k)
      if (src_[k] != '_') text += src_[k];
    Token t{real ? Token::Kind::real : Token::Kind::integer, text, 0, 0, where(start)};
    if (real) {
      t.d = std::strtod(text.c_str(), nullptr);
    } else {
      errno = 0;
      t.i = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) error(start, "integer literal out of range");
    }
    tokens_.push_back(std::move(t));
  }

  // Python string literal escapes (what Jinja's unicode-escape decoding accepts).
  void lex_string(size_t& i) {
    size_t start = i;
    char q = src_[i++];
    std::string out;
    while (true) {
      if (i >= src_.size()) error(start, "unterminated string literal");
      char c = src_[i++];
      if (c == q) break;
      if (c != '\\' || i >= src_.size()) {
        out += c;
        continue;
      }
      char e = src_[i++];
      auto hex = [&](int n) {
        if (i + size_t(n) > src_.size()) error(i, "truncated \\x/\\u escape");
        char32_t v = 0;
        for (int k = 0; k < n; ++k) {
          char h = src_[i++];
          int d = std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                  : std::isxdigit(static_cast<unsigned char>(h)) ? (std::tolower(h) - 'a' + 10)
                                                                  : -1;
          if (d < 0) error(i - 1, "invalid hex digit in escape");
          v = v * 16 + char32_t(d);
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) error(i, "escape is not a valid code point");
        utf8_append(out, v);
      };
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'a': out += '\a'; break;
        case '0': out += '\0'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case '\n': break;  // line continuation
        case 'x': hex(2); break;
        case 'u': hex(4); break;
        case 'U': hex(8); break;
        default: out += '\\'; out += e;  // Python keeps unknown escapes as written
      }
    }
    tokens_.push_back({Token::Kind::string, std::move(out), 0, 0, where(start)});
  }

  std::string_view src_;
  const std::string& name_;
  size_t pos_ = 0;
  std::vector<Token> tokens_;
  std::vector<size_t> line_starts_{0};
};

}  // namespace

std::vector<Token> lex_template(std::string_view src, const std::string& name) { return Lexer(src, name).run(); }

}  // namespace bs::tok::jinja
