#version 450
// Sum (or max, with -DREDUCE_MAX) of n floats in one workgroup, written to out[0].
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(push_constant) uniform PC { ReduceParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float result[]; };

void main() {
#ifdef REDUCE_MAX
  float acc = -3.402823466e38;
  for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) acc = max(acc, x[i]);
  acc = workgroup_max(acc);
#else
  float acc = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) acc += x[i];
  acc = workgroup_sum(acc);
#endif
  if (gl_LocalInvocationID.x == 0) result[0] = acc;
}
