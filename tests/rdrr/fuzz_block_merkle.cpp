// Fuzz target: a manifest's integrityExtensions.blockMerkle (parse_block_merkle) on arbitrary bytes.
// Built as a libFuzzer binary with -DBLUESHIFT_FUZZ=ON (clang); test_merkle.cpp runs the same
// function on deterministic mutations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/base/error.h"
#include "sharding/merkle.h"

int fuzz_block_merkle(const uint8_t* data, size_t size) {
  auto j = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    auto bm = bs::parse_block_merkle(j, "fuzz.json",
                                     [](const std::string& n) { return !n.empty() && n[0] == 't'; });
    // Whatever was accepted is usable: a positive block size, well-formed roots of known tensors.
    if (bm && (bm->block_size == 0 || bm->block_size > (uint64_t(1) << 40))) __builtin_trap();
    if (bm)
      for (auto& [name, root] : bm->roots)
        if (name.empty() || name[0] != 't' || root.size() != 71 || root.compare(0, 7, "sha256:") != 0)
          __builtin_trap();
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_block_merkle(data, size);
}
#endif
