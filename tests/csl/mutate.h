// Deterministic mutations of seed inputs, so CI exercises the fuzz targets without clang/libFuzzer.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bs::csl::testing {

// One mutation of `seed`: flips, deletions, duplications, truncation, splices of JSON/CSL tokens.
inline std::string mutate(const std::string& seed, std::mt19937_64& rng) {
  static const std::vector<std::string> kTokens = {"{", "}", "[", "]", ",", ":", "\"", "0", "-1", "1e309", "null", "true",
                                                   "18446744073709551616", "\"x\"", "{\"a\":", "(", ")", ";", "@activate(",
                                                   "task t() void {", "if (", "else", "return;", "unblock_cmd_stream()"};
  std::string s = seed;
  int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t at = rng() % s.size();
    switch (rng() % 6) {
      case 0: s[at] = char(rng() & 0xff); break;
      case 1: s.erase(at, 1 + rng() % 16); break;
      case 2: s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 32)); break;
      case 3: s.resize(at); break;
      case 4: s.insert(at, kTokens[rng() % kTokens.size()]); break;
      default: std::swap(s[at], s[rng() % s.size()]); break;
    }
  }
  return s;
}

}  // namespace bs::csl::testing
