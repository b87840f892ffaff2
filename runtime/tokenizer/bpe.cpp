#include "runtime/tokenizer/bpe.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>

#include "runtime/base/error.h"
#include "runtime/tokenizer/pipeline.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

using nlohmann::json;

// Words seen before; bounded so a long random input cannot grow it without limit.
struct BpeModel::Cache {
  static constexpr size_t kCapacity = 1 << 16;
  static constexpr size_t kMaxWordBytes = 256;
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> words;
};

struct BpeModel::Vocab {
  std::vector<std::string> tokens;  // by id; "" where has[id] is false
  std::vector<bool> has;
  TokenIndex index{&tokens};
  Vocab() = default;
  Vocab(const Vocab&) = delete;
};

BpeModel::BpeModel() : vocab_(std::make_unique<Vocab>()), cache_(std::make_unique<Cache>()) {}
BpeModel::BpeModel(BpeModel&&) noexcept = default;
BpeModel& BpeModel::operator=(BpeModel&&) noexcept = default;
BpeModel::~BpeModel() = default;

static std::string optional_string(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) fail("{}.{}: expected a string or null, got {}", where, key, it->type_name());
  return it->get<std::string>();
}

void split_merge(std::string_view s, size_t rank, const std::string& where, std::pair<std::string, std::string>& out) {
  size_t sp = s.size() > 1 ? s.find(' ', 1) : std::string_view::npos;
  if (sp == std::string_view::npos) fail("{}.merges[{}]: expected \"left right\", got \"{}\"", where, rank, s);
  out.first.assign(s.substr(0, sp));
  out.second.assign(s.substr(sp + 1));
}

std::pair<std::string, std::string> parse_merge(const json& e, size_t rank, const std::string& where) {
  std::pair<std::string, std::string> out;
  if (e.is_string()) {
    split_merge(e.get_ref<const std::string&>(), rank, where, out);
  } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
    out = {e[0].get<std::string>(), e[1].get<std::string>()};
  } else {
    fail("{}.merges[{}]: expected \"left right\" or [left, right], got {}", where, rank, e.dump());
  }
  return out;
}

BpeModel BpeModel::from_json(const json& m, const std::string& where) {
  BpeParts parts;
  const json& vocab = json_field(m, "vocab", where);
  if (!vocab.is_object()) fail("{}.vocab: expected an object of token -> id, got {}", where, vocab.type_name());
  parts.vocab.reserve(vocab.size());
  for (auto& [tok, idj] : vocab.items()) {
    if (!idj.is_number_integer()) fail("{}.vocab[\"{}\"]: expected an integer id, got {}", where, tok, idj.dump());
    parts.vocab.emplace_back(tok, idj.get<int64_t>());
  }
  const json& merges = json_field(m, "merges", where);
  if (!merges.is_array()) fail("{}.merges: expected an array", where);
  parts.merges.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) parts.merges.push_back(parse_merge(merges[r], r, where));
  return from_parts(m, std::move(parts), where);
}

BpeModel BpeModel::from_parts(const json& m, BpeParts parts, const std::string& where) {
  BpeModel b;
  if (!m.is_object()) fail("{}: expected an object, got {}", where, m.type_name());
  std::string type = m.contains("type") ? json_string(m, "type", where) : "BPE";
  if (type != "BPE") fail("{}.type: only \"BPE\" models are supported, got \"{}\"", where, type);
  if (m.contains("dropout") && !m["dropout"].is_null() && !(m["dropout"].is_number() && m["dropout"].get<double>() == 0.0))
    fail("{}.dropout: BPE dropout is for training only and is not supported", where);
  b.unk_id_.reset();
  b.fuse_unk_ = json_bool(m, "fuse_unk", false, where);
  b.byte_fallback_ = json_bool(m, "byte_fallback", false, where);
  b.ignore_merges_ = json_bool(m, "ignore_merges", false, where);
  b.continuing_prefix_ = optional_string(m, "continuing_subword_prefix", where);
  b.end_suffix_ = optional_string(m, "end_of_word_suffix", where);

  Vocab& v = *b.vocab_;
  int64_t max_id = -1;
  for (auto& [tok, id] : parts.vocab) {
    if (id < 0 || id >= (int64_t(1) << 24)) fail("{}.vocab[\"{}\"]: id {} out of range [0, 2^24)", where, tok, id);
    max_id = std::max(max_id, id);
  }
  v.tokens.resize(size_t(max_id + 1));
  v.has.assign(size_t(max_id + 1), false);
  v.index.reserve(parts.vocab.size());
  for (auto& [tok, id] : parts.vocab) {
    if (v.has[size_t(id)]) fail("{}.vocab: id {} is used by two tokens", where, id);
    v.tokens[size_t(id)] = std::move(tok);
    v.has[size_t(id)] = true;
    if (v.index.insert(int32_t(id)) >= 0) fail("{}.vocab: token \"{}\" appears twice", where, v.tokens[size_t(id)]);
  }

  b.merges_.reserve(parts.merges.size());
  std::string merged;
  for (size_t r = 0; r < parts.merges.size(); ++r) {
    const auto& [left, right] = parts.merges[r];
    int32_t l = v.index.find(left), rr = v.index.find(right);
    // The merged token drops the continuing-subword prefix of the right part.
    std::string_view tail = right;
    if (!b.continuing_prefix_.empty() && tail.starts_with(b.continuing_prefix_))
      tail.remove_prefix(b.continuing_prefix_.size());
    merged.assign(left).append(tail);
    int32_t mm = v.index.find(merged);
    if (l < 0 || rr < 0 || mm < 0)
      fail("{}.merges[{}]: \"{} {}\" uses a token missing from the vocab", where, r, left, right);
    b.merges_.insert((uint64_t(uint32_t(l)) << 32) | uint32_t(rr), int32_t(r), mm);
  }

  std::string unk = optional_string(m, "unk_token", where);
  if (!unk.empty()) {
    int32_t id = v.index.find(unk);
    if (id < 0) fail("{}.unk_token: \"{}\" is not in the vocab", where, unk);
    b.unk_id_ = id;
  }
  for (int i = 0; i < 256; ++i) b.byte_ids_[i] = v.index.find(fmt::format("<0x{:02X}>", i));
  return b;
}

