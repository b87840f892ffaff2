#version 450
// Decode on the per-phase path: one layer's cached K rows [lo, pos), then its V rows, read one word every `step`
// bytes, so that the attention dispatch after it finds them in L2. The rows were written steps ago, and a whole step
// of weights has streamed through L2 since, so each K and V read in attention would otherwise go to DRAM, on a chain of
// dependent round trips (scores, softmax, weighted sum, merge). The persistent kernel does the same in a grid
// barrier's wait (decode_persistent.comp, TOUCH).
//
// The caches are reached by address (buffer_reference), not bound: the encoder then orders nothing around this
// dispatch but its reads of `state`, so it runs beside the q, k and v matvecs recorded before it, in their tail. The
// row at pos, which those matvecs write, is left out; nothing else it reads is written in the step.
//
// The loads are kept alive by a store that never happens (the folded words equal a constant).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { KvTouchParams p; };
// Words a lane at most (BLUESHIFT_KV_TOUCH_LANE): the touches of a lane are independent loads, issued together.
layout(constant_id = 0) const uint PER_LANE = 8;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Words { uint w[]; };
layout(std430, binding = 0) readonly buffer S { uint state[]; };  // word 1: pos
layout(std430, binding = 1) writeonly buffer Sink { uint sink[]; };

void main() {
  uint pos = state[1], lo = bs_window_lo(pos, p.window);
  if (pos <= lo) return;
  uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x, j = gl_GlobalInvocationID.x;
  uint n = ((pos - lo) * p.row_bytes + p.step - 1u) / p.step;  // touches a cache
  uint base = lo * p.row_bytes, f = 0u;
  uvec2 kc = uvec2(p.k_lo, p.k_hi), vc = uvec2(p.v_lo, p.v_hi);
  [[unroll]] for (uint i = 0u; i < PER_LANE; ++i) {
    uint k = j + i * lanes;
    if (k < 2u * n) f ^= Words(k < n ? kc : vc).w[(base + (k < n ? k : k - n) * p.step) >> 2];
  }
  if (f == 0x9E3779B9u) sink[gl_WorkGroupID.x] = f;
}
