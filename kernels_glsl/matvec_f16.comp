#version 450
// y = W x for f16 W [m, k] (row-major) and f32 x [batch, k]; see matvec.glsl for the epilogue.
// Dispatch: ((m + ROWS - 1) / ROWS, batch). Spec constants: 0 = workgroup size, 1 = ROWS.
//
// Weights are read as f16 pairs (32-bit words), consecutive invocations reading consecutive words,
// so every load of a subgroup is one contiguous run. Each invocation takes 4 words per step (WG
// apart, for loads in flight) and reuses their x values for all ROWS rows. Bindings are read with
// 4-byte loads only: a wider vector straddling the end of an odd-sized binding reads as zero under
// robust buffer access (lavapipe). Odd k (rows not word-aligned; in no model, but legal) takes a
// per-element path. Choose the workgroup size near k/8 (at most 256) so every invocation is busy.
#include "common.glsl"
#ifdef MV_CHAIN
#extension GL_KHR_memory_scope_semantics : require
#endif
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 2;
layout(std430, binding = 0) readonly buffer Wt { f16vec2 w[]; };
#ifdef MV_GATED
layout(std430, binding = 4) readonly buffer Wu { f16vec2 wu[]; };
#endif
#ifdef MV_MULTI
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };  // k % 8 == 0 here
#include "matvec_multi.glsl"

f16vec2 mv_wq(bool up, uint i) {
#ifdef MV_GATED
  if (up) return wu[i];
#endif
  return w[i];
}
// A part: 8 consecutive weights, 4 words (the multi-row variant takes k % 8 == 0 only).
uint mv_nparts() { return p.k / 8u; }
uvec2 mv_groups(uint part) { return uvec2(2u * part, 2u * part + 1u); }
void mv_decode(uint row, bool up, uint part, out vec4 w0, out vec4 w1) {
  uint i = row * (p.k / 2u) + 4u * part;
  w0 = vec4(vec2(mv_wq(up, i)), vec2(mv_wq(up, i + 1u)));
  w1 = vec4(vec2(mv_wq(up, i + 2u)), vec2(mv_wq(up, i + 3u)));
}
#else
layout(std430, binding = 1) readonly buffer X { float x[]; };
#define MV_X_SCALAR
#include "matvec.glsl"

// Weight element i of accumulator r's matrix (a branch on r, uniform and resolved once ROWS unrolls).
f16vec2 mv_w(uint r, uint i) {
#ifdef MV_GATED
  if (r >= ROWS) return wu[i];
#endif
  return w[i];
}

const uint kUnroll = 4;
// MV_W_FIRST: 0 loads each step's x, then its weights; 2 peels the first step and loads its weights before its x (the
// decode's gated FFN: 1B, 3B and 8B f16 +1.3-1.5% on the H200); 1 loads the weights first in every step (lost: 8B f16
// -3.6%). The same products in the same order in each. Which matvecs take which: Model::record_forward's mv_spec. Why
// the peel gains and weights-first in every step loses, with the same loads, is not known: the driver's schedule.
layout(constant_id = 6) const uint MV_W_FIRST = 0;

void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint wg = gl_WorkGroupSize.x, xrow = mv_begin(b);
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  chain_wait();  // a chained consumer: until its producer is done (chain.glsl)
  if ((p.k & 1u) == 0u) {
    uint nw = p.k / 2u, xb = xrow * p.k;
    uint j0 = gl_LocalInvocationID.x;
    if (MV_W_FIRST == 2u) {  // the first step peeled, its weights loaded first (W43's variant 39's gate + up)
      f16vec2 w0[MV_NR * kUnroll];
      for (uint r = 0; r < MV_NR; ++r)
        for (uint u = 0; u < kUnroll; ++u) w0[r * kUnroll + u] = mv_w(r, mv_row(row0, r) * nw + min(j0 + u * wg, nw - 1u));
      if (j0 < nw) {
        vec2 xv[kUnroll];
        for (uint u = 0; u < kUnroll; ++u) xv[u] = j0 + u * wg < nw ? mv_x2(xb, 2u * min(j0 + u * wg, nw - 1u)) : vec2(0.0);
        for (uint r = 0; r < MV_NR; ++r)
          for (uint u = 0; u < kUnroll; ++u) mv_acc[r] += dot(vec2(w0[r * kUnroll + u]), xv[u]);
      }
      j0 += kUnroll * wg;
    }
    for (; j0 < nw; j0 += kUnroll * wg) {
      f16vec2 wv[MV_NR * kUnroll];
      if (MV_W_FIRST == 1u)
        for (uint r = 0; r < MV_NR; ++r)
          for (uint u = 0; u < kUnroll; ++u) wv[r * kUnroll + u] = mv_w(r, mv_row(row0, r) * nw + min(j0 + u * wg, nw - 1u));
      vec2 xv[kUnroll];
      for (uint u = 0; u < kUnroll; ++u) {
        uint j = min(j0 + u * wg, nw - 1u);
        xv[u] = j0 + u * wg < nw ? mv_x2(xb, 2u * j) : vec2(0.0);
      }
      if (MV_W_FIRST != 1u)
        for (uint r = 0; r < MV_NR; ++r)
          for (uint u = 0; u < kUnroll; ++u) wv[r * kUnroll + u] = mv_w(r, mv_row(row0, r) * nw + min(j0 + u * wg, nw - 1u));
      for (uint r = 0; r < MV_NR; ++r)
        for (uint u = 0; u < kUnroll; ++u) mv_acc[r] += dot(vec2(wv[r * kUnroll + u]), xv[u]);
    }
  } else {
    for (uint i = gl_LocalInvocationID.x; i < p.k; i += wg) {
      float xv = mv_x1(xrow * p.k, i);
      for (uint r = 0; r < MV_NR; ++r) {
        uint e = mv_row(row0, r) * p.k + i;
        mv_acc[r] += float(mv_w(r, e >> 1)[e & 1u]) * xv;
      }
    }
  }
  mv_finish(row0, b);
}
#endif  // MV_MULTI
