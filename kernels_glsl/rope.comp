#version 450
// RoPE, rotate-half pairing as HF's apply_rotary_pos_emb: (x[i], x[i + d/2]) rotated by pos * inv_freq[i].
// Angles in f32 as HF computes them (freqs = pos * inv_freq, then cos/sin).
#include "params.h"
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
    float a = pos * inv_freq[i];
    float c = cos(a), s = sin(a);
    float x0 = x[base + i], x1 = x[base + i + half_rot];
    x[base + i] = x0 * c - x1 * s;
    x[base + i + half_rot] = x1 * c + x0 * s;
  }
}
