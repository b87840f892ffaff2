// Element and block types of weights and activations, as stored in RDRR and read by the kernels.
// Quantized layouts are GGML's, byte for byte, so models and kernels can be compared with llama.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace bs {

enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_K, Q6_K, I32, Count };

struct DTypeTraits {
  std::string_view name;  // as written in manifest.json
  uint32_t block_elems;   // weights per block (1 for plain types)
  uint32_t block_bytes;   // bytes per block
  bool quantized;
};

// Block layouts (GGML):
//   Q8_0  32 weights, 34 B:  f16 d; int8 qs[32]                          w = d*q
//   Q4_K 256 weights, 144 B: f16 d, dmin; u8 scales[12]; u8 qs[128]      w = d*sc*q - dmin*m (6-bit sc, m)
//   Q6_K 256 weights, 210 B: u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d  w = d*sc*(q-32)
inline constexpr DTypeTraits kDTypeTraits[] = {
    {"F32", 1, 4, false},   {"F16", 1, 2, false},     {"BF16", 1, 2, false}, {"Q8_0", 32, 34, true},
    {"Q4_K", 256, 144, true}, {"Q6_K", 256, 210, true}, {"I32", 1, 4, false},
};
static_assert(sizeof(kDTypeTraits) / sizeof(kDTypeTraits[0]) == size_t(DType::Count));

inline const DTypeTraits& traits(DType t) { return kDTypeTraits[size_t(t)]; }
inline std::string_view dtype_name(DType t) { return traits(t).name; }

// Parses a manifest dtype. DOPPLER writes "Q4_K_M" for row-layout block_q4_K tensors.
inline std::optional<DType> parse_dtype(std::string_view s) {
  for (size_t i = 0; i < size_t(DType::Count); ++i)
    if (kDTypeTraits[i].name == s) return DType(i);
  if (s == "Q4_K_M") return DType::Q4_K;
  return std::nullopt;
}

// Bytes of one row of `elems` weights; nullopt when elems is not a whole number of blocks.
inline std::optional<uint64_t> row_bytes(DType t, uint64_t elems) {
  const auto& tr = traits(t);
  if (elems % tr.block_elems) return std::nullopt;
  return elems / tr.block_elems * tr.block_bytes;
}

}  // namespace bs
