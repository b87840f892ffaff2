// UTF-8 and Unicode helpers the tokenizer needs: code-point iteration, lossy repair of invalid
// UTF-8 (the same replacement rule as Rust's String::from_utf8_lossy, which HF tokenizers use),
// the GPT-2 byte <-> printable-char map of byte-level BPE, and ICU-backed normalization forms.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bs::tok {

// Length in bytes of the UTF-8 sequence that starts with `lead`, or 1 for a stray byte.
inline size_t utf8_len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// Decodes the code point at s[i] (s must be valid UTF-8) and advances i past it.
char32_t utf8_next(std::string_view s, size_t& i);
void utf8_append(std::string& out, char32_t cp);

// Length of the longest valid UTF-8 sequence at s[i] (0 when s[i] does not start one).
size_t utf8_valid_len(std::string_view s, size_t i);
bool utf8_is_valid(std::string_view s);
// Replaces each maximal invalid subsequence by U+FFFD, exactly as String::from_utf8_lossy does.
std::string utf8_lossy(std::string_view s);
// Bytes at the end of s that start a UTF-8 sequence not yet complete (0..3); a stream printer
// holds these back until the rest arrives.
size_t utf8_incomplete_tail(std::string_view s);

// GPT-2's byte-level alphabet: every byte maps to a printable code point (e.g. ' ' -> 'Ġ').
struct ByteLevelMap {
  std::array<char32_t, 256> byte_to_char{};
  std::array<std::string, 256> byte_to_utf8;
  ByteLevelMap();
  // The byte for a mapped code point, or -1 when cp is not in the alphabet.
  int char_to_byte(char32_t cp) const;
};
const ByteLevelMap& byte_level_map();

enum class NormForm { nfc, nfd, nfkc, nfkd };
std::string unicode_normalize(std::string_view s, NormForm form);
std::string unicode_lowercase(std::string_view s);
std::string unicode_uppercase(std::string_view s);
// Drops combining marks (general category Mn), as HF's StripAccents does after NFD.
std::string strip_accents(std::string_view s);
// Unicode White_Space, as Rust's char::is_whitespace.
bool is_whitespace(char32_t cp);

}  // namespace bs::tok