std::optional<int32_t> BpeModel::find(std::string_view token) const {
  int32_t id = vocab_->index.find(token);
  if (id < 0) return std::nullopt;
  return id;
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const { return find(token); }

int32_t BpeModel::size() const { return int32_t(vocab_->tokens.size()); }

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || id >= size() || !vocab_->has[size_t(id)]) return nullptr;
  return &vocab_->tokens[size_t(id)];
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (word.size() <= Cache::kMaxWordBytes) {
    std::lock_guard lock(cache_->mutex);
    auto it = cache_->words.find(word);
    if (it != cache_->words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  if (auto id = ignore_merges_ ? token_to_id(word) : std::nullopt) {
    ids.push_back(*id);
  } else {
    merge_word(word, ids);
  }
  out.insert(out.end(), ids.begin(), ids.end());
  // Without a pre-tokenizer (SentencePiece style) a "word" is a whole text segment; caching
  // those would hold every prompt ever seen.
  if (word.size() > Cache::kMaxWordBytes) return;
  std::lock_guard lock(cache_->mutex);
  if (cache_->words.size() < Cache::kCapacity) cache_->words.emplace(std::string(word), std::move(ids));
}

// Classic BPE: start from one symbol per char, repeatedly merge the adjacent pair of lowest rank
// (leftmost on ties). A min-heap of candidate merges keeps this O(n log n); entries made stale by
// an earlier merge are detected and skipped when popped.
void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Symbol> syms;
  syms.reserve(word.size());
  bool last_unk = false;
  for (size_t i = 0; i < word.size();) {
    size_t start = i;
    i += std::max<size_t>(1, utf8_valid_len(word, i));
    std::string ch(word.substr(start, i - start));
    if (start > 0 && !continuing_prefix_.empty()) ch.insert(0, continuing_prefix_);
    if (i == word.size() && !end_suffix_.empty()) ch += end_suffix_;
    auto push = [&](int32_t id) { syms.push_back({id, int32_t(syms.size()) - 1, int32_t(syms.size()) + 1, true}); };
    if (auto id = token_to_id(ch)) {
      push(*id);
      last_unk = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (size_t k = start; k < i; ++k) all = all && byte_ids_[static_cast<unsigned char>(word[k])] >= 0;
      if (all) {
        for (size_t k = start; k < i; ++k) push(byte_ids_[static_cast<unsigned char>(word[k])]);
        last_unk = false;
        continue;
      }
    }
    if (unk_id_) {
      if (!(fuse_unk_ && last_unk)) push(*unk_id_);
      last_unk = true;
    }
    // With no unk token, HF drops the char.
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  struct Cand {
    int32_t rank, pos, new_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<>> heap;
  auto consider = [&](int32_t pos) {
    int32_t nx = syms[size_t(pos)].next;
    if (nx < 0) return;
    uint64_t key = (uint64_t(uint32_t(syms[size_t(pos)].id)) << 32) | uint32_t(syms[size_t(nx)].id);
    if (auto* m = merges_.find(key)) heap.push({m->first, pos, m->second});
  };
  for (int32_t p = 0; p < int32_t(syms.size()); ++p) consider(p);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    Symbol& s = syms[size_t(c.pos)];
    if (!s.alive || s.next < 0) continue;
    Symbol& r = syms[size_t(s.next)];
    uint64_t key = (uint64_t(uint32_t(s.id)) << 32) | uint32_t(r.id);
    auto* m = merges_.find(key);
    if (!m || m->second != c.new_id) continue;  // stale candidate
    s.id = c.new_id;
    r.alive = false;
    s.next = r.next;
    if (r.next >= 0) syms[size_t(r.next)].prev = c.pos;
    if (s.prev >= 0) consider(s.prev);
    consider(c.pos);
  }
  for (auto& s : syms)
    if (s.alive) out.push_back(s.id);
}

}  // namespace bs::tok
