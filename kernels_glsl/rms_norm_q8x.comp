#version 450
// RMSNorm of rows into quantize_x_q8's two-level int8 form (int_dot.glsl), with no f32 output: decode's Q6_K head
// (matvec_q6k_wide_i8) reads only that. xn = x * rsqrt(mean(x^2) + eps) * (offset + w), then per 16 values q1, q2,
// (d / 254, sum) as quantize_x_q8 makes them from xn. One workgroup a row (n % 256 == 0); invocation t takes the slots
// t, t + WG, .. (16 values of x and of w each, as vec4s), the first R of them held in registers from their loads to
// the output, the rest loaded again after the sum. It replaces rms_norm_f32 then quantize_x_q8: one dispatch, one
// barrier and the f32 row's round trip fewer.
// Dispatch: (rows, 1).
#define Q8X_QUANTIZE_ONLY
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "params.h"
#include "int_dot.glsl"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(push_constant) uniform PC { RmsNormParams p; };
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer W { vec4 w[]; };
layout(std430, binding = 2) writeonly buffer Q { uvec4 xq[]; };
const uint R = 2u;

// Slot s (of the row's n / 16) scaled and quantized into row `row`'s blocks.
void put(uint row, uint s, vec4 v[4], vec4 g[4], float scale) {
  uvec4 q1, q2;
  vec2 ds;
  q8x_quantize(v[0] * scale * (p.offset + g[0]), v[1] * scale * (p.offset + g[1]), v[2] * scale * (p.offset + g[2]),
               v[3] * scale * (p.offset + g[3]), q1, q2, ds);
  Q8X_STORE(xq, (row * (p.n / 256u) + s / 16u) * kQ8xBlockWords, s % 16u, q1, q2, ds);
}

// The vec4 index (in the row) of slot s's values 4u .. 4u + 3.
uint at(uint s, uint u) { return q8x_row_first(s) / 4u + u; }

void main() {
  uint row = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x, slots = p.n / 16u;
  uint xb = row * (p.n / 4u);
  vec4 v[R][4], g[R][4];
  float ss = 0.0;
  [[unroll]] for (uint r = 0; r < R; ++r) {
    uint s = tid + r * wg;
    [[unroll]] for (uint u = 0; u < 4u; ++u) {
      v[r][u] = s < slots ? x[xb + at(s, u)] : vec4(0.0);
      g[r][u] = s < slots ? w[at(s, u)] : vec4(0.0);
      ss += dot(v[r][u], v[r][u]);
    }
  }
  for (uint s = tid + R * wg; s < slots; s += wg)
    [[unroll]] for (uint u = 0; u < 4u; ++u) {
      vec4 xv = x[xb + at(s, u)];
      ss += dot(xv, xv);
    }
  float scale = inversesqrt(workgroup_sum(ss) / float(p.n) + p.eps);
  [[unroll]] for (uint r = 0; r < R; ++r)
    if (tid + r * wg < slots) put(row, tid + r * wg, v[r], g[r], scale);
  for (uint s = tid + R * wg; s < slots; s += wg) {
    vec4 xv[4], gv[4];
    [[unroll]] for (uint u = 0; u < 4u; ++u) xv[u] = x[xb + at(s, u)], gv[u] = w[at(s, u)];
    put(row, s, xv, gv, scale);
  }
}
