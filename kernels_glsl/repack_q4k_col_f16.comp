#version 450
// DOPPLER's transposed Q4_K ("col") of W [m, k], stored as k rows of m values each padded to whole
// 256-blocks, as F16 W [m, k] on the GPU at load: out[r, c] = f16(element r of stored row c). Rows
// [row0, row0 + rows) of W per dispatch (the output binding starts at row0; the input is bound whole).
//
// Bit for bit runtime/model/repack.cpp's q4k_col_to_f16 wherever d and dmin are finite: d*sc*q and
// dmin*m are exact in f32 (11 + 6 + 4 and 11 + 6 significant bits), so the f32 value is the exact
// difference rounded once, FMA or not, and bs_f32_bits_to_f16 rounds it to f16 as the host does. d and
// dmin are decoded in integer arithmetic (f16 subnormal scales must not be flushed).
//
// One invocation per output word: elements 2i and 2i + 1 of the chunk's rows, so an odd k needs no
// special case; the word past an odd element count is zero-filled (buffers are whole 16-byte units).
// Dispatch: 256-wide workgroups over (rows * k + 1) / 2 words on a 2-D grid.
#include "params.h"
#include "dequant.glsl"
#include "f16_bits.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { RepackQ4kColParams p; };
layout(std430, binding = 0) readonly buffer Blocks { uvec4 blocks[]; };  // 144-byte blocks: 9 uvec4
layout(std430, binding = 1) writeonly buffer Out { uint out_words[]; };

uint element_f16(uint e) {
  uint r = p.row0 + e / p.k, c = e % p.k;
  uint base = (c * p.blocks_per_col + (r >> 8)) * 9u;
  uint el = r & 255u, sub = el >> 5, byte_index = 32u * (sub >> 1) + (el & 31u);
  uvec4 hdr = blocks[base];
  uint q = (blocks[base + 1u + (byte_index >> 4)][(byte_index >> 2) & 3u] >> (8u * (byte_index & 3u) + 4u * (sub & 1u))) & 15u;
  uvec2 sm = q4k_scale_min(hdr.yzw, sub);
  float d = uintBitsToFloat(bs_f16_bits_to_f32(hdr.x & 0xffffu));
  float dmin = uintBitsToFloat(bs_f16_bits_to_f32(hdr.x >> 16));
  float w = d * float(sm.x) * float(q) - dmin * float(sm.y);
  return bs_f32_bits_to_f16(floatBitsToUint(w));
}

void main() {
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
  uint n = p.rows * p.k;
  if (i >= (n + 1u) / 2u) return;
  uint lo = element_f16(2u * i);
  uint hi = 2u * i + 1u < n ? element_f16(2u * i + 1u) : 0u;
  out_words[i] = lo | (hi << 16);
}
