#version 450
// Matvec-shaped read probe (bs_micro --rows): the loads of the persistent decode kernel's Q4_K tasks, without their
// math, so that a sweep can say which shape of a subgroup's chain of loads streams near the bandwidth floor. W holds
// rows of p.iters Q4_K blocks (9 uvec4s: a header, then 8 parts of 32 codes); a task is rows 2t and 2t + 1, taken
// by one subgroup in steps, each lane loading PARTS parts of both rows a step (sg apart), as decode_persistent.comp's
// q4k_load does. Tasks go grid-stride over the subgroups, dealt across the workgroups first (its SPREAD).
// Spec constants: 0 = workgroup size; 1 = PARTS (1-4); 2 = PIPE (1: the next step's loads issued before this step's
// words are folded, one stream of steps across tasks, as gate_up_q4k does; 0: each step's loads, then their fold);
// 3 = HEADER (1: each lane loads its block's header, as the kernel does; 0: the codes alone).
// Each invocation folds its words into one value (XOR) and writes it, so that no load is dead.
#extension GL_KHR_shader_subgroup_basic : require
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(constant_id = 1) const uint PARTS = 1;
layout(constant_id = 2) const uint PIPE = 1;
layout(constant_id = 3) const uint HEADER = 1;
layout(push_constant) uniform PC { StreamParams p; };  // n_vec4: rows (even), iters: blocks a row
layout(std430, binding = 0) readonly buffer W { uvec4 w[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };

const uint kMaxParts = 4u;
// Task t's words at step s: for each part u, row 2t's header and codes, then row 2t + 1's.
void load(uint t, uint s, uint pend, out uvec4 v[4u * kMaxParts]) {
  uint sg = gl_SubgroupSize, nb = p.iters;
  for (uint u = 0u; u < PARTS; ++u) {
    uint part = min(s * PARTS * sg + u * sg + gl_SubgroupInvocationID, pend - 1u), blk = part >> 3, q = part & 7u;
    uint ba = (2u * t * nb + blk) * 9u, bb = ((2u * t + 1u) * nb + blk) * 9u;
    v[4u * u] = HEADER != 0u ? w[ba] : uvec4(0u);
    v[4u * u + 1u] = w[ba + 1u + q];
    v[4u * u + 2u] = HEADER != 0u ? w[bb] : uvec4(0u);
    v[4u * u + 3u] = w[bb + 1u + q];
  }
}
uint fold(uvec4 v[4u * kMaxParts]) {
  uvec4 f = uvec4(0u);
  for (uint i = 0u; i < 4u * PARTS; ++i) f ^= v[i];
  return f.x ^ f.y ^ f.z ^ f.w;
}

void main() {
  uint groups = gl_NumWorkGroups.x, nsub = groups * gl_NumSubgroups;
  uint tasks = p.n_vec4 / 2u, pend = p.iters * 8u, span = PARTS * gl_SubgroupSize, steps = (pend + span - 1u) / span;
  uint t0 = gl_SubgroupID * groups + gl_WorkGroupID.x, acc = 0u;
  uvec4 cur[4u * kMaxParts], nxt[4u * kMaxParts];
  if (PIPE != 0u) {
    if (t0 < tasks) load(t0, 0u, pend, nxt);
    for (uint t = t0, s = 0u; t < tasks;) {
      cur = nxt;
      uint sn = s + 1u == steps ? 0u : s + 1u, tn = sn == 0u ? t + nsub : t;
      if (tn < tasks) load(tn, sn, pend, nxt);
      acc ^= fold(cur);
      t = tn, s = sn;
    }
  } else {
    for (uint t = t0; t < tasks; t += nsub)
      for (uint s = 0u; s < steps; ++s) {
        load(t, s, pend, cur);
        acc ^= fold(cur);
      }
  }
  dst[gl_GlobalInvocationID.x] = acc;
}
