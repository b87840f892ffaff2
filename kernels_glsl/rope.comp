#version 450
// RoPE on rows of heads in place (rope.glsl has the rotation).
#include "params.h"
#include "rope.glsl"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { RopeParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer F { float inv_freq[]; };
layout(std430, binding = 2) readonly buffer S { uint state[]; };

void main() {
  uint head = gl_WorkGroupID.x, row = gl_WorkGroupID.y;
  uint half_rot = p.rot_dim / 2;
  float pos = float(state[1] + row);
  uint base = (row * p.n_heads + head) * p.head_dim;
  for (uint i = gl_LocalInvocationID.x; i < half_rot; i += gl_WorkGroupSize.x) {
    vec2 r = rope_rotate(x[base + i], x[base + i + half_rot], pos, inv_freq[i]);
    x[base + i] = r.x;
    x[base + i + half_rot] = r.y;
  }
}
