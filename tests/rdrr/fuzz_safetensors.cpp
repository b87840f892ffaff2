// Fuzz target: the safetensors header parser on arbitrary bytes. Built as a libFuzzer binary with
// -DBLUESHIFT_FUZZ=ON (clang); test_fuzz.cpp runs the same function on deterministic mutations.
#include <cstddef>
#include <cstdint>

#include "rdrr/safetensors.h"
#include "runtime/base/error.h"

int fuzz_safetensors(const uint8_t* data, size_t size) {
  try {
    auto h = bs::parse_safetensors_header({reinterpret_cast<const std::byte*>(data), size}, "fuzz.safetensors");
    // Whatever was accepted must lie inside the input.
    for (auto& e : h.entries)
      if (h.data_start + e.end > size || e.begin > e.end) __builtin_trap();
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_safetensors(data, size); }
#endif
