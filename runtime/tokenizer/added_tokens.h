// Added tokens ("added_tokens" in tokenizer.json): special tokens like <|im_start|> and extra
// words. They are cut out of the text before normalization/BPE, matching leftmost-longest like
// HF's Aho-Corasick matcher, with HF's lstrip / rstrip / single_word rules.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bs::tok {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;     // skipped by decode(skip_special=true)
  bool lstrip = false;      // the match swallows whitespace on its left
  bool rstrip = false;      // ... and on its right
  bool normalized = false;  // matched against normalized text instead of the raw input
  bool single_word = false; // matched only where it is not inside a word
};

// A cut of a text: [begin, end) is either plain text (token < 0) or the added token `token`
// (an index into the tokens the matcher was built from).
struct Segment {
  size_t begin, end;
  int32_t token;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // Indexes the tokens of `all` for which `pick(token)` is true.
  template <class Pick>
  AddedTokenMatcher(const std::vector<AddedToken>& all, Pick pick) : tokens_(&all) {
    nodes_.emplace_back();
    for (size_t i = 0; i < all.size(); ++i)
      if (!all[i].content.empty() && pick(all[i])) insert(all[i].content, int32_t(i));
  }
  bool empty() const { return nodes_.size() <= 1; }
  // Cuts s into text and token segments that cover it; no segment is empty.
  std::vector<Segment> split(std::string_view s) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> next;
    int32_t token = -1;
  };
  void insert(const std::string& s, int32_t token);
  // Longest token starting at s[i]: its index and length, or {-1, 0}.
  std::pair<int32_t, size_t> longest_at(std::string_view s, size_t i) const;

  const std::vector<AddedToken>* tokens_ = nullptr;
  std::vector<Node> nodes_;
  bool first_byte_[256] = {};
};

}  // namespace bs::tok
