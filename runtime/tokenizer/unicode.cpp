#include "runtime/tokenizer/unicode.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/ucasemap.h>

#include <memory>

#include "runtime/base/error.h"

namespace bs::tok {

char32_t utf8_next(std::string_view s, size_t& i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  size_t n = utf8_len(c);
  if (i + n > s.size()) n = 1;
  char32_t cp;
  switch (n) {
    case 1: cp = c; break;
    case 2: cp = ((c & 0x1F) << 6) | (b(1) & 0x3F); break;
    case 3: cp = ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F); break;
    default: cp = ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
  i += n;
  return cp;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

// How many bytes of a valid sequence start at s[i]; also reports, through `prefix`, how many
// bytes form a valid-so-far prefix (the unit from_utf8_lossy replaces by one U+FFFD).
static size_t utf8_scan(std::string_view s, size_t i, size_t& prefix) {
  auto at = [&](size_t k) -> int { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : -1; };
  int c = at(0);
  prefix = 0;
  if (c < 0x80) return 1;
  size_t need;
  int lo = 0x80, hi = 0xBF;  // allowed range of the second byte (excludes overlongs, surrogates)
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  prefix = 1;
  for (size_t k = 1; k < need; ++k) {
    int d = at(k);
    int l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (d < l || d > h) return 0;
    prefix = k + 1;
  }
  return need;
}

size_t utf8_valid_len(std::string_view s, size_t i) {
  size_t prefix;
  return utf8_scan(s, i, prefix);
}

bool utf8_is_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_valid_len(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t prefix;
    size_t n = utf8_scan(s, i, prefix);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      i += prefix > 0 ? prefix : 1;
    }
  }
  return out;
}

size_t utf8_incomplete_tail(std::string_view s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    size_t i = s.size() - back;
    auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t prefix;
    size_t n = utf8_scan(s, i, prefix);
    // A lead whose bytes so far are a valid prefix but the sequence is cut short.
    return (n == 0 && prefix == back && utf8_len(c) > back) ? back : 0;
  }
  return 0;
}

ByteLevelMap::ByteLevelMap() {
  // Printable Latin-1 bytes map to themselves; the other 68 bytes go to U+0100 upwards in order.
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    byte_to_char[b] = printable ? char32_t(b) : char32_t(256 + next++);
    utf8_append(byte_to_utf8[b], byte_to_char[b]);
  }
}

int ByteLevelMap::char_to_byte(char32_t cp) const {
  if (cp < 256) {
    return byte_to_char[cp] == cp ? int(cp) : -1;
  }
  if (cp < 256 + 68) {
    for (int b = 0; b < 256; ++b)
      if (byte_to_char[b] == cp) return b;
  }
  return -1;
}

const ByteLevelMap& byte_level_map() {
  static const ByteLevelMap map;
  return map;
}

std::string unicode_normalize(std::string_view s, NormForm form) {
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case NormForm::nfc: n = icu::Normalizer2::getNFCInstance(err); break;
    case NormForm::nfd: n = icu::Normalizer2::getNFDInstance(err); break;
    case NormForm::nfkc: n = icu::Normalizer2::getNFKCInstance(err); break;
    case NormForm::nfkd: n = icu::Normalizer2::getNFKDInstance(err); break;
  }
  if (U_FAILURE(err)) fail_kind(ErrorKind::internal, "ICU normalizer unavailable: {}", u_errorName(err));
  std::string out;
  icu::StringByteSink<std::string> sink(&out, int32_t(s.size()));
  n->normalizeUTF8(0, icu::StringPiece(s.data(), int32_t(s.size())), sink, nullptr, err);
  if (U_FAILURE(err)) fail_kind(ErrorKind::internal, "ICU normalization failed: {}", u_errorName(err));
  return out;
}

// Full Unicode case mapping (ß -> SS), as Python's str.lower/upper.
static std::string case_map(std::string_view s, bool upper) {
  UErrorCode err = U_ZERO_ERROR;
  std::unique_ptr<UCaseMap, void (*)(UCaseMap*)> map(ucasemap_open("", 0, &err), ucasemap_close);
  if (U_FAILURE(err)) fail_kind(ErrorKind::internal, "ICU case map unavailable: {}", u_errorName(err));
  std::string out(s.size() * 3 + 4, '\0');
  auto fn = upper ? ucasemap_utf8ToUpper : ucasemap_utf8ToLower;
  int32_t n = fn(map.get(), out.data(), int32_t(out.size()), s.data(), int32_t(s.size()), &err);
  if (U_FAILURE(err)) fail_kind(ErrorKind::internal, "ICU case mapping failed: {}", u_errorName(err));
  out.resize(size_t(n));
  return out;
}

std::string unicode_lowercase(std::string_view s) { return case_map(s, false); }
std::string unicode_uppercase(std::string_view s) { return case_map(s, true); }

std::string strip_accents(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    char32_t cp = utf8_next(s, i);
    if (u_charType(UChar32(cp)) != U_NON_SPACING_MARK) out.append(s.substr(start, i - start));
  }
  return out;
}

bool is_whitespace(char32_t cp) { return u_isUWhiteSpace(UChar32(cp)); }

}  // namespace bs::tok
