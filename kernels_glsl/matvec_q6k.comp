#version 450
// y = W x for Q6_K W [m, k] (k % 256 == 0) and f32 x [batch, k]; see matvec.glsl for the epilogue.
// Dispatch: ((m + ROWS - 1) / ROWS, batch). Spec constants: 0 = workgroup size, 1 = ROWS.
//
// A block is GGML's 210 bytes {ql[128], qh[64], scales[16] (i8), d (f16)} padded to 224 on the GPU
// (runtime/base/dtype.h, kQ6KGpuBlockBytes), so every field starts on a 16-byte boundary. A block is split
// into 8 parts: part t takes half h = t/4 (128 elements) and 8 consecutive l = 8(t%4) + 0..7 of it,
// i.e. 8 bytes of ql at l, 8 at l + 32 and 8 of qh at l, which hold elements l, l + 32, l + 64, l + 96
// of the half (GGML's interleaving). The 8 l share one scale per quarter. x values are loaded once
// per part and reused for all ROWS rows.
// MV_Q6K_WIDE (matvec_q6k_wide: decode's head): parts of 64 weights instead, half h = t/2 and 16 consecutive
// l = 16(t%2) + 0..15, each of ql, ql + 32 and qh one 16-byte load and the 4 scales one 8-byte load. On the H200 the
// 128256-row heads took 90.6 -> 81.7 us (2048 columns) and 170.0 -> 150.0 us (4096) isolated at their best shapes
// (4 rows against 2), and in the model the 1B q4_k_m head 0.093 -> 0.090 ms, the 8B's 0.178 -> 0.167 (session 29,
// P1-P2). The layers' matvecs lost with it: the per-phase decode of Gemma 3 1B 498.1 -> 484.3 tok/s, of the 8B
// q4_k_m 226.2 -> 209.7 (P9), so they keep the 32-weight parts. What bounds the wide head at 2.8-3.1 TB/s is not
// settled: fewer integer instructions (codes through f16 pairs) ran 3-5% slower (P5), x staged once a workgroup in
// shared memory 31-38% slower (P6); benchmarks/results/2026-11-29-h200-session29.md.
// The weight binding must start at row 0 of the rows it holds.
#include "common.glsl"
#include "params.h"
#include "dequant.glsl"
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(std430, binding = 0) readonly buffer Wt { uint w[]; };
#ifdef MV_GATED
layout(std430, binding = 4) readonly buffer Wu { uint wu[]; };
#endif
#if defined(MV_X_Q8) && !defined(MV_Q6K_WIDE)
#error "MV_X_Q8 is a form of the wide head matvec (MV_Q6K_WIDE) only"
#endif
#ifdef MV_X_Q8
// MV_X_Q8 (matvec_q6k_wide_i8, with MV_Q6K_WIDE): x quantized by quantize_x_q8 (int_dot.glsl); a quarter's 16 codes
// meet its 16 values, one slot of that layout, in int8 dot products.
#include "int_dot.glsl"
layout(std430, binding = 1) readonly buffer X { uvec4 xq[]; };
#else
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
#endif
#ifdef MV_MULTI
#include "matvec_multi.glsl"

uint mv_wq(bool up, uint i) {
#ifdef MV_GATED
  if (up) return wu[i];
#endif
  return w[i];
}
// The 4 bytes at byte offset o (a multiple of 4).
uint mv_load4(bool up, uint o) { return mv_wq(up, o >> 2); }
int mv_i8(bool up, uint o) { return int(mv_wq(up, o >> 2) << (24u - 8u * (o & 3u))) >> 24; }

