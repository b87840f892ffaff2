#version 450
// Prototype (session 29, P5): q6k_wide.comp with each code pair made an f16 pair by one mask (1024 + q, exact), less
// 1056 in one packed f16 subtract (q - 32, exact), widened to f32: 3 integer instructions per 4 weights where bs_six
// takes 8. The products and sums stay f32, and no sum of x is needed.
// A part is half h of a block and 16 consecutive l = 16 s + 0..15 of it: 16 bytes of ql at 64h + 16s, 16 at
// 64h + 32 + 16s and 16 of qh at 128 + 32h + 16s (elements l, l + 32, l + 64, l + 96 of the half), the 4 scale
// bytes s, s + 2, s + 4, s + 6 of the half's 8, and d. 4 parts a block; x is loaded once a part for all ROWS rows.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
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
    uint xo = blk * 64u + 32u * h + 4u * s;
    vec4 xq[16];  // quarter qq, word c: x vec4 xo + 8 qq + c
    [[unroll]] for (uint qq = 0; qq < 4u; ++qq)
      [[unroll]] for (uint c = 0; c < 4u; ++c) xq[4u * qq + c] = mv_x4(xb, xo + 8u * qq + c);
    const f16vec2 k1056 = f16vec2(1056.0);
    [[unroll]] for (uint r = 0; r < ROWS; ++r) {
      vec4 f = vec4(0.0);  // sum (q - 32) x of quarter qq in f[qq]
      [[unroll]] for (uint c = 0; c < 4u; ++c) {
        uvec4 cd = q6k_codes(qa[r][c], qb[r][c], qh[r][c]);
        [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
          vec2 e = vec2(unpackFloat2x16((cd[qq] & 0x003F003Fu) | 0x64006400u) - k1056);  // bytes 0, 2
          vec2 o = vec2(unpackFloat2x16(((cd[qq] >> 8) & 0x003F003Fu) | 0x64006400u) - k1056);  // bytes 1, 3
          f[qq] += dot(vec4(e.x, o.x, e.y, o.y), xq[4u * qq + c]);
        }
      }
      vec4 scv = vec4(float(int(sc[r].x << (24u - 8u * s)) >> 24), float(int(sc[r].x << (8u - 8u * s)) >> 24),
                      float(int(sc[r].y << (24u - 8u * s)) >> 24), float(int(sc[r].y << (8u - 8u * s)) >> 24));
      float d = unpackHalf2x16(dw[r]).x;
      mv_acc[r] += d * dot(scv, f);
    }
  }
  mv_finish(row0, b);
}
