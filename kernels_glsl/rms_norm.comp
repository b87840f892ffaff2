#version 450
// RMSNorm over rows: y = x * rsqrt(mean(x^2) + eps) * (offset + w). One workgroup per row.
// offset is 1 for Gemma's (1 + w) norms, else 0. Accumulates in f32.
// RMS_ACCUMULATE adds the result into y instead (Gemma's sandwich norm on a branch, then the residual).
// OUT_F16 (prefill, before a tensor-core GEMM) also writes y as f16 pairs to binding 3, rounded as the
// to_f16 kernel rounds them (packHalf2x16), so the GEMM's input needs no conversion pass; needs n even.
// F16_ONLY (with OUT_F16): the f16 pairs alone, no binding 2, where nothing reads y in f32 (the GEMMs after
// the layers' norms read the f16 copy): 4 of every 10 bytes the kernel moved were that dead f32 store.
// RMS_PLANES (with OUT_F16; prefill): x is a residual whose split-k GEMM planes (matmul_cm.comp CM_SPLITK, binding 4:
// [parts, rows x n]) were not yet summed into it. Each value is summed as splitk_reduce sums it (x first, then the
// planes in order: the same bits) and written back into x, then normalized: the reduce's dispatch, its barrier and
// one pass over x are gone (RmsPlanesParams).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
#ifdef RMS_PLANES
layout(push_constant) uniform PC { RmsPlanesParams p; };
layout(std430, binding = 0) restrict buffer X { float x[]; };
layout(std430, binding = 4) restrict readonly buffer Planes { float planes[]; };
// Value i of row `base`'s residual with its planes summed in (splitk_reduce's order), written back; i < p.n. For the
// values past the R in registers (main sums those in by plane, every load of a plane issued before any store).
float x_at(uint base, uint i) {
  float v = x[base + i];
  for (uint q = 0; q < p.parts; ++q) v += planes[q * p.rows * p.n + base + i];
  x[base + i] = v;
  return v;
}
#else
layout(push_constant) uniform PC { RmsNormParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
float x_at(uint base, uint i) { return x[base + i]; }
#endif
layout(std430, binding = 1) readonly buffer W { float w[]; };
#ifdef RMS_ACCUMULATE
layout(std430, binding = 2) buffer Y { float y[]; };
#elif !defined(F16_ONLY)
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#endif
#ifdef OUT_F16
layout(std430, binding = 3) writeonly buffer Yh { uint yh[]; };
#endif

// Each invocation holds its values (and their weights) in registers from the first loads to the output,
// all loads issued before the first use: one trip to memory a row. (The first version loaded x twice and
// one value per loop trip; serve's rms_norm_f32_f16, 16 workgroups of a 2048-wide row, took ~10 us a call
// on the H100.) Invocation t takes values t, t + WG, .. as that version did, R of them in registers and
// the rest in a second pass that reads x again, summing in the same order: the outputs are the same bits.
// OUT_F16: an even invocation packs its value with its odd neighbour's (a subgroup shuffle).
const uint R = 16;

#ifdef RMS_ACCUMULATE
#define RMS_STORE(i, v) y[base + (i)] += (v)
#elif defined(F16_ONLY)
#define RMS_STORE(i, v)
#else
#define RMS_STORE(i, v) y[base + (i)] = (v)
#endif

// Value i of the row (held by this invocation) out; in uniform control flow (the shuffle).
void store(uint base, uint i, float o) {
#ifdef OUT_F16
  float next = subgroupShuffleDown(o, 1u);
  if ((i & 1u) == 0u && i + 1u < p.n) yh[(base + i) / 2u] = packHalf2x16(vec2(o, next));
#endif
  if (i < p.n) RMS_STORE(i, o);
}

void main() {
  uint row = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  uint base = row * p.n;
  float v[R], g[R];
  [[unroll]] for (uint r = 0; r < R; ++r) {
    uint i = tid + r * wg;
    v[r] = i < p.n ? x[base + i] : 0.0;
    g[r] = i < p.n ? w[i] : 0.0;
  }
#ifdef RMS_PLANES
  for (uint q = 0; q < p.parts; ++q) {
    uint pb = q * p.rows * p.n + base;
    [[unroll]] for (uint r = 0; r < R; ++r)
      if (tid + r * wg < p.n) v[r] += planes[pb + tid + r * wg];
  }
  [[unroll]] for (uint r = 0; r < R; ++r)
    if (tid + r * wg < p.n) x[base + tid + r * wg] = v[r];
#endif
  float ss = 0.0;
  [[unroll]] for (uint r = 0; r < R; ++r)
    if (tid + r * wg < p.n) ss += v[r] * v[r];
  for (uint i = tid + R * wg; i < p.n; i += wg) {
    float xi = x_at(base, i);  // RMS_PLANES: summed and written back here, read as it is below
    ss += xi * xi;
  }
  float scale = inversesqrt(workgroup_sum(ss) / float(p.n) + p.eps);
  [[unroll]] for (uint r = 0; r < R; ++r)
    if (r * wg < p.n) store(base, tid + r * wg, v[r] * scale * (p.offset + g[r]));  // uniform condition
  for (uint i0 = R * wg; i0 < p.n; i0 += wg) {
    uint i = i0 + tid;
    store(base, i, i < p.n ? x[base + i] * scale * (p.offset + w[i]) : 0.0);
  }
}
