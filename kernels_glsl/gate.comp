#version 450
// Start of a recorded decode step: every dispatch of the step is indirect; when the GPU has decided to
// stop (state[2]) or the host has cancelled, their workgroup counts become zero, so the rest of the replay costs almost nothing.
#include "params.h"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { GateParams p; };
layout(std430, binding = 0) readonly buffer Nominal { uint nominal[]; };
layout(std430, binding = 1) writeonly buffer Args { uint args[]; };
layout(std430, binding = 2) readonly buffer S { uint state[]; };
layout(std430, binding = 3) readonly buffer Control { uint control[]; };  // host-visible; [0] != 0 cancels
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n * 3u) args[i] = (state[2] != 0u || control[0] != 0u) ? 0u : nominal[i];
}