// A part: half h, quarters qp and qp + 2 (the low and high nibbles of the same ql bytes), l0 .. l0 + 3:
// 4 bytes of ql at 64h + 32qp + l0, 4 of qh at l0 (bits 2qp.. of each), one scale byte per quarter.
// Elements 128h + 32qp + l0 + 0..3 and the same + 64. 32 parts a block.
uint mv_nparts() { return p.k / 256u * 32u; }
uvec2 mv_groups(uint part) {
  uint g = (part >> 5) * 64u + ((part >> 4) & 1u) * 32u + ((part >> 3) & 1u) * 8u + (part & 7u);
  return uvec2(g, g + 16u);
}
void mv_decode(uint row, bool up, uint part, out vec4 w0, out vec4 w1) {
  uint h = (part >> 4) & 1u, qp = (part >> 3) & 1u, l0 = (part & 7u) * 4u;
  uint bo = (row * (p.k / 256u) + (part >> 5)) * 224u;
  uint ql = mv_load4(up, bo + 64u * h + 32u * qp + l0), qh = mv_load4(up, bo + 128u + 32u * h + l0) >> (2u * qp);
  uint lo = (ql & 0x0F0F0F0Fu) | ((qh << 4) & 0x30303030u), hi = ((ql >> 4) & 0x0F0F0F0Fu) | (qh & 0x30303030u);
  uint so = bo + 192u + 8u * h + (l0 >> 4) + 2u * qp;  // quarter qp's scale; quarter qp + 2's is 4 bytes on
  float d = bs_half_at(mv_wq(up, (bo + 208u) >> 2), bo + 208u);
  // bs_six = 1 + q/64 exactly, so 64 f - 96 = q - 32 exactly: one rounding per weight, in the scale.
  w0 = (bs_six(lo) * 64.0 - 96.0) * (d * float(mv_i8(up, so)));
  w1 = (bs_six(hi) * 64.0 - 96.0) * (d * float(mv_i8(up, so + 4u)));
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

#ifdef MV_Q6K_WIDE
// The plain matvec only (decode's head): W as 16-byte and 8-byte words beside the 4-byte w.
#ifdef MV_GATED
#error "MV_Q6K_WIDE is the plain matvec: the gated and other variants keep the 32-weight parts"
#endif
layout(std430, binding = 0) readonly buffer Wt4 { uvec4 w4[]; };
layout(std430, binding = 0) readonly buffer Wt2 { uvec2 w2[]; };
#ifdef MV_X_Q8
// Quarter qq of part (h, s) is values 128 h + 32 qq + 16 s + 0..15 of its block: the 16 aligned values of
// quantize_x_q8's slot 4 h + s + 2 (qq >> 1) + 8 (qq & 1) (q8x_slot_first's inverse). Its 16 codes (bytes 0..63,
// signed bytes too) meet that slot's two levels: 254 sum(c q1) + sum(c q2) reaches 16 x 63 x 127 x 255 < 2^25,
// exact in int32, and its float conversion rounds at 2^-24 relative, far below x's quantization (~2^-16).
// sum((c - 32) x) is then step x that less 32 x the slot's sum of quantized values.
// Per part and row: 32 packed dot products, the codes (10 ops a word) and 4 conversions, against 16 bs_six (8 ops
// each) and 64 FMAs in the float form.
void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = p.k / 256u, nparts = nb * 4u;
  uint xb = mv_begin(b) * nb * kQ8xBlockWords;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 2, h = (part >> 1) & 1u, s = part & 1u;
    uint xo = xb + blk * kQ8xBlockWords;
    uvec4 q1[4], q2[4];
    vec2 ds[4];  // quarter qq's (step, sum of its quantized values)
    [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
      uint slot = 4u * h + s + 2u * (qq >> 1) + 8u * (qq & 1u);
      q1[qq] = xq[xo + 2u * slot];
      q2[qq] = xq[xo + 2u * slot + 1u];
      uvec4 dw = xq[xo + 32u + slot / 2u];
      ds[qq] = uintBitsToFloat(s != 0u ? dw.zw : dw.xy);  // slot & 1 == s
    }
    [[unroll]] for (uint r = 0; r < MV_NR; ++r) {
      uint bo = (mv_row(row0, r) * nb + blk) * 14u;  // the block, in 16-byte words
      uvec4 qa = w4[bo + 4u * h + s], qb = w4[bo + 4u * h + 2u + s], qh = w4[bo + 8u + 2u * h + s];
      uvec2 sc = w2[2u * bo + 24u + h];  // quarter qq's scale is byte s + 2 qq
      float d = unpackHalf2x16(w[4u * bo + 52u]).x;
      uvec4 cd[4];
      [[unroll]] for (uint c = 0; c < 4u; ++c) cd[c] = q6k_codes(qa[c], qb[c], qh[c]);
      vec4 f;  // sum((q - 32) x) of each quarter
      [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
        int id = q8x_dot16(uvec4(cd[0][qq], cd[1][qq], cd[2][qq], cd[3][qq]), q1[qq], q2[qq]);
        f[qq] = ds[qq].x * float(id) - 32.0 * ds[qq].y;
      }
      vec4 scl = vec4(int(sc.x << (24u - 8u * s)) >> 24, int(sc.x << (8u - 8u * s)) >> 24,
                      int(sc.y << (24u - 8u * s)) >> 24, int(sc.y << (8u - 8u * s)) >> 24);
      mv_acc[r] += d * dot(scl, f);
    }
  }
  mv_finish(row0, b);
}
#else
void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = p.k / 256u, nparts = nb * 4u;
  uint xb = mv_begin(b) * p.k / 4u;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 2, h = (part >> 1) & 1u, s = part & 1u;
    uint xo = blk * 64u + 32u * h + 4u * s;  // quarter qq's 16 values: vec4s xo + 8 qq + 0..3
    vec4 xq[16];
    vec4 sx;  // the sum of each quarter's 16 values
    [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
      [[unroll]] for (uint c = 0; c < 4u; ++c) xq[4u * qq + c] = mv_x4(xb, xo + 8u * qq + c);
      sx[qq] = dot(xq[4u * qq] + xq[4u * qq + 1u] + xq[4u * qq + 2u] + xq[4u * qq + 3u], vec4(1.0));
    }
    [[unroll]] for (uint r = 0; r < MV_NR; ++r) {
      uint bo = (mv_row(row0, r) * nb + blk) * 14u;  // the block, in 16-byte words
      uvec4 qa = w4[bo + 4u * h + s], qb = w4[bo + 4u * h + 2u + s], qh = w4[bo + 8u + 2u * h + s];
      uvec2 sc = w2[2u * bo + 24u + h];  // quarter qq's scale is byte s + 2 qq
      float d = unpackHalf2x16(w[4u * bo + 52u]).x;
      vec4 f = vec4(0.0);  // sum(f x) of each quarter, f = 1 + q/64 (bs_six)
      [[unroll]] for (uint c = 0; c < 4u; ++c) {
        uvec4 cd = q6k_codes(qa[c], qb[c], qh[c]);
        [[unroll]] for (uint qq = 0; qq < 4u; ++qq) f[qq] += dot(bs_six(cd[qq]), xq[4u * qq + c]);
      }
      vec4 scl = vec4(int(sc.x << (24u - 8u * s)) >> 24, int(sc.x << (8u - 8u * s)) >> 24,
                      int(sc.y << (24u - 8u * s)) >> 24, int(sc.y << (8u - 8u * s)) >> 24);
      // sum((q-32) x) = 64 sum(f x) - 96 sum(x): one rounding per weight, in the scale.
      mv_acc[r] += d * dot(scl, 64.0 * f - 96.0 * sx);
    }
  }
  mv_finish(row0, b);
}
#endif  // MV_X_Q8
#else
// The 8 bytes at byte offset o (a multiple of 4).
uvec2 load8(uint r, uint o) { return uvec2(mv_w(r, o >> 2), mv_w(r, (o >> 2) + 1u)); }

