#version 450
// Grid-wide barrier probe (bs_micro): every workgroup of a grid that fits on the GPU at once arrives
// at an atomic counter and spins until all have, p.n_vec4 times. The time per round is what a
// persistent kernel would pay per dependent phase, against a dispatch boundary's barrier. Needs every
// workgroup resident at once (forward progress is not guaranteed otherwise): GPUs only.
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(push_constant) uniform PC { StreamParams p; };  // n_vec4: rounds
layout(std430, binding = 0) coherent volatile buffer C { uint counter[]; };

void main() {
  uint n = gl_NumWorkGroups.x;
  for (uint r = 1u; r <= p.n_vec4; ++r) {
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
      memoryBarrierBuffer();
      atomicAdd(counter[0], 1u);
      while (counter[0] < r * n) {}
    }
    barrier();
  }
}
