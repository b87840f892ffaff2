#define PCRE2_CODE_UNIT_WIDTH 8
#include "runtime/tokenizer/regex.h"

#include <pcre2.h>

#include "runtime/base/error.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  // Match data is per call: a Tokenizer is shared between threads.
  ~Impl() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, const std::string& what) : impl_(std::make_unique<Impl>()) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    fail("{}: invalid regex at offset {}: {} (pattern: {})", what, offset, reinterpret_cast<char*>(msg),
         pattern);
  }
  // JIT is an optimization only; without it (some sandboxes forbid executable memory) the
  // interpreter gives the same matches.
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);
}

Regex Regex::literal(const std::string& text, const std::string& what) {
  std::string escaped = "\\Q";
  // \Q...\E quotes everything except a literal "\E", which must be split.
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "\\E") == 0) {
      escaped += "\\E\\\\E\\Q";
      ++i;
    } else {
      escaped += text[i];
    }
  }
  escaped += "\\E";
  return Regex(escaped, what);
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view s) const {
  std::vector<std::pair<size_t, size_t>> out;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  size_t pos = 0;
  while (pos <= s.size()) {
    int rc = pcre2_match(impl_->code, subject, s.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc < 0) break;  // PCRE2_ERROR_NOMATCH, or a resource limit: treat the rest as unmatched
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    if (e > b) {
      out.emplace_back(b, e);
      pos = e;
    } else {
      // Empty matches split nothing; step over one code point.
      if (b >= s.size()) break;
      pos = b + utf8_len(static_cast<unsigned char>(s[b]));
    }
  }
  pcre2_match_data_free(md);
  return out;
}

std::string Regex::replace_all(std::string_view s, std::string_view with) const {
  std::string out;
  size_t last = 0;
  for (auto [b, e] : find_all(s)) {
    out.append(s.substr(last, b - last));
    out.append(with);
    last = e;
  }
  out.append(s.substr(last));
  return out;
}

}  // namespace bs::tok
