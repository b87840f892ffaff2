#version 450
// y = W x for f16 W [m, k] (row-major) and f32 x [batch, k]: one workgroup per ROWS rows.
// Each invocation strides over k reading W two halves at a time; partial sums are reduced per row.
// accumulate != 0 adds into y (the residual add folded into the projection's epilogue).
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(push_constant) uniform PC { MatvecParams p; };
layout(std430, binding = 0) readonly buffer Wt { f16vec2 w2[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

void main() {
  uint row0 = gl_WorkGroupID.x * ROWS;
  uint b = gl_WorkGroupID.y;
  uint half_k = p.k / 2;  // k is even for every model blueshift runs; the odd tail is handled below
  for (uint r = 0; r < ROWS; ++r) {
    uint row = row0 + r;
    float acc = 0.0;
    if (row < p.m) {
      uint wbase = row * p.k;  // in halves
      if ((p.k & 1u) == 0u) {
        for (uint i = gl_LocalInvocationID.x; i < half_k; i += gl_WorkGroupSize.x) {
          vec2 wv = vec2(w2[wbase / 2 + i]);
          acc += wv.x * x[b * p.k + 2 * i] + wv.y * x[b * p.k + 2 * i + 1];
        }
      } else {
        for (uint i = gl_LocalInvocationID.x; i < p.k; i += gl_WorkGroupSize.x) {
          uint e = wbase + i;
          f16vec2 pair = w2[e / 2];
          acc += float((e & 1u) == 0u ? pair.x : pair.y) * x[b * p.k + i];
        }
      }
    }
    acc = workgroup_sum(acc);
    if (row < p.m && gl_LocalInvocationID.x == 0) {
      uint o = b * p.m + row;
      y[o] = p.accumulate != 0u ? y[o] + acc : acc;
    }
  }
}