void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = p.k / 256u, nparts = nb * 8u;
  uint xb = mv_begin(b) * p.k / 4u;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 3, h = (part >> 2) & 1u, l0 = (part & 3u) * 8u;
    uint xo = (blk * 256u + 128u * h + l0) / 4u;
    vec4 xq[8];  // quarter qq, l0 + 0..3 and l0 + 4..7
    float sx[4];
    for (uint qq = 0; qq < 4u; ++qq) {
      xq[2 * qq] = mv_x4(xb, xo + 8u * qq);
      xq[2 * qq + 1] = mv_x4(xb, xo + 8u * qq + 1u);
      sx[qq] = dot(xq[2 * qq] + xq[2 * qq + 1], vec4(1.0));
    }
    for (uint r = 0; r < MV_NR; ++r) {
      uint bo = (mv_row(row0, r) * nb + blk) * 224u;
      uvec2 qa = load8(r, bo + 64u * h + l0), qb = load8(r, bo + 64u * h + 32u + l0);
      uvec2 qh = load8(r, bo + 128u + 32u * h + l0);
      uvec2 sc = load8(r, bo + 192u + 8u * h);  // byte (l0 / 16 + 2 qq) is the scale of quarter qq
      uint dw = bo + 208u;
      float d = bs_half_at(mv_w(r, dw >> 2), dw);
      uvec4 c0 = q6k_codes(qa.x, qb.x, qh.x), c1 = q6k_codes(qa.y, qb.y, qh.y);
      // sum((q-32)*x) with f = 1 + q/64: 64*sum(f*x) - 96*sum(x).
      float acc = 0.0;
      for (uint qq = 0; qq < 4u; ++qq) {
        uint bi = (l0 >> 4) + 2u * qq;
        float s = float(int((bi < 4u ? sc.x : sc.y) << (24u - 8u * (bi & 3u))) >> 24);
        float f = dot(bs_six(c0[qq]), xq[2 * qq]) + dot(bs_six(c1[qq]), xq[2 * qq + 1]);
        acc += s * (64.0 * f - 96.0 * sx[qq]);
      }
      mv_acc[r] += d * acc;
    }
  }
  mv_finish(row0, b);
}
#endif  // MV_Q6K_WIDE
#endif  // MV_MULTI
