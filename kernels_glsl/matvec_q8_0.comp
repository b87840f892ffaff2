#version 450
// y = W x for Q8_0 W [m, k] (k % 32 == 0) and f32 x [batch, k]; see matvec.glsl for the epilogue.
// Dispatch: ((m + ROWS - 1) / ROWS, batch). Spec constants: 0 = workgroup size, 1 = ROWS.
//
// A 34-byte block {f16 d; i8 qs[32]} is 2-byte aligned (every other block starts mid-word), so
// weights are read as words and joined with bs_funnel. A block is split into 2 parts of 16 codes;
// consecutive invocations take consecutive parts. x values are loaded once per part and reused for all
// ROWS rows. Choose the workgroup size near k/16 so no invocation idles.
// The weight binding must start at row 0 of the rows it holds and its range must be a multiple of 4
// bytes (pad the allocation): a word straddling the end of a binding reads as zero under robust access.
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
#ifdef MV_MULTI
#include "matvec_multi.glsl"

uint mv_wq(bool up, uint i) {
#ifdef MV_GATED
  if (up) return wu[i];
#endif
  return w[i];
}

// A part: 8 codes of a block (4 parts a block), 3 words joined where the codes start mid-word.
uint mv_nparts() { return p.k / 32u * 4u; }
uvec2 mv_groups(uint part) {
  uint g = (part >> 2) * 8u + (part & 3u) * 2u;
  return uvec2(g, g + 1u);
}
void mv_decode(uint row, bool up, uint part, out vec4 w0, out vec4 w1) {
  uint bo = (row * (p.k / 32u) + (part >> 2)) * 34u;
  float d = bs_half_at(mv_wq(up, bo >> 2), bo);
  uint qo = bo + 2u + 8u * (part & 3u), i = qo >> 2, sh = (qo & 2u) * 8u;
  uint a = mv_wq(up, i), b = mv_wq(up, i + 1u), c = mv_wq(up, min(i + 2u, uint(w.length()) - 1u));
  // 1 + (q + 128)/256 exactly, so 256 f - 384 = q exactly: one rounding per weight.
  w0 = (bs_byte_biased(bs_funnel(a, b, sh)) * 256.0 - 384.0) * d;
  w1 = (bs_byte_biased(bs_funnel(b, c, sh)) * 256.0 - 384.0) * d;
}
#else
#include "matvec.glsl"

// Weight element i of accumulator r's matrix (a branch on r, uniform and resolved once ROWS unrolls).
uint mv_w(uint r, uint i) {
#ifdef MV_GATED
  if (r >= ROWS) return wu[i];
#endif
  return w[i];
}

void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = p.k / 32u, nparts = nb * 2u;
  uint last = uint(w.length()) - 1u;
  uint xb = mv_begin(b) * p.k / 4u;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 1, t = part & 1u;
    uint xo = (blk * 32u + 16u * t) / 4u;
    vec4 x0 = mv_x4(xb, xo), x1 = mv_x4(xb, xo + 1), x2 = mv_x4(xb, xo + 2), x3 = mv_x4(xb, xo + 3);
    float sx = dot(x0 + x1 + x2 + x3, vec4(1.0));
    for (uint r = 0; r < MV_NR; ++r) {
      uint bo = (mv_row(row0, r) * nb + blk) * 34u;
      float d = bs_half_at(mv_w(r, bo >> 2), bo);
      uint qo = bo + 2u + 16u * t, i = qo >> 2, sh = (qo & 2u) * 8u;
      // 16 code bytes span 4 words, or 5 when they start mid-word (the fifth is then in the block).
      uint w0 = mv_w(r, i), w1 = mv_w(r, i + 1u), w2 = mv_w(r, i + 2u), w3 = mv_w(r, i + 3u), w4 = mv_w(r, min(i + 4u, last));
      // f = 1 + (q + 128)/256: sum(q*x) = 256*sum(f*x) - 384*sum(x).
      float f = dot(bs_byte_biased(bs_funnel(w0, w1, sh)), x0) + dot(bs_byte_biased(bs_funnel(w1, w2, sh)), x1) +
                dot(bs_byte_biased(bs_funnel(w2, w3, sh)), x2) + dot(bs_byte_biased(bs_funnel(w3, w4, sh)), x3);
      mv_acc[r] += d * (256.0 * f - 384.0 * sx);
    }
  }
  mv_finish(row0, b);
}
#endif  // MV_MULTI
