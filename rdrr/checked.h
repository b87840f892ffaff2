// Arithmetic and names from untrusted files: sizes are multiplied and added with overflow checks,
// and file names must be plain names inside the model directory.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace bs {

inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of the dims; nullopt on a negative dim or overflow. An empty shape is a scalar (1).
inline std::optional<uint64_t> checked_elements(std::span<const int64_t> shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    auto m = checked_mul(n, uint64_t(d));
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

// A file name that stays in its directory: no separators, not "." or "..", no NUL, not empty.
inline bool is_plain_filename(std::string_view s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 255) return false;
  for (char c : s)
    if (c == '/' || c == '\\' || c == '\0') return false;
  return true;
}

}  // namespace bs
