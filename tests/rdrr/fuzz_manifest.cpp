// Fuzz target: manifest.json parsing and validation on arbitrary bytes. Built as a libFuzzer binary
// with -DBLUESHIFT_FUZZ=ON (clang); test_fuzz.cpp runs the same function on deterministic mutations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rdrr/hf_config.h"
#include "rdrr/manifest.h"
#include "runtime/base/error.h"

int fuzz_manifest(const uint8_t* data, size_t size) {
  try {
    bs::Manifest m = bs::parse_manifest(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    // Whatever was accepted must be self-consistent: every span inside its shard.
    for (auto& t : m.tensors)
      for (auto& s : t.spans)
        if (s.shard >= m.shards.size() || s.offset + s.size > m.shards[s.shard].size) __builtin_trap();
    // A config accepted from DOPPLER's inference block holds the invariants the runtime relies on.
    if (m.config) {
      try {
        bs::validate_config(*m.config, "fuzz.json");
      } catch (const bs::Error&) {
        __builtin_trap();
      }
    }
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_manifest(data, size); }
#endif
