// Element and block types of weights and activations, as stored in RDRR and read by the kernels.
// Quantized layouts are GGML's, byte for byte, so models and kernels can be compared with llama.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace bs {

enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_K, Q6_K, I32, I64, W4A16, I4, MXFP4, U8, Count };

struct DTypeTraits {
  std::string_view name;  // as written in manifest.json
  uint32_t block_elems;   // weights per block (1 for plain types)
  uint32_t block_bytes;   // bytes per block
  bool quantized;
  bool in_manifest;       // a manifest may name it in "dtype" (I4 is only reached through sourceTransform)
};

// Block layouts (GGML):
//   Q8_0  32 weights, 34 B:  f16 d; int8 qs[32]                          w = d*q
//   Q4_K 256 weights, 144 B: f16 d, dmin; u8 scales[12]; u8 qs[128]      w = d*sc*q - dmin*m (6-bit sc, m)
//   Q6_K 256 weights, 210 B: u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d  w = d*sc*(q-32)
//   MXFP4 32 weights, 17 B: u8 e (E8M0); u8 qs[16], weight j in the low nibble of qs[j], j+16 in the high one;
//         w = e2m1(q) * 2^(e-127), e2m1 = {0, .5, 1, 1.5, 2, 3, 4, 6} and their negatives (bit 3 = sign).
//         GGML's block_mxfp4; GPT-OSS ships its experts so (its *_blocks / *_scales, nibbles reordered)
// U8: raw bytes of a checkpoint (GPT-OSS's *_blocks / *_scales); never a weight the kernels read.
// DOPPLER's own, repacked at load since no kernel reads them directly (W4A16 on the GPU:
// runtime/model/gpu_repack.h; the host forms in runtime/model/repack.h):
//   W4A16 32 weights, 16 B: u8 qs[16], weight 2i in the low nibble of qs[i], 2i+1 in the high one;
//         w = (q-8)*s with s from a companion scale tensor [rows, groups] (compressed-tensors int4)
//   I4     2 weights, 1 B: the same nibble order; w = (q-8)*s[row], one F32 scale per row (DOPPLER's
//         int4_per_row per-layer-embedding table, "F16" in the manifest plus a sourceTransform)
inline constexpr DTypeTraits kDTypeTraits[] = {
    {"F32", 1, 4, false, true},      {"F16", 1, 2, false, true},      {"BF16", 1, 2, false, true},
    {"Q8_0", 32, 34, true, true},    {"Q4_K", 256, 144, true, true},  {"Q6_K", 256, 210, true, true},
    {"I32", 1, 4, false, true},      {"I64", 1, 8, false, true},      {"W4A16", 32, 16, true, true},
    {"INT4", 2, 1, true, false},     {"MXFP4", 32, 17, true, true},   {"U8", 1, 1, false, false},
};
static_assert(sizeof(kDTypeTraits) / sizeof(kDTypeTraits[0]) == size_t(DType::Count));

inline const DTypeTraits& traits(DType t) { return kDTypeTraits[size_t(t)]; }
inline std::string_view dtype_name(DType t) { return traits(t).name; }

// Parses a manifest dtype. DOPPLER writes "Q4_K_M" for row-layout block_q4_K tensors.
inline std::optional<DType> parse_dtype(std::string_view s) {
  for (size_t i = 0; i < size_t(DType::Count); ++i)
    if (kDTypeTraits[i].name == s && kDTypeTraits[i].in_manifest) return DType(i);
  if (s == "Q4_K_M") return DType::Q4_K;
  return std::nullopt;
}

// Bytes of one row of `elems` weights; nullopt when elems is not a whole number of blocks.
inline std::optional<uint64_t> row_bytes(DType t, uint64_t elems) {
  const auto& tr = traits(t);
  if (elems % tr.block_elems) return std::nullopt;
  return elems / tr.block_elems * tr.block_bytes;
}

// Whole blocks holding `elems` weights (the last one padded); elems < 2^63, so no overflow.
inline uint64_t padded_blocks(DType t, uint64_t elems) {
  return elems / traits(t).block_elems + (elems % traits(t).block_elems != 0);
}
// Bytes of a row of `elems` weights padded to whole blocks: DOPPLER's Q4_K "row" layout stores
// [2048, 640] as 2048 rows of 3 blocks (the last 128 values of each row's third block are padding).
inline uint64_t padded_row_bytes(DType t, uint64_t elems) { return padded_blocks(t, elems) * traits(t).block_bytes; }

// On the GPU a Q6_K block takes 224 bytes: GGML's 210, then 14 zero bytes. Every block then starts 16-byte
// aligned, and so do its ql (+0), qh (+128) and scales (+192), which the kernels read as uvec4s (GGML's 210-byte
// blocks are 2-byte aligned at best: word loads joined by funnel shifts, 12 loads for 16 weights in the prefill
// GEMM's chunk against Q4_K's 2). The loader pads them (Model's constructor); every other dtype is as stored.
inline constexpr uint64_t kQ6KGpuBlockBytes = 224;
inline uint64_t gpu_block_bytes(DType t) { return t == DType::Q6_K ? kQ6KGpuBlockBytes : traits(t).block_bytes; }
inline uint64_t gpu_row_bytes(DType t, uint64_t elems) { return padded_blocks(t, elems) * gpu_block_bytes(t); }
// A tensor's `bytes` (stored form) as the GPU holds it: Q6_K blocks padded to kQ6KGpuBlockBytes; `out` holds
// gpu_bytes(t, bytes.size()) bytes.
inline uint64_t gpu_bytes(DType t, uint64_t stored) {
  return t == DType::Q6_K ? stored / traits(t).block_bytes * kQ6KGpuBlockBytes : stored;
}
inline void q6k_pad_blocks(const std::byte* in, uint64_t stored, std::byte* out) {
  const uint64_t b = traits(DType::Q6_K).block_bytes;
  for (uint64_t i = 0; i < stored / b; ++i) {
    std::memcpy(out + i * kQ6KGpuBlockBytes, in + i * b, b);
    std::memset(out + i * kQ6KGpuBlockBytes + b, 0, kQ6KGpuBlockBytes - b);
  }
}

// How a blocked tensor's elements fill its blocks (DOPPLER's "layout" key; plain types are dense
// whatever the key says).
enum class Layout : uint8_t {
  row,   // each row (the last dimension) padded to whole blocks ("row", and blueshift's own tensors)
  flat,  // all elements back to back, only the last block padded (DOPPLER without a layout key, e.g.
         // LFM2's conv weight [2048, 1, 3] Q4_K: 24 blocks for its 6144 values)
  col,   // DOPPLER's transposed Q4_K ("col"): W^T [in, out] stored as rows of `out`, each padded
};
inline std::string_view layout_name(Layout l) { return l == Layout::row ? "row" : l == Layout::flat ? "flat" : "col"; }

}  // namespace bs
