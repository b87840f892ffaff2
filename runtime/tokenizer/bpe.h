// The BPE model of an HF tokenizer.json ("model": {"type": "BPE", ...}): vocab, ranked merges,
// byte fallback, unk, ignore_merges. encode_word() turns one pre-token into ids; results are
// cached per word because natural text repeats words constantly.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/tokenizer/flat_index.h"

namespace bs::tok {

// Heterogeneous lookup so a string_view finds a std::string key without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// The two big tables of a BPE model as read from the file, before validation. tokenizer.json
// files stream them straight into these (see tokenizer_file.cpp) instead of building a DOM.
struct BpeParts {
  std::vector<std::pair<std::string, int64_t>> vocab;       // token, id
  std::vector<std::pair<std::string, std::string>> merges;  // left, right, by rank
};
// Splits one entry of "merges": "left right" (tokenizers < 0.20) or ["left", "right"].
std::pair<std::string, std::string> parse_merge(const nlohmann::json& e, size_t rank, const std::string& where);
void split_merge(std::string_view s, size_t rank, const std::string& where, std::pair<std::string, std::string>& out);

class BpeModel {
 public:
  // `where` prefixes error messages ("tokenizer.json: model").
  static BpeModel from_json(const nlohmann::json& model, const std::string& where);
  // `model` holds the other fields (type, unk_token, byte_fallback, ...); its vocab and merges,
  // if any, are ignored in favour of `parts`.
  static BpeModel from_parts(const nlohmann::json& model, BpeParts parts, const std::string& where);
  BpeModel(BpeModel&&) noexcept;
  BpeModel& operator=(BpeModel&&) noexcept;
  ~BpeModel();

  // Appends the ids of one pre-token (already normalized and pre-tokenized) to `out`.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // nullptr when the id has no vocab entry.
  const std::string* id_to_token(int32_t id) const;
  // One past the largest vocab id.
  int32_t size() const;

 private:
  BpeModel();
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> find(std::string_view token) const;

  struct Vocab;  // id <-> token tables, on the heap so the index can point into them
  std::unique_ptr<Vocab> vocab_;
  PairIndex merges_;  // (left id << 32 | right id) -> (rank, merged id)
  std::optional<int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::string continuing_prefix_, end_suffix_;
  int32_t byte_ids_[256];  // "<0xAB>" token ids for byte fallback, -1 where absent

  struct Cache;
  std::unique_ptr<Cache> cache_;
};

}  // namespace bs::tok
