#version 450
// DOPPLER's W4A16 (compressed-tensors int4: 16 bytes of nibbles per group of 32, low nibble first, and
// one scale per group) as Q8_0 blocks (f16 d, int8 codes), on the GPU at load: code = nibble - 8, d = the
// scale as f16. Bit for bit runtime/model/repack.cpp's w4a16_to_q8_0, for every input.
//
// Q8_0 blocks are 34 bytes, so every other one starts mid-word: each invocation writes a pair of blocks,
// 68 bytes = 17 whole words, and no two invocations share a word. An odd last group is written alone,
// its ninth word's upper half zero-filled (the buffer is sized to whole 16-byte units, so that stays
// inside). Dispatch: 256-wide workgroups over (groups + 1) / 2 pairs on a 2-D grid (x * y workgroups;
// x at most 65535).
#include "params.h"
#include "f16_bits.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { RepackW4a16Params p; };
layout(std430, binding = 0) readonly buffer Packed { uint packed[]; };  // 4 words per group
layout(std430, binding = 1) readonly buffer Scales { uint scales[]; };  // F16 / BF16 pairs, or F32
layout(std430, binding = 2) writeonly buffer Out { uint out_words[]; };

// The group's scale as f16 bits, as the host rounds it (float_to_half of the scale read as f32).
uint scale_f16(uint g) {
  if (p.scale_dtype == 2u) return bs_f32_bits_to_f16(scales[g]);
  uint h = (scales[g >> 1] >> (16u * (g & 1u))) & 0xffffu;
  if (p.scale_dtype == 1u) return bs_f32_bits_to_f16(h << 16);  // BF16: the top half of an f32
  // F16 through f32 and back is itself, but for a NaN, which comes back quieted as the host's.
  return (h & 0x7fffu) > 0x7c00u ? (h & 0x8000u) | 0x7e00u : h;
}

// Four int8 codes from the two packed bytes in the low 16 bits of b (low nibble first): each nibble
// into its own byte, then nibble - 8 = the nibble with bit 3 flipped, read as a signed 4-bit value,
// sign-extended to 8 bits (0x08 * 0x1e = 0xf0 stays inside its byte).
uint codes4(uint b) {
  uint v = ((b & 0xfu) | ((b & 0xf0u) << 4) | ((b & 0xf00u) << 8) | ((b & 0xf000u) << 12)) ^ 0x08080808u;
  return v | ((v & 0x08080808u) * 0x1eu);
}

void main() {
  uint pair = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  uint g = 2u * pair;
  if (g >= p.groups) return;
  bool two = g + 1u < p.groups;
  uint o = 17u * pair;
  // Block g: bytes 0-1 d, 2-33 codes, so its code words straddle the output words by 16 bits.
  uint prev = scale_f16(g);
  for (uint w = 0u; w < 4u; ++w) {
    uint u = packed[4u * g + w];
    uint c0 = codes4(u & 0xffffu), c1 = codes4(u >> 16);
    out_words[o + 2u * w] = prev | (c0 << 16);
    out_words[o + 2u * w + 1u] = (c0 >> 16) | (c1 << 16);
    prev = c1 >> 16;
  }
  // Block g + 1 (bytes 34-67): d in the upper half of word 8, then its codes word-aligned.
  out_words[o + 8u] = prev | (two ? scale_f16(g + 1u) << 16 : 0u);
  if (!two) return;
  for (uint w = 0u; w < 4u; ++w) {
    uint u = packed[4u * (g + 1u) + w];
    out_words[o + 9u + 2u * w] = codes4(u & 0xffffu);
    out_words[o + 10u + 2u * w] = codes4(u >> 16);
  }
}
