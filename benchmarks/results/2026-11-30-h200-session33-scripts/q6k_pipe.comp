#version 450
// Prototype (session 33, R2): the Q6_K head's matvec (matvec_q6k_wide's 64-weight parts) with ROWS rows a workgroup
// taken G at a time, the next task's weights loaded before this one's math (PIPE; without it, the loads in order).
// One subgroup a workgroup (the reduction is a subgroupAdd): time it at wg = the subgroup size alone.
// Task t of a lane: group t / ppt of G rows, part lane + (t % ppt) * wg; a part past the row's end loads a clamped
// part and adds nothing.
// Timing bounds (not matvecs): LOADS_ONLY folds the weight words with a few XORs in place of the math; NO_X reads the
// same two vec4s of x for every part (L1 hits) in place of the part's 16.
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "params.h"
#include "dequant.glsl"
layout(local_size_x = 32, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 16;
layout(push_constant) uniform PC { MatvecParams p; };
layout(std430, binding = 0) readonly buffer Wt4 { uvec4 w4[]; };
layout(std430, binding = 0) readonly buffer Wt2 { uvec2 w2[]; };
layout(std430, binding = 0) readonly buffer Wt1 { uint w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
#ifndef G
#define G 4u
#endif

struct Part {
  uvec4 qa, qb, qh;
  uvec2 sc;
  uint d;
};

Part part_load(uint row, uint blk, uint h, uint s, uint nb) {
  uint bo = (row * nb + blk) * 14u;  // the block, in 16-byte words
  Part q;
  q.qa = w4[bo + 4u * h + s];
  q.qb = w4[bo + 4u * h + 2u + s];
  q.qh = w4[bo + 8u + 2u * h + s];
  q.sc = w2[2u * bo + 24u + h];
  q.d = w[4u * bo + 52u];
  return q;
}

void main() {
  uint row0 = gl_WorkGroupID.x * ROWS, lane = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  uint nb = p.k / 256u, nparts = nb * 4u, ppt = (nparts + wg - 1u) / wg, ntask = (ROWS / G) * ppt;
  Part cur[G], nxt[G];
  {
    uint j = min(lane, nparts - 1u);
    [[unroll]] for (uint r = 0; r < G; ++r)
      cur[r] = part_load(min(row0 + r, p.m - 1u), j >> 2, (j >> 1) & 1u, j & 1u, nb);
  }
  float acc[G];
  [[unroll]] for (uint r = 0; r < G; ++r) acc[r] = 0.0;
  for (uint t = 0; t < ntask; ++t) {
    uint g = t / ppt, jr = lane + (t % ppt) * wg, j = min(jr, nparts - 1u);
#ifdef PIPE
    if (t + 1u < ntask) {
      uint g1 = (t + 1u) / ppt, j1 = min(lane + ((t + 1u) % ppt) * wg, nparts - 1u);
      [[unroll]] for (uint r = 0; r < G; ++r)
        nxt[r] = part_load(min(row0 + G * g1 + r, p.m - 1u), j1 >> 2, (j1 >> 1) & 1u, j1 & 1u, nb);
    }
#else
    if (t > 0u) {
      [[unroll]] for (uint r = 0; r < G; ++r)
        cur[r] = part_load(min(row0 + G * g + r, p.m - 1u), j >> 2, (j >> 1) & 1u, j & 1u, nb);
    }
#endif
    uint blk = j >> 2, h = (j >> 1) & 1u, s = j & 1u;
    uint xo = blk * 64u + 32u * h + 4u * s;
    vec4 xq[16];
    vec4 sx;
    [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
#ifdef NO_X
      [[unroll]] for (uint c = 0; c < 4u; ++c) xq[4u * qq + c] = x[(xo + c) & 1u];  // two vec4s, L1 hits
#else
      [[unroll]] for (uint c = 0; c < 4u; ++c) xq[4u * qq + c] = x[xo + 8u * qq + c];
#endif
      sx[qq] = dot(xq[4u * qq] + xq[4u * qq + 1u] + xq[4u * qq + 2u] + xq[4u * qq + 3u], vec4(1.0));
    }
    float live = jr < nparts ? 1.0 : 0.0;
#ifdef LOADS_ONLY
    // Timing bound only: every word loaded, folded with as few instructions as the compiler allows.
    [[unroll]] for (uint r = 0; r < G; ++r) {
      uvec4 v = cur[r].qa ^ cur[r].qb ^ cur[r].qh;
      uint u = v.x ^ v.y ^ v.z ^ v.w ^ cur[r].sc.x ^ cur[r].sc.y ^ cur[r].d;
      acc[r] += live * uintBitsToFloat(u & 0x3FFFFFFFu) * sx[r & 3u];
    }
#else
    [[unroll]] for (uint r = 0; r < G; ++r) {
      vec4 f = vec4(0.0);
      [[unroll]] for (uint c = 0; c < 4u; ++c) {
        uvec4 cd = q6k_codes(cur[r].qa[c], cur[r].qb[c], cur[r].qh[c]);
        [[unroll]] for (uint qq = 0; qq < 4u; ++qq) f[qq] += dot(bs_six(cd[qq]), xq[4u * qq + c]);
      }
      uvec2 sc = cur[r].sc;
      vec4 scl = vec4(int(sc.x << (24u - 8u * s)) >> 24, int(sc.x << (8u - 8u * s)) >> 24,
                      int(sc.y << (24u - 8u * s)) >> 24, int(sc.y << (8u - 8u * s)) >> 24);
      acc[r] += live * unpackHalf2x16(cur[r].d).x * dot(scl, 64.0 * f - 96.0 * sx);
    }
#endif
    if (t % ppt == ppt - 1u) {
      [[unroll]] for (uint r = 0; r < G; ++r) {
        float v = subgroupAdd(acc[r]);
        uint row = row0 + G * g + r;
        if (lane == r && row < p.m) y[row] = v;
        acc[r] = 0.0;
      }
    }
#ifdef PIPE
    cur = nxt;
#endif
  }
}
