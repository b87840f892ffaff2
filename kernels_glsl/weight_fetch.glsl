// One weight at a time, for kernels that are not bandwidth-bound on the weights (embedding rows,
// matmul tiles that are reused by every token of the tile). The includer defines one of W_F16, W_Q8_0,
// W_Q4K, W_Q6K; this file declares binding WEIGHT_BINDING (0 unless the includer defines it) accordingly and
// weight_at(row, k, e) = W[row, e] of a matrix with rows of k elements. Exact decoding (float(code)), f32 arithmetic
// as the CPU reference.
//
// The binding's range must be a multiple of 4 bytes: a word straddling its end reads as zero under
// robust buffer access. Q4_K rows are 16-byte aligned and read as uvec4; the others as words.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "dequant.glsl"
#ifndef WEIGHT_BINDING
#define WEIGHT_BINDING 0
#endif

#if defined(W_F16)
layout(std430, binding = WEIGHT_BINDING) readonly buffer Wt { f16vec2 wt[]; };
const uint kWeightElemBytes = 4;
uint weight_row_bytes(uint k) { return 2u * k; }
float weight_at(uint row, uint k, uint e) {
  uint i = row * k + e;
  return float(wt[i >> 1][i & 1u]);
}

#elif defined(W_Q4K)
layout(std430, binding = WEIGHT_BINDING) readonly buffer Wt { uvec4 wt[]; };
const uint kWeightElemBytes = 16;
// Rows of k not a multiple of 256 are padded to whole blocks (DOPPLER's "row" layout); e < k only.
uint weight_row_bytes(uint k) { return (k + 255u) / 256u * 144u; }
float weight_at(uint row, uint k, uint e) {
  uint base = (row * ((k + 255u) >> 8) + (e >> 8)) * 9u;
  uint el = e & 255u, sub = el >> 5, byte = 32u * (sub >> 1) + (el & 31u);
  uvec4 hdr = wt[base];
  uint q = (wt[base + 1u + (byte >> 4)][(byte >> 2) & 3u] >> (8u * (byte & 3u) + 4u * (sub & 1u))) & 15u;
  uvec2 sm = q4k_scale_min(hdr.yzw, sub);
  vec2 dm = unpackHalf2x16(hdr.x);
  return dm.x * float(sm.x) * float(q) - dm.y * float(sm.y);
}

#else
layout(std430, binding = WEIGHT_BINDING) readonly buffer Wt { uint wt[]; };
const uint kWeightElemBytes = 4;
uint byte_at(uint o) { return (wt[o >> 2] >> (8u * (o & 3u))) & 0xFFu; }
float sbyte_at(uint o) { return float(int(wt[o >> 2] << (24u - 8u * (o & 3u))) >> 24); }
float half_at(uint o) { return bs_half_at(wt[o >> 2], o); }

#if defined(W_Q8_0)
uint weight_row_bytes(uint k) { return k / 32u * 34u; }
float weight_at(uint row, uint k, uint e) {
  uint bo = (row * (k >> 5) + (e >> 5)) * 34u;
  return half_at(bo) * sbyte_at(bo + 2u + (e & 31u));
}

#elif defined(W_I4)
// DOPPLER's int4 per-row table: nibble - 8, low nibble first, rows of ceil(k / 2) bytes. The row's
// F32 scale is the includer's to apply (embed.comp binds it).
uint weight_row_bytes(uint k) { return (k + 1u) / 2u; }
float weight_at(uint row, uint k, uint e) {
  uint b = byte_at(row * ((k + 1u) / 2u) + (e >> 1));
  return float(int((b >> (4u * (e & 1u))) & 15u) - 8);
}

#elif defined(W_MXFP4)
uint weight_row_bytes(uint k) { return k / 32u * 17u; }
float weight_at(uint row, uint k, uint e) {
  uint bo = (row * (k >> 5) + (e >> 5)) * 17u, j = e & 31u;
  uint q = (byte_at(bo + 1u + (j & 15u)) >> (j >= 16u ? 4u : 0u)) & 15u;
  return kE2m1[q] * bs_e8m0(byte_at(bo));
}

#elif defined(W_Q6K)
// Blocks padded to 224 bytes on the GPU (runtime/base/dtype.h, kQ6KGpuBlockBytes).
uint weight_row_bytes(uint k) { return k / 256u * 224u; }
float weight_at(uint row, uint k, uint e) {
  uint bo = (row * (k >> 8) + (e >> 8)) * 224u;
  uint el = e & 255u, h = el >> 7, qq = (el >> 5) & 3u, l = el & 31u;
  uint lo = (byte_at(bo + 64u * h + 32u * (qq & 1u) + l) >> (4u * (qq >> 1))) & 15u;
  uint hi = (byte_at(bo + 128u + 32u * h + l) >> (2u * qq)) & 3u;
  return half_at(bo + 208u) * sbyte_at(bo + 192u + (el >> 4)) * (float(lo | (hi << 4)) - 32.0);
}
#endif
#endif
