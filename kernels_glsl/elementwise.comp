#version 450
// Small elementwise kernels, one variant each (variants.cmake): gated activation (also with an f16 copy),
// bias add, softcap, scale by a one-element buffer, f32 -> f16 conversion, the sum of a split-k GEMM's parts.
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256) in;

#if defined(GATED_ACT)
layout(push_constant) uniform PC { GatedActParams p; };
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer U { float u[]; };
layout(std430, binding = 2) writeonly buffer H { float h[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  h[i] = bs_act(g[i], p.act) * u[i];
}
#elif defined(GATED_ACT_F16)
// The gated activation before the down projection's tensor-core GEMM: h in f32 and, two values per
// invocation, as f16 pairs (binding 3, packHalf2x16 as to_f16), so the GEMM's input needs no conversion
// pass. Needs n even.
layout(push_constant) uniform PC { GatedActParams p; };
layout(std430, binding = 0) readonly buffer G { vec2 g2[]; };
layout(std430, binding = 1) readonly buffer U { vec2 u2[]; };
// H_F16_ONLY: the f16 pairs alone, no binding 2, where nothing reads h in f32 (the down projection's GEMM
// reads the f16 copy): a quarter of the bytes the kernel moved.
#ifndef H_F16_ONLY
layout(std430, binding = 2) writeonly buffer H { vec2 h2[]; };
#endif
layout(std430, binding = 3) writeonly buffer Hh { uint hh[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n / 2u) return;
  vec2 g = g2[i], u = u2[i];
  vec2 h = vec2(bs_act(g.x, p.act), bs_act(g.y, p.act)) * u;
#ifndef H_F16_ONLY
  h2[i] = h;
#endif
  hh[i] = packHalf2x16(h);
}
#elif defined(ADD_BIAS)
layout(push_constant) uniform PC { BiasParams p; };
layout(std430, binding = 0) buffer Y { float y[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
void main() {
  uint i = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y;
  if (i < p.n) y[r * p.n + i] += b[i];
}
#elif defined(SOFTCAP)
layout(push_constant) uniform PC { SoftcapParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < p.n) x[i] = p.cap * tanh(x[i] / p.cap);
}
#elif defined(SCALE_BY)
layout(push_constant) uniform PC { ScaleByParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float s[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < p.n) x[i] *= s[0];
}
#elif defined(TO_F16)
// Four values per invocation (one 16-byte load, one 8-byte store), rounded to nearest even.
layout(push_constant) uniform PC { ToF16Params p; };
layout(std430, binding = 0) readonly buffer X { vec4 x4[]; };
layout(std430, binding = 1) writeonly buffer Y { uvec2 y4[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n / 4u) return;
  vec4 v = x4[i];
  y4[i] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
}
#elif defined(SPLITK_REDUCE)
// The planes of a split-k GEMM (matmul_cm.comp CM_SPLITK) summed into Y, plane 0 first: the same sum on every run.
layout(push_constant) uniform PC { SplitKParams p; };
layout(std430, binding = 0) readonly buffer W { float ws[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  float v = p.accumulate != 0u ? y[i] : 0.0;
  for (uint q = 0; q < p.parts; ++q) v += ws[q * p.n + i];
  y[i] = v;
}
#endif
