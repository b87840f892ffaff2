#version 450
// DOPPLER's W4A16 (compressed-tensors int4: 16 bytes of nibbles per group of 32, low nibble first, and
// one scale per group) as Q8_0 blocks (f16 d, int8 codes), on the GPU at load: code = nibble - 8, d = the
// scale as f16. Bit for bit runtime/model/repack.cpp's w4a16_to_q8_0, for every input.
//
// Q8_0 blocks are 34 bytes, so every other one starts mid-word: each invocation writes one whole output
// word (bytes 4i .. 4i + 3), assembled from the groups it overlaps, and no two invocations share a word.
// A word past the last block's end (34 * groups not a multiple of 4) is zero-filled; the buffer is sized
// to whole 16-byte units, so it stays inside. Dispatch: 256-wide workgroups over (34 * groups + 3) / 4
// words on a 2-D grid (x * y workgroups; x at most 65535).
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

uint out_byte(uint b) {
  uint g = b / 34u, o = b - 34u * g;
  if (g >= p.groups) return 0u;
  if (o < 2u) return (scale_f16(g) >> (8u * o)) & 0xffu;
  uint c = o - 2u;  // code c of the group: nibble c & 1 of byte c / 2
  uint byte_index = 16u * g + (c >> 1);
  uint v = (packed[byte_index >> 2] >> (8u * (byte_index & 3u) + 4u * (c & 1u))) & 15u;
  return (v - 8u) & 0xffu;  // the signed code in two's complement
}

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  if (i >= (34u * p.groups + 3u) / 4u) return;
  uint b = 4u * i;
  out_words[i] = out_byte(b) | (out_byte(b + 1u) << 8) | (out_byte(b + 2u) << 16) | (out_byte(b + 3u) << 24);
}
