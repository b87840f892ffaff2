#version 450
// y = W x for MXFP4 W [m, k] (k % 32 == 0; GGML's block_mxfp4: E8M0 e, 16 bytes of e2m1 codes, weight j in
// the low nibble of byte j and j + 16 in the high one) and f32 x [batch, k]; see matvec.glsl for the epilogue.
// Dispatch: ((m + ROWS - 1) / ROWS, batch). Spec constants: 0 = workgroup size, 1 = ROWS.
//
// A 17-byte block starts at any byte of a word, so an invocation takes one block: it loads the 5 words that
// hold it, joins the 16 code bytes into 4 words (bs_funnel), and decodes each code through the e2m1 table.
// Consecutive invocations take consecutive blocks, so a subgroup's loads are one contiguous run. x values are
// loaded once per block and reused for all ROWS rows. Choose the workgroup size near k / 32.
// The weight binding's range must be a multiple of 4 bytes (pad the allocation).
#include "common.glsl"
#include "params.h"
#include "dequant.glsl"
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(std430, binding = 0) readonly buffer Wt { uint w[]; };
#ifdef MV_GATED
layout(std430, binding = 4) readonly buffer Wu { uint wu[]; };
#endif
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
#include "matvec.glsl"

uint mv_w(uint r, uint i) {
#ifdef MV_GATED
  if (r >= ROWS) return wu[i];
#endif
  return w[i];
}

// Codes 4q .. 4q + 3 (low nibbles) and 4q + 16 .. 4q + 19 (high nibbles) of one code word, times x.
float mxfp4_dot(uint c, vec4 xl, vec4 xh) {
  vec4 lo = vec4(kE2m1[c & 15u], kE2m1[(c >> 8) & 15u], kE2m1[(c >> 16) & 15u], kE2m1[(c >> 24) & 15u]);
  vec4 hi = vec4(kE2m1[(c >> 4) & 15u], kE2m1[(c >> 12) & 15u], kE2m1[(c >> 20) & 15u], kE2m1[c >> 28]);
  return dot(lo, xl) + dot(hi, xh);
}

void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = p.k / 32u;
  uint last = uint(w.length()) - 1u;
  uint xb = mv_begin(b) * p.k / 4u;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint blk = gl_LocalInvocationID.x; blk < nb; blk += gl_WorkGroupSize.x) {
    vec4 xl[4], xh[4];
    for (uint q = 0; q < 4u; ++q) xl[q] = mv_x4(xb, blk * 8u + q), xh[q] = mv_x4(xb, blk * 8u + 4u + q);
    for (uint r = 0; r < MV_NR; ++r) {
      uint bo = (mv_row(row0, r) * nb + blk) * 17u, i = bo >> 2, s0 = bo & 3u;
      uint w0 = mv_w(r, i), w1 = mv_w(r, min(i + 1u, last)), w2 = mv_w(r, min(i + 2u, last)),
           w3 = mv_w(r, min(i + 3u, last)), w4 = mv_w(r, min(i + 4u, last));
      float scale = bs_e8m0((w0 >> (8u * s0)) & 255u);
      // The codes start at byte s0 + 1: word-aligned (w1 .. w4) when s0 = 3, else funneled from w0 .. w4.
      uint sh = 8u * (s0 + 1u);
      uint c0 = s0 == 3u ? w1 : bs_funnel(w0, w1, sh), c1 = s0 == 3u ? w2 : bs_funnel(w1, w2, sh),
           c2 = s0 == 3u ? w3 : bs_funnel(w2, w3, sh), c3 = s0 == 3u ? w4 : bs_funnel(w3, w4, sh);
      mv_acc[r] += scale * (mxfp4_dot(c0, xl[0], xh[0]) + mxfp4_dot(c1, xl[1], xh[1]) + mxfp4_dot(c2, xl[2], xh[2]) +
                            mxfp4_dot(c3, xl[3], xh[3]));
    }
  }
  mv_finish(row0, b);
}
