// A compiled PCRE2 pattern (UTF + UCP, JIT) for pre-tokenizer splits. HF tokenizers runs these
// patterns through Oniguruma; PCRE2 has the same syntax for what tokenizer.json files use
// (\p{L}, \p{N}, lookahead, (?i:...)).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bs::tok {

class Regex {
 public:
  // Throws bs::Error(input) naming `what` and the pattern offset when the pattern is invalid.
  Regex(const std::string& pattern, const std::string& what);
  static Regex literal(const std::string& text, const std::string& what);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Every non-overlapping match, left to right, as [begin, end) byte offsets. `s` must be valid
  // UTF-8. An empty match advances by one code point, as Oniguruma's find_iter does.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view s) const;
  // s with every match replaced by `with` (no group references).
  std::string replace_all(std::string_view s, std::string_view with) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bs::tok
