// Fuzz target: tokenizer.json loading (streamed SAX reader and the DOM path) on arbitrary bytes,
// then encode/decode on whatever loads. Built as a libFuzzer binary with -DBLUESHIFT_FUZZ=ON
// (clang); test_fuzz.cpp runs the same function on deterministic mutations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/tokenizer_file.h"
#include "runtime/tokenizer/unicode.h"

int fuzz_tokenizer_json(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto exercise = [](const bs::tok::Tokenizer& t) {
    for (std::string_view s : {"Hello world", " a\xC3\xA9\xF0\x9F\x98\x80 12 <s>", "\xFF\xFE", ""}) {
      std::vector<int32_t> ids = t.encode(s, true);
      for (int32_t id : ids)
        if (id < 0 || id >= t.vocab_size()) __builtin_trap();
      if (!bs::tok::utf8_is_valid(t.decode(ids))) __builtin_trap();
    }
  };
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    exercise(bs::tok::Tokenizer::from_json(j, nullptr, "fuzz.json"));
  } catch (const nlohmann::json::exception&) {  // not JSON at all: the parser's business
  } catch (const bs::Error&) {
  }
  try {
    bs::tok::TokenizerFile f = bs::tok::read_tokenizer_file(text, "fuzz.json");
    (void)f;
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_tokenizer_json(data, size); }
#endif
