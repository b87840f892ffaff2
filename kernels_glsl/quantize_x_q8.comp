#version 450
// x [batch, k] f32 -> the two-level int8 form matvec_q4k_i8 reads (int_dot.glsl: per 256 values 40
// uvec4s, per 16 values q1, q2, d / 254 and the sum). Values past k (the last block of a row padded to
// whole blocks) quantize as 0. One invocation per 16 values: dispatch (ceil(batch * ceil(k / 256) * 16 / 64), 1).
//
// Why a kernel of its own rather than quantizing in the matvec's x loads: a matvec workgroup takes ROWS
// rows and every workgroup walks all of x, so quantizing there would repeat it m / ROWS times (~100
// instructions per 16 values, against the ~25 per 16 weights the int8 path saves per row); here it runs
// once per x, and the matvec's x traffic shrinks from 128 to 96 bytes per 32 weights.
#define Q8X_QUANTIZE_ONLY
#include "common.glsl"
#include "params.h"
#include "int_dot.glsl"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { MatvecParams p; };  // k and batch (m and accumulate unused)
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Q { uvec4 xq[]; };

void main() {
  uint nb = (p.k + 255u) / 256u, g = gl_GlobalInvocationID.x;
  if (g >= p.batch * nb * 16u) return;
  uint b = g / (nb * 16u), blk = (g / 16u) % nb, s = g % 16u;
  uint e0 = blk * 256u + q8x_slot_first(s), xb = b * p.k;
  float v[16];
  for (uint i = 0u; i < 16u; ++i) v[i] = e0 + i < p.k ? x[xb + e0 + i] : 0.0;
  uvec4 q1, q2;
  vec2 ds;
  q8x_quantize(vec4(v[0], v[1], v[2], v[3]), vec4(v[4], v[5], v[6], v[7]), vec4(v[8], v[9], v[10], v[11]),
               vec4(v[12], v[13], v[14], v[15]), q1, q2, ds);
  Q8X_STORE(xq, (b * nb + blk) * kQ8xBlockWords, s, q1, q2, ds);
}
