#version 450
// RMSNorm over rows: y = x * rsqrt(mean(x^2) + eps) * (offset + w). One workgroup per row.
// offset is 1 for Gemma's (1 + w) norms, else 0. Accumulates in f32.
// RMS_ACCUMULATE adds the result into y instead (Gemma's sandwich norm on a branch, then the residual).
// OUT_F16 (prefill, before a tensor-core GEMM) also writes y as f16 pairs to binding 3, rounded as the
// to_f16 kernel rounds them (packHalf2x16), so the GEMM's input needs no conversion pass; needs n even.
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(push_constant) uniform PC { RmsNormParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
#ifdef RMS_ACCUMULATE
layout(std430, binding = 2) buffer Y { float y[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif
#ifdef OUT_F16
layout(std430, binding = 3) writeonly buffer Yh { uint yh[]; };
#endif

void main() {
  uint row = gl_WorkGroupID.x;
  uint base = row * p.n;
  float ss = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) ss += x[base + i] * x[base + i];
  float scale = inversesqrt(workgroup_sum(ss) / float(p.n) + p.eps);
#ifdef OUT_F16
  for (uint j = gl_LocalInvocationID.x; j < p.n / 2u; j += gl_WorkGroupSize.x) {
    uint i = 2u * j;
    vec2 v = vec2(x[base + i], x[base + i + 1u]) * scale * (p.offset + vec2(w[i], w[i + 1u]));
    y[base + i] = v.x;
    y[base + i + 1u] = v.y;
    yh[base / 2u + j] = packHalf2x16(v);
  }
#else
  for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x)
#ifdef RMS_ACCUMULATE
    y[base + i] += x[base + i] * scale * (p.offset + w[i]);
#else
    y[base + i] = x[base + i] * scale * (p.offset + w[i]);
#endif
#endif
}
