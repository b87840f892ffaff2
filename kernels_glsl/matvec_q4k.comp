#version 450
// y = W x for Q4_K W [m, k] (k % 4 == 0) and f32 x [batch, k]; see matvec.glsl for the epilogue. A row
// whose k is not a multiple of 256 is padded to whole blocks (DOPPLER's "row" layout: [2048, 640] is
// 2048 rows of 3 blocks): rows are ceil(k / 256) blocks apart, parts wholly in the padding are skipped
// (no bytes read for them), and x past k reads as 0 in a part that straddles k, so whatever the padding
// codes hold never meets x (or the next batch row's x).
// Dispatch: ((m + ROWS - 1) / ROWS, batch). Spec constants: 0 = workgroup size, 1 = ROWS.
//
// Bandwidth layout: a 144-byte block is 9 uvec4s (header: d, dmin, 12 scale bytes; then 8 of qs) and
// rows are 16-byte aligned, so all weight loads are 16 B. A block is split into 8 parts, one per
// qs uvec4: part t covers 16 elements of sub-block 2(t/2) (low nibbles) and the same 16 of sub-block
// 2(t/2)+1 (high nibbles). Consecutive invocations take consecutive parts, so a subgroup reads whole
// blocks contiguously. Each invocation loads its 32 x values once and reuses them for all ROWS rows
// (x traffic from cache is then 1/ROWS of what one row per workgroup would need). Choose the workgroup
// size near k/32 (the number of parts) so no invocation idles: 64 for k = 2048.
//
// ALU, not memory, bounded the first version at ~69% of peak (2 integer ops per weight, shift and mask,
// on Hopper's half-rate integer pipe, plus a divergent scale decode). Decoding here (dequant.glsl
// bs_q4_lo/bs_q4_hi): each nibble is masked where it lies (one shift per word moves the top three
// out of the exponent's way) and OR-ed into the float 2^23, so float - 2^23 = q * 2^bitpos exactly;
// the x values are pre-scaled by 2^-bitpos once per part and reused for every row. One integer op and
// two float ops per weight; the 2 + 2 scales and mins of a part come packed from one branch-free
// select (q4k_scales_pair).
#include "common.glsl"
#include "params.h"
#include "dequant.glsl"
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(std430, binding = 0) readonly buffer Wt { uvec4 w[]; };
#ifdef MV_GATED
layout(std430, binding = 4) readonly buffer Wu { uvec4 wu[]; };
#endif
#ifdef MV_X_Q8
// MV_X_Q8 (matvec_q4k_i8): x quantized by quantize_x_q8 (int_dot.glsl), the codes meet it in int8 dot products.
#include "int_dot.glsl"
layout(std430, binding = 1) readonly buffer X { uvec4 xq[]; };
#else
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
#endif
#ifdef MV_MULTI
#include "matvec_multi.glsl"

uvec4 mv_wq(bool up, uint i) {
#ifdef MV_GATED
  if (up) return wu[i];
#endif
  return w[i];
}

// A part is one word of a block's qs: the low nibbles are elements 64j + 4(wi & 7) + 0..3 of the block
// (sub-block 2j, j = wi / 8), the high nibbles the same + 32 (sub-block 2j + 1). 32 parts a block;
// consecutive invocations read consecutive words and share the block's header.
uint mv_nparts() { return (p.k + 255u) / 256u * 32u; }
uvec2 mv_groups(uint part) {
  uint wi = part & 31u, g = (part >> 5) * 64u + 16u * (wi >> 3) + (wi & 7u);
  return uvec2(g, g + 8u);
}
void mv_decode(uint row, bool up, uint part, out vec4 w0, out vec4 w1) {
  uint wi = part & 31u, base = (row * ((p.k + 255u) / 256u) + (part >> 5)) * 9u;
  uvec4 hdr = mv_wq(up, base);
  uint q = mv_wq(up, base + 1u + (wi >> 2))[wi & 3u];
  vec2 dm = unpackHalf2x16(hdr.x);
  vec4 sm = q4k_scales_pair(hdr.yzw, wi >> 3);
  // bs_q4_lo/hi are exact codes times powers of 2, cancelled in the scale: one rounding per weight.
  w0 = bs_q4_lo(q) * (dm.x * sm.x * kQ4LoScale) - dm.y * sm.z;
  w1 = bs_q4_hi(q) * (dm.x * sm.y * kQ4HiScale) - dm.y * sm.w;
}
#else
#include "matvec.glsl"

// Weight element i of accumulator r's matrix (a branch on r, uniform and resolved once ROWS unrolls).
uvec4 mv_w(uint r, uint i) {
#ifdef MV_GATED
  if (r >= ROWS) return wu[i];
#endif
  return w[i];
}

