// Tokenizer. Runs the template-list discovery first, then splits the text greedily into tokens,
// turning the discovered '<' / '>' into tmpl_start / tmpl_end (so `>>` closing two template lists
// becomes two tokens).
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "runtime/wgsl/token.h"

namespace bs::wgsl {

namespace {

// Longest first, so that greedy matching picks "<<=" before "<<" before "<".
constexpr std::array<std::string_view, 46> kPuncts = {
    "<<=", ">>=", "&&", "||", "->", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
    "==",  "!=",  "<=", ">=", "<<", ">>", "&",  "|",  "^",  "~",  "!",  "+",  "-",  "*",  "/",
    "%",   "<",   ">",  "=",  "(",  ")",  "[",  "]",  "{",  "}",  ",",  ".",  ";",  ":",  "@",  "_"};

struct LineMap {
  std::string_view src;
  uint32_t line = 1, col = 1;
  size_t at = 0;
  // Advances the running line/column to byte offset `to` (monotonic).
  Loc loc(size_t to) {
    for (; at < to && at < src.size(); ++at) {
      unsigned char c = src[at];
      if (c == '\n') {
        ++line;
        col = 1;
      } else if ((c & 0xC0) != 0x80) {
        ++col;  // count code points, not UTF-8 continuation bytes
      }
    }
    return Loc{line, col, uint32_t(to)};
  }
};

}  // namespace

std::vector<Token> tokenize(std::string_view src, Diagnostics& diags) {
  std::vector<Token> toks;
  if (src.size() > (1u << 26)) {
    diags.error(Loc{}, "source is larger than 64 MiB");
    toks.push_back({Tok::eof, "", Loc{}});
    return toks;
  }
  TemplateMarks marks = discover_template_lists(src);
  LineMap lm{src};
  size_t p = 0, n = src.size();
  while (true) {
    bool bad_comment = false;
    size_t q = skip_blank(src, p, &bad_comment);
    if (bad_comment) {
      // Point at the opening of the comment that never closed.
      size_t open = src.rfind("/*", n);
      for (size_t i = p; i + 1 < n; ++i)
        if (src[i] == '/' && src[i + 1] == '*') {
          open = i;
          break;
        }
      diags.error(lm.loc(open), "unterminated block comment");
    }
    p = q;
    if (p >= n) break;
    Loc loc = lm.loc(p);
    bool flt = false;
    size_t e = scan_number(src, p, &flt);
    if (e > p) {
      // A literal glued to identifier characters ("12abc", "1uu") is malformed.
      size_t tail = scan_ident(src, e);
      if (tail > e || (e < n && src[e] >= '0' && src[e] <= '9')) {
        size_t end = std::max(tail, e + 1);
        diags.error(loc, fmt::format("malformed numeric literal '{}'", src.substr(p, end - p)));
        e = end;
      }
      toks.push_back({flt ? Tok::float_lit : Tok::int_lit, std::string(src.substr(p, e - p)), loc});
      p = e;
      continue;
    }
    e = scan_ident(src, p);
    if (e > p) {
      std::string_view text = src.substr(p, e - p);
      toks.push_back({Tok::ident, std::string(text), loc});
      p = e;
      continue;
    }
    if (src[p] == '<' && marks.starts.count(uint32_t(p))) {
      toks.push_back({Tok::tmpl_start, "<", loc});
      ++p;
      continue;
    }
    if (src[p] == '>' && marks.ends.count(uint32_t(p))) {
      toks.push_back({Tok::tmpl_end, ">", loc});
      ++p;
      continue;
    }
    bool matched = false;
    for (std::string_view op : kPuncts) {
      if (src.substr(p, op.size()) != op) continue;
      // Never swallow a template delimiter into a longer operator ("a>=b" is fine, "x<y>>" is not).
      bool crosses = false;
      for (size_t i = 1; i < op.size(); ++i)
        if (marks.starts.count(uint32_t(p + i)) || marks.ends.count(uint32_t(p + i))) crosses = true;
      if (crosses) continue;
      toks.push_back({Tok::punct, std::string(op), loc});
      p += op.size();
      matched = true;
      break;
    }
    if (!matched) {
      unsigned char c = src[p];
      if (c >= 0x20 && c < 0x7f)
        diags.error(loc, fmt::format("unexpected character '{}'", char(c)));
      else
        diags.error(loc, fmt::format("unexpected byte 0x{:02x}", unsigned(c)));
      ++p;
      if (diags.full()) break;
    }
  }
  toks.push_back({Tok::eof, "", lm.loc(n)});
  return toks;
}

}  // namespace bs::wgsl
