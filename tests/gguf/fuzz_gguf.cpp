// Fuzz target: the GGUF header parser on arbitrary bytes. Built as a libFuzzer binary with
// -DBLUESHIFT_FUZZ=ON (clang); test_gguf.cpp runs the same function on deterministic mutations.
#include <cstddef>
#include <cstdint>
#include <span>

#include "rdrr/gguf.h"
#include "runtime/base/error.h"

int fuzz_gguf(const uint8_t* data, size_t size) {
  try {
    auto bytes = std::as_bytes(std::span(data, size));
    bs::gguf::Header h = bs::gguf::parse_header(bytes, size, "fuzz.gguf");
    // Whatever was accepted must be self-consistent: every tensor's data inside the file, aligned.
    for (const auto& t : h.tensors)
      if (h.data_offset + t.offset + t.size > size || t.offset % h.alignment || t.ne.empty()) __builtin_trap();
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_gguf(data, size); }
#endif
