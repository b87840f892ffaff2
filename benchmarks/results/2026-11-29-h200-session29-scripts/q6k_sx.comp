#version 450
// Prototype (session 29, P6): the Q6_K head's matvec with x staged once a workgroup in shared memory. A workgroup of
// S subgroups takes ROWS rows (ROWS / S a subgroup, 4 at a time: q6k_wide.comp's parts of 64 weights, lanes across
// the parts), so x is read from memory once per ROWS rows instead of once per 4 (the wide form at 32 invocations
// reads 8 KB of x a workgroup for 4 rows of 1.8 KB: as many bytes of x as of weights, through L1). Shared x is
// skewed one vec4 in 32 so the 8 lanes of a quarter-subgroup (parts of two blocks) reach 8 distinct bank groups.
// k <= 8192 (the heads: 2048, 4096). Same bindings and push constants as matvec_q6k (batch 1, no accumulate).
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "params.h"
#include "dequant.glsl"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(constant_id = 1) const uint ROWS = 32;
layout(push_constant) uniform PC { MatvecParams p; };
layout(std430, binding = 0) readonly buffer Wt4 { uvec4 w4[]; };
layout(std430, binding = 0) readonly buffer Wt2 { uvec2 w2[]; };
layout(std430, binding = 0) readonly buffer Wt1 { uint w[]; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
shared vec4 sx[2048 + 64];
uint sk(uint i) { return i + (i >> 5); }
const uint RPS = 4u;

void main() {
  uint nb = p.k / 256u, nparts = nb * 4u, k4 = p.k / 4u;
  for (uint i = gl_LocalInvocationID.x; i < k4; i += gl_WorkGroupSize.x) sx[sk(i)] = x[i];
  barrier();
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupSize, per = max(ROWS / gl_NumSubgroups, 1u);
  uint r0 = gl_WorkGroupID.x * ROWS + gl_SubgroupID * per;
  for (uint rr = 0u; rr < per; rr += RPS) {
    float acc[RPS];
    [[unroll]] for (uint r = 0u; r < RPS; ++r) acc[r] = 0.0;
    for (uint part = lane; part < nparts; part += sg) {
      uint blk = part >> 2, h = (part >> 1) & 1u, s = part & 1u;
      uvec4 qa[RPS], qb[RPS], qh[RPS];
      uvec2 sc[RPS];
      uint dw[RPS];
      [[unroll]] for (uint r = 0u; r < RPS; ++r) {
        uint bo = (min(r0 + rr + r, p.m - 1u) * nb + blk) * 14u;
        qa[r] = w4[bo + 4u * h + s];
        qb[r] = w4[bo + 4u * h + 2u + s];
        qh[r] = w4[bo + 8u + 2u * h + s];
        sc[r] = w2[2u * bo + 24u + h];
        dw[r] = w[4u * bo + 52u];
      }
      uint xo = blk * 64u + 32u * h + 4u * s;
      vec4 xq[16];
      vec4 sxq;
      [[unroll]] for (uint qq = 0; qq < 4u; ++qq) {
        [[unroll]] for (uint c = 0; c < 4u; ++c) xq[4u * qq + c] = sx[sk(xo + 8u * qq + c)];
        sxq[qq] = dot(xq[4u * qq] + xq[4u * qq + 1u] + xq[4u * qq + 2u] + xq[4u * qq + 3u], vec4(1.0));
      }
      [[unroll]] for (uint r = 0u; r < RPS; ++r) {
        vec4 f = vec4(0.0);
        [[unroll]] for (uint c = 0; c < 4u; ++c) {
          uvec4 cd = q6k_codes(qa[r][c], qb[r][c], qh[r][c]);
          [[unroll]] for (uint qq = 0; qq < 4u; ++qq) f[qq] += dot(bs_six(cd[qq]), xq[4u * qq + c]);
        }
        vec4 scl = vec4(int(sc[r].x << (24u - 8u * s)) >> 24, int(sc[r].x << (8u - 8u * s)) >> 24,
                        int(sc[r].y << (24u - 8u * s)) >> 24, int(sc[r].y << (8u - 8u * s)) >> 24);
        acc[r] += unpackHalf2x16(dw[r]).x * dot(scl, 64.0 * f - 96.0 * sxq);
      }
    }
    [[unroll]] for (uint r = 0u; r < RPS; ++r) {
      float t = subgroupAdd(acc[r]);
      uint row = r0 + rr + r;
      if (lane == 0u && row < p.m && rr + r < per) y[row] = t;
    }
  }
}
