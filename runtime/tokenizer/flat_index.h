// Open-addressing hash tables for the two big lookups of a BPE model, built once at load:
//   TokenIndex: token string -> id, keyed by the id -> token table so each string is stored once;
//   PairIndex:  (left id, right id) -> (merge rank, merged id).
// Node-based std::unordered_map spends most of a 128k-vocab load on allocation and cache misses;
// these are two flat arrays each.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bs::tok {

inline uint64_t mix64(uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline size_t table_size(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  return cap;
}

class TokenIndex {
 public:
  explicit TokenIndex(const std::vector<std::string>* tokens = nullptr) : tokens_(tokens) {}
  void reserve(size_t n) { slots_.assign(table_size(n), -1); }
  // Adds `id` under tokens[id]; returns the id already there when the string is a duplicate.
  int32_t insert(int32_t id) {
    const std::string& s = (*tokens_)[size_t(id)];
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(s) & mask;; i = (i + 1) & mask) {
      if (slots_[i] < 0) {
        slots_[i] = id;
        return -1;
      }
      if ((*tokens_)[size_t(slots_[i])] == s) return slots_[i];
    }
  }
  int32_t find(std::string_view s) const {
    if (slots_.empty()) return -1;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(s) & mask;; i = (i + 1) & mask) {
      if (slots_[i] < 0) return -1;
      if ((*tokens_)[size_t(slots_[i])] == s) return slots_[i];
    }
  }
  void set_tokens(const std::vector<std::string>* tokens) { tokens_ = tokens; }

 private:
  static size_t hash(std::string_view s) { return mix64(std::hash<std::string_view>{}(s)); }
  const std::vector<std::string>* tokens_;
  std::vector<int32_t> slots_;
};

class PairIndex {
 public:
  static constexpr uint64_t kEmpty = ~0ull;
  void reserve(size_t n) {
    keys_.assign(table_size(n), kEmpty);
    values_.resize(keys_.size());
  }
  // Keeps the first value for a key (the best-ranked merge).
  void insert(uint64_t key, int32_t rank, int32_t id) {
    size_t mask = keys_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == key) return;
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = {rank, id};
        return;
      }
    }
  }
  const std::pair<int32_t, int32_t>* find(uint64_t key) const {
    if (keys_.empty()) return nullptr;
    size_t mask = keys_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }

 private:
  std::vector<uint64_t> keys_;
  std::vector<std::pair<int32_t, int32_t>> values_;
};

}  // namespace bs::tok
