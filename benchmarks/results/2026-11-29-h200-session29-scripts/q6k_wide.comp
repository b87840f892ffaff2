#version 450
// Prototype (session 29, P1): the Q6_K matvec with 64 weights a lane a part, loaded as 16-byte words.
// A part is half h of a block and 16 consecutive l = 16 s + 0..15 of it: 16 bytes of ql at 64h + 16s, 16 at
// 64h + 32 + 16s and 16 of qh at 128 + 32h + 16s (elements l, l + 32, l + 64, l + 96 of the half), the 4 scale
// bytes s, s + 2, s + 4, s + 6 of the half's 8, and d. 4 parts a block; x is loaded once a part for all ROWS rows.
#include "common.glsl"
#include "params.h"
#include "dequant.glsl"
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 4;
layout(std430, binding = 0) readonly buffer Wt4 { uvec4 w4[]; };
layout(std430, binding = 0) readonly buffer Wt2 { uvec2 w2[]; };
layout(std430, binding = 0) readonly buffer Wt1 { uint w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
#include "matvec.glsl"

void main() {
  uint row0 = mv_group() * ROWS, b = mv_batch_row();
  uint nb = p.k / 256u, nparts = nb * 4u;
  uint xb = mv_begin(b) * p.k / 4u;
  for (uint r = 0; r < MV_NR; ++r) mv_acc[r] = 0.0;
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uint blk = part >> 2, h = (part >> 1) & 1u, s = part & 1u;
    uvec4 qa[ROWS], qb[ROWS], qh[ROWS];
    uvec2 sc[ROWS];
    uint dw[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      uint bo = (mv_row(row0, r) * nb + blk) * 14u;  // the block in uvec4s (224 bytes)
      qa[r] = w4[bo + 4u * h + s];
      qb[r] = w4[bo + 4u * h + 2u + s];
      qh[r] = w4[bo + 8u + 2u * h + s];
      sc[r] = w2[2u * bo + 24u + h];
      dw[r] = w[4u * bo + 52u];
    }
    uint xo = xb + blk * 64u + 32u * h + 4u * s;
    vec4 xq[16];  // quarter qq, word c: x vec4 xo + 8 qq + c
    float sx[4];
    [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
      [[unroll]] for (uint c = 0; c < 4u; ++c) xq[4u * qq + c] = mv_x4(xb, xo - xb + 8u * qq + c);
      sx[qq] = dot(xq[4u * qq] + xq[4u * qq + 1u] + xq[4u * qq + 2u] + xq[4u * qq + 3u], vec4(1.0));
    }
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      vec4 f = vec4(0.0);  // sum f x of quarter qq in f[qq]
      [[unroll]] for (uint c = 0; c < 4u; ++c) {
        uvec4 cd = q6k_codes(qa[r][c], qb[r][c], qh[r][c]);
        [[unroll]] for (uint qq = 0; qq < 4u; ++qq) f[qq] += dot(bs_six(cd[qq]), xq[4u * qq + c]);
      }
      vec4 scv = vec4(float(int(sc[r].x << (24u - 8u * s)) >> 24), float(int(sc[r].x << (8u - 8u * s)) >> 24),
                      float(int(sc[r].y << (24u - 8u * s)) >> 24), float(int(sc[r].y << (8u - 8u * s)) >> 24));
      float d = unpackHalf2x16(dw[r]).x;
      mv_acc[r] += d * dot(scv, 64.0 * f - 96.0 * vec4(sx[0], sx[1], sx[2], sx[3]));
    }
  }
  mv_finish(row0, b);
}
