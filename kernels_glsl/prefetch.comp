#version 450
// Pulls a weight range into the L2 cache ahead of the kernel that will read it: dispatched with no
// barrier before it, beside a latency-bound kernel (decode attention) that leaves DRAM bandwidth idle,
// so the following matvecs find their weights in L2. Reads p.n_vec4 uvec4s from binding 0 with a grid
// stride; the one write, behind a condition no real data meets, keeps the loads alive.
#include "params.h"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { StreamParams p; };  // n_vec4: length; iters: unused
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Sink { uint sink[]; };

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uvec4 acc = uvec4(0u);
  for (uint i = gl_GlobalInvocationID.x; i < p.n_vec4; i += 4u * stride) {  // 4 loads in flight
    uvec4 a = src[i], b = i + stride < p.n_vec4 ? src[i + stride] : uvec4(0u);
    uvec4 c = i + 2u * stride < p.n_vec4 ? src[i + 2u * stride] : uvec4(0u);
    uvec4 d = i + 3u * stride < p.n_vec4 ? src[i + 3u * stride] : uvec4(0u);
    acc ^= a ^ b ^ c ^ d;
  }
  if (acc.x == 0x9E3779B9u && acc.y == 0x7F4A7C15u && acc.z == 0xF39CC060u && acc.w == 0x5CEDC834u)
    sink[gl_WorkGroupID.x & 63u] = acc.x;
}
