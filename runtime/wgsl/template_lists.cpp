// Template-list discovery, following the algorithm of the WGSL specification (section "Template
// Lists"): a '<' right after an identifier is a candidate; it becomes a template list when a '>'
// appears at the same parenthesis nesting depth before anything that cannot be inside a template
// list (';', '{', ':', an assignment '=', '&&', '||').
#include <vector>

#include "runtime/wgsl/token.h"

namespace bs::wgsl {

namespace {
bool is_ident_start(unsigned char c) { return c == '_' || unsigned((c | 0x20) - 'a') < 26u || c >= 0x80; }
bool is_digit(unsigned char c) { return unsigned(c - '0') < 10u; }
bool is_ident_char(unsigned char c) { return is_ident_start(c) || is_digit(c); }
bool is_hex(unsigned char c) { return is_digit(c) || unsigned((c | 0x20) - 'a') < 6u; }
}  // namespace

size_t scan_ident(std::string_view s, size_t p) {
  if (p >= s.size() || !is_ident_start(s[p])) return p;
  size_t e = p + 1;
  while (e < s.size() && is_ident_char(s[e])) ++e;
  // A lone '_' followed by nothing identifier-like is still an identifier-pattern match for the
  // discovery algorithm (phony assignment), which is harmless.
  return e;
}

size_t scan_number(std::string_view s, size_t p, bool* is_float) {
  *is_float = false;
  size_t n = s.size();
  auto at = [&](size_t i) -> unsigned char { return i < n ? s[i] : 0; };
  if (p >= n) return p;
  if (at(p) == '0' && (at(p + 1) | 0x20) == 'x' && (is_hex(at(p + 2)) || (at(p + 2) == '.' && is_hex(at(p + 3))))) {
    size_t e = p + 2;
    while (is_hex(at(e))) ++e;
    bool flt = false;
    if (at(e) == '.') {
      flt = true;
      ++e;
      while (is_hex(at(e))) ++e;
    }
    if ((at(e) | 0x20) == 'p' && (is_digit(at(e + 1)) || ((at(e + 1) == '+' || at(e + 1) == '-') && is_digit(at(e + 2))))) {
      flt = true;
      e += (at(e + 1) == '+' || at(e + 1) == '-') ? 2 : 1;
      while (is_digit(at(e))) ++e;
      if (at(e) == 'f' || at(e) == 'h') ++e;
    } else if (!flt && (at(e) == 'i' || at(e) == 'u')) {
      ++e;
    }
    *is_float = flt;
    return e;
  }
  if (!is_digit(at(p)) && !(at(p) == '.' && is_digit(at(p + 1)))) return p;
  size_t e = p;
  while (is_digit(at(e))) ++e;
  bool flt = false;
  if (at(e) == '.' && (is_digit(at(e + 1)) || e > p)) {
    // "1." is a float, but "1.x" would be member access on a literal: not valid WGSL either way.
    flt = true;
    ++e;
    while (is_digit(at(e))) ++e;
  }
  if ((at(e) | 0x20) == 'e' && (is_digit(at(e + 1)) || ((at(e + 1) == '+' || at(e + 1) == '-') && is_digit(at(e + 2))))) {
    flt = true;
    e += (at(e + 1) == '+' || at(e + 1) == '-') ? 2 : 1;
    while (is_digit(at(e))) ++e;
  }
  if (at(e) == 'f' || at(e) == 'h') {
    flt = true;
    ++e;
  } else if (!flt && (at(e) == 'i' || at(e) == 'u')) {
    ++e;
  }
  *is_float = flt;
  return e;
}

size_t skip_blank(std::string_view s, size_t p, bool* bad) {
  size_t n = s.size();
  while (p < n) {
    unsigned char c = s[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      ++p;
    } else if (c == '/' && p + 1 < n && s[p + 1] == '/') {
      while (p < n && s[p] != '\n') ++p;
    } else if (c == '/' && p + 1 < n && s[p + 1] == '*') {
      int depth = 1;  // WGSL block comments nest
      p += 2;
      while (p < n && depth > 0) {
        if (s[p] == '/' && p + 1 < n && s[p + 1] == '*') {
          ++depth;
          p += 2;
        } else if (s[p] == '*' && p + 1 < n && s[p + 1] == '/') {
          --depth;
          p += 2;
        } else {
          ++p;
        }
      }
      if (depth > 0 && bad) *bad = true;
    } else {
      break;
    }
  }
  return p;
}

TemplateMarks discover_template_lists(std::string_view s) {
  struct Candidate {
    uint32_t pos;
    int depth;
  };
  TemplateMarks out;
  std::vector<Candidate> pending;
  int depth = 0;
  size_t p = 0, n = s.size();
  auto pop_deeper = [&] {
    while (!pending.empty() && pending.back().depth >= depth) pending.pop_back();
  };
  while (p < n) {
    p = skip_blank(s, p);
    if (p >= n) break;
    bool flt;
    size_t e = scan_number(s, p, &flt);
    if (e > p) {
      p = e;
      continue;
    }
    e = scan_ident(s, p);
    if (e > p) {
      p = skip_blank(s, e);
      if (p < n && s[p] == '<') {
        pending.push_back({uint32_t(p), depth});
        ++p;
        if (p < n && (s[p] == '<' || s[p] == '=')) {  // '<<' or '<=': an operator after all
          pending.pop_back();
          ++p;
        }
      }
      continue;
    }
    char c = s[p];
    if (c == '>') {
      if (!pending.empty() && pending.back().depth == depth) {
        out.starts.insert(pending.back().pos);
        out.ends.insert(uint32_t(p));
        pending.pop_back();
        ++p;
        continue;
      }
      ++p;
      if (p < n && s[p] == '=') ++p;  // '>='
    } else if (c == '(' || c == '[') {
      ++depth;
      ++p;
    } else if (c == ')' || c == ']') {
      pop_deeper();
      depth = depth > 0 ? depth - 1 : 0;
      ++p;
    } else if (c == '!') {
      ++p;
      if (p < n && s[p] == '=') ++p;
    } else if (c == '=') {
      ++p;
      if (p < n && s[p] == '=') {
        ++p;
        continue;
      }
      depth = 0;  // an assignment cannot sit inside a template list
      pending.clear();
    } else if (c == ';' || c == '{' || c == ':') {
      depth = 0;
      pending.clear();
      ++p;
    } else if ((c == '&' || c == '|') && p + 1 < n && s[p + 1] == c) {
      pop_deeper();
      p += 2;
    } else {
      ++p;
    }
  }
  return out;
}

}  // namespace bs::wgsl
