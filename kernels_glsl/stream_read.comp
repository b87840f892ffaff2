#version 450
// Streaming-read bandwidth probe: every invocation reads vec4s in a grid-stride loop and folds them,
// so the only traffic is the read. One value per workgroup is written, to keep the loads alive.
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(push_constant) uniform PC { StreamParams p; };
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  vec4 acc = vec4(0.0);
  for (uint it = 0; it < p.iters; ++it)
    for (uint i = gl_GlobalInvocationID.x; i < p.n_vec4; i += stride) acc += src[i];
  float s = workgroup_sum(acc.x + acc.y + acc.z + acc.w);
  if (gl_LocalInvocationIndex == 0) dst[gl_WorkGroupID.x] = s;
}
