#include "runtime/tokenizer/added_tokens.h"

#include <unicode/uchar.h>

#include <algorithm>

#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

void AddedTokenMatcher::insert(const std::string& s, int32_t token) {
  int32_t n = 0;
  for (unsigned char c : s) {
    auto& next = nodes_[size_t(n)].next;
    auto it = std::find_if(next.begin(), next.end(), [c](auto& p) { return p.first == c; });
    if (it != next.end()) {
      n = it->second;
    } else {
      int32_t child = int32_t(nodes_.size());
      nodes_[size_t(n)].next.emplace_back(c, child);
      nodes_.emplace_back();
      n = child;
    }
  }
  // Two added tokens with the same content: the first one listed wins, as in HF.
  if (nodes_[size_t(n)].token < 0) nodes_[size_t(n)].token = token;
  first_byte_[static_cast<unsigned char>(s[0])] = true;
}

std::pair<int32_t, size_t> AddedTokenMatcher::longest_at(std::string_view s, size_t i) const {
  int32_t n = 0, best = -1;
  size_t best_len = 0;
  for (size_t k = i; k < s.size(); ++k) {
    auto c = static_cast<unsigned char>(s[k]);
    const auto& next = nodes_[size_t(n)].next;
    auto it = std::find_if(next.begin(), next.end(), [c](auto& p) { return p.first == c; });
    if (it == next.end()) break;
    n = it->second;
    if (nodes_[size_t(n)].token >= 0) {
      best = nodes_[size_t(n)].token;
      best_len = k + 1 - i;
    }
  }
  return {best, best_len};
}

static char32_t last_char(std::string_view s) {
  if (s.empty()) return 0;
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return utf8_next(s, i);
}

static bool is_word_char(char32_t c) { return c != 0 && (u_isalnum(UChar32(c)) || c == '_'); }

std::vector<Segment> AddedTokenMatcher::split(std::string_view s) const {
  std::vector<Segment> out;
  size_t done = 0;  // everything before this offset is already in `out`
  size_t i = 0;
  while (!empty() && i < s.size()) {
    if (!first_byte_[static_cast<unsigned char>(s[i])]) {
      ++i;
      continue;
    }
    auto [tok, len] = longest_at(s, i);
    if (tok < 0) {
      ++i;
      continue;
    }
    const AddedToken& t = (*tokens_)[size_t(tok)];
    size_t b = i, e = i + len;
    if (t.single_word) {
      size_t j = e;
      bool left_ok = b == 0 || !is_word_char(last_char(s.substr(0, b)));
      bool right_ok = e == s.size() || !is_word_char(utf8_next(s, j));
      if (!left_ok || !right_ok) {
        ++i;
        continue;
      }
    }
    if (t.lstrip) {
      // Swallow whitespace to the left, but not what an earlier match already took.
      size_t nb = b;
      while (nb > done) {
        size_t p = nb - 1;
        while (p > done && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
        size_t q = p;
        if (!is_whitespace(utf8_next(s, q))) break;
        nb = p;
      }
      b = nb;
    }
    if (t.rstrip) {
      while (e < s.size()) {
        size_t q = e;
        if (!is_whitespace(utf8_next(s, q))) break;
        e = q;
      }
    }
    if (b > done) out.push_back({done, b, -1});
    out.push_back({b, e, tok});
    done = i = e;
  }
  if (done < s.size()) out.push_back({done, s.size(), -1});
  return out;
}

}  // namespace bs::tok