#ifdef MV_X_Q8
// Per part and row: 8 + 8 packed dot products, 8 (i8mx) or 12 mask / shift ops, two conversions and the
// scales (int_dot.glsl), against 32 LOP3 + 32 FADD + 32 FFMA in the float form below. On the H100 back to
// back: 1.7-2.1 TB/s float -> 2.2-2.6 TB/s (i8dot_run.sh, 8B shapes), the single-level bound 2.6-2.9.
void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = (p.k + 255u) / 256u, nparts = nb * 8u, xb = mv_begin(b) * nb * kQ8xBlockWords;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 3, t = part & 7u, j = t >> 1;
    if (blk * 256u + 64u * j + 16u * (t & 1u) >= p.k) continue;  // padding only
    uint xo = xb + blk * kQ8xBlockWords;
    uvec4 q1a = xq[xo + 2u * t], q2a = xq[xo + 2u * t + 1u], q1b = xq[xo + 2u * t + 16u], q2b = xq[xo + 2u * t + 17u];
    uvec4 sa4 = xq[xo + 32u + (t >> 1)], sb4 = xq[xo + 36u + (t >> 1)];
    vec2 dsa = uintBitsToFloat((t & 1u) != 0u ? sa4.zw : sa4.xy), dsb = uintBitsToFloat((t & 1u) != 0u ? sb4.zw : sb4.xy);
    dsb.x *= kQ8xHiStep;
    for (uint r = 0; r < MV_NR; ++r) {
      uint base = (mv_row(row0, r) * nb + blk) * 9u;
      uvec4 hdr = mv_w(r, base), q = mv_w(r, base + 1u + t);
      vec2 dm = unpackHalf2x16(hdr.x);
      vec4 sm = q4k_scales_pair(hdr.yzw, j);
      float fa = dsa.x * float(q8x_dot16(q4_nib_lo(q), q1a, q2a)), fb = dsb.x * float(q8x_dot16_hi(q4_nib_hi(q), q1b, q2b));
      mv_acc[r] += dm.x * (sm.x * fa + sm.y * fb) - dm.y * (sm.z * dsa.y + sm.w * dsb.y);
    }
  }
  mv_finish(row0, b);
}
#else
void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = (p.k + 255u) / 256u, nparts = nb * 8u, kv = p.k / 4u;
  uint xb = mv_begin(b) * p.k / 4u;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 3, t = part & 7u, j = t >> 1;
    uint xo = (blk * 256u + 64u * j + 16u * (t & 1u)) / 4u;
    if (xo >= kv) continue;  // padding only
    vec4 xa0 = mv_x4m(xb, xo, kv), xa1 = mv_x4m(xb, xo + 1, kv), xa2 = mv_x4m(xb, xo + 2, kv), xa3 = mv_x4m(xb, xo + 3, kv);
    vec4 xb0 = mv_x4m(xb, xo + 8, kv), xb1 = mv_x4m(xb, xo + 9, kv), xb2 = mv_x4m(xb, xo + 10, kv), xb3 = mv_x4m(xb, xo + 11, kv);
    float sa = dot(xa0 + xa1 + xa2 + xa3, vec4(1.0)), sb = dot(xb0 + xb1 + xb2 + xb3, vec4(1.0));
    xa0 *= kQ4LoScale, xa1 *= kQ4LoScale, xa2 *= kQ4LoScale, xa3 *= kQ4LoScale;
    xb0 *= kQ4HiScale, xb1 *= kQ4HiScale, xb2 *= kQ4HiScale, xb3 *= kQ4HiScale;
    for (uint r = 0; r < MV_NR; ++r) {
      uint base = (mv_row(row0, r) * nb + blk) * 9u;
      uvec4 hdr = mv_w(r, base), q = mv_w(r, base + 1u + t);
      vec2 dm = unpackHalf2x16(hdr.x);
      vec4 sm = q4k_scales_pair(hdr.yzw, j);  // scale and min of sub-blocks 2j, 2j + 1
      float fa = dot(bs_q4_lo(q.x), xa0) + dot(bs_q4_lo(q.y), xa1) + dot(bs_q4_lo(q.z), xa2) + dot(bs_q4_lo(q.w), xa3);
      float fb = dot(bs_q4_hi(q.x), xb0) + dot(bs_q4_hi(q.y), xb1) + dot(bs_q4_hi(q.z), xb2) + dot(bs_q4_hi(q.w), xb3);
      mv_acc[r] += dm.x * (sm.x * fa + sm.y * fb) - dm.y * (sm.z * sa + sm.w * sb);
    }
  }
  mv_finish(row0, b);
}
#endif  // MV_X_Q8
#endif  // MV_MULTI
