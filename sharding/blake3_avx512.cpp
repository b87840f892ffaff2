// BLAKE3 kernel: 16 inputs per call, compiled for AVX-512F (sharding/CMakeLists.txt sets the flags;
// blake3.cpp calls it only on a CPU that has it).
#include <algorithm>

#include "sharding/blake3_lanes.h"

namespace bs::blake3_detail {

void hash_many_avx512(const uint8_t* const* inputs, size_t n, size_t blocks, const uint32_t* key,
                      uint64_t counter, bool increment, uint8_t flags, uint8_t flags_start, uint8_t flags_end,
                      uint32_t* out, Blake3Variant variant) {
  hash_many_lanes<U32x16, U8x64, false>(inputs, n, blocks, key, counter, increment, flags, flags_start,
                                        flags_end, out, variant);
}

}  // namespace bs::blake3_detail
