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
#ifdef MV_NORM
layout(push_constant) uniform PC { MatvecNormParams p; };
#else
layout(push_constant) uniform PC { MatvecParams p; };
#endif
layout(std430, binding = 0) readonly buffer Wt { uint w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
#include "matvec.glsl"

void main() {
  uint row0 = gl_WorkGroupID.x * ROWS, b = gl_WorkGroupID.y;
  uint nb = p.k / 32u, nparts = nb * 2u;
  uint last = uint(w.length()) - 1u;
  for (uint r = 0; r < ROWS; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 1, t = part & 1u;
    uint xo = (b * p.k + blk * 32u + 16u * t) / 4u;
    vec4 x0 = mv_x4(xo), x1 = mv_x4(xo + 1), x2 = mv_x4(xo + 2), x3 = mv_x4(xo + 3);
    float sx = dot(x0 + x1 + x2 + x3, vec4(1.0));
    for (uint r = 0; r < ROWS; ++r) {
      uint row = min(row0 + r, p.m - 1u);  // rows past m compute a duplicate that is never written
      uint bo = (row * nb + blk) * 34u;
      float d = bs_half_at(w[bo >> 2], bo);
      uint qo = bo + 2u + 16u * t, i = qo >> 2, sh = (qo & 2u) * 8u;
      // 16 code bytes span 4 words, or 5 when they start mid-word (the fifth is then in the block).
      uint w0 = w[i], w1 = w[i + 1u], w2 = w[i + 2u], w3 = w[i + 3u], w4 = w[min(i + 4u, last)];
      // f = 1 + (q + 128)/256: sum(q*x) = 256*sum(f*x) - 384*sum(x).
      float f = dot(bs_byte_biased(bs_funnel(w0, w1, sh)), x0) + dot(bs_byte_biased(bs_funnel(w1, w2, sh)), x1) +
                dot(bs_byte_biased(bs_funnel(w2, w3, sh)), x2) + dot(bs_byte_biased(bs_funnel(w3, w4, sh)), x3);
      mv_acc[r] += d * (256.0 * f - 384.0 * sx);
    }
  }
  mv_finish(row0, b);
}
