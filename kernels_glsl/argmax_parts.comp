#version 450
// Greedy decode's argmax, first half: the vocabulary in G contiguous slices, one a workgroup (dispatch (G, 1, 1));
// each writes parts[g] = argmax_key (argmax.glsl) of its slice's largest logit and the lowest id holding it, and the
// sampler (sample.comp built with ARGMAX_PARTS) reduces the G keys with the same rule, so the pick is torch.argmax's:
// the lowest id of the largest logit. A slice with no logit at or above -FLT_MAX (all -inf or NaN) writes key 0, which
// reads back as (-FLT_MAX, 0xffffffff), as the single-workgroup scan it replaces would have held. Where the head's
// matvec folds the argmax in (the *_argmax kernels, matvec.glsl), greedy decode has no argmax_parts dispatch.
// The one-workgroup scan read a 128k vocabulary in ~16 dependent trips to L2 (38 us a step on the H200,
// 2026-11-28-h200-session17.md); here every invocation loads its R values at once.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "params.h"
#include "argmax.glsl"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(push_constant) uniform PC { ArgmaxParams p; };
layout(std430, binding = 0) readonly buffer L { float logits[]; };
layout(std430, binding = 1) writeonly buffer Parts { uvec2 parts[]; };

const uint R = 8u;

void main() {
  uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x, g = gl_WorkGroupID.x;
  uint chunk = (p.vocab + gl_NumWorkGroups.x - 1u) / gl_NumWorkGroups.x;
  uint b0 = min(g * chunk, p.vocab), b1 = min(b0 + chunk, p.vocab);
  float best = -3.402823466e38;
  uint best_i = 0xffffffffu;
  for (uint i0 = b0 + tid; i0 < b1; i0 += R * wg) {
    float v[R];
    [[unroll]] for (uint r = 0u; r < R; ++r) v[r] = i0 + r * wg < b1 ? logits[i0 + r * wg] : -3.402823466e38;
    [[unroll]] for (uint r = 0u; r < R; ++r) {
      uint i = i0 + r * wg;
      if (i < b1 && argmax_takes(v[r], i, best, best_i)) {
        best = v[r];
        best_i = i;
      }
    }
  }
  workgroup_argmax(best, best_i);
  if (tid == 0u) parts[g * kArgmaxKeyStride] = argmax_key(best, best_i);
}
