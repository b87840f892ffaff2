#version 450
// RoPE on q and k, and the KV-cache append, in one dispatch (three used to be four, behind a barrier).
// Workgroup x picks the job: [0, n_heads) rotates a q head in place; [n_heads, n_heads + n_kv_heads)
// rotates a k head and stores it, as f16, in the k cache at state.pos + row; the next n_kv_heads store
// a v head in the v cache. Same arithmetic as rope.comp (rope.glsl) and kv_store.comp, so results are
// bit-identical.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "params.h"
#include "kv_type.glsl"
#include "rope.glsl"
layout(local_size_x = 64) in;
// Partial rotary (Qwen 3.5): only the first ROT_DIM dims of a head rotate, the rest pass through; 0 = all.
layout(constant_id = 0) const uint ROT_DIM = 0;
layout(push_constant) uniform PC { RopeKvParams p; };
layout(std430, binding = 0) buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) readonly buffer F { float inv_freq[]; };
layout(std430, binding = 4) readonly buffer S { uint state[]; };
layout(std430, binding = 5) writeonly buffer KC { KV_T kcache[]; };
layout(std430, binding = 6) writeonly buffer VC { KV_T vcache[]; };

void main() {
  uint job = gl_WorkGroupID.x, row = gl_WorkGroupID.y;
  uint half_rot = (ROT_DIM == 0u ? p.head_dim : ROT_DIM) / 2u;
  uint kv_dim = p.n_kv_heads * p.head_dim;
  uint pos = state[1] + row;
  if (job < p.n_heads) {
    uint base = (row * p.n_heads + job) * p.head_dim;
    for (uint i = gl_LocalInvocationID.x; i < half_rot; i += gl_WorkGroupSize.x) {
      vec2 r = rope_rotate(q[base + i], q[base + i + half_rot], float(pos), inv_freq[i]);
      q[base + i] = r.x;
      q[base + i + half_rot] = r.y;
    }
  } else if (job < p.n_heads + p.n_kv_heads) {
    uint h = job - p.n_heads;
    uint src = row * kv_dim + h * p.head_dim, dst = pos * kv_dim + h * p.head_dim;
    for (uint i = gl_LocalInvocationID.x; i < half_rot; i += gl_WorkGroupSize.x) {
      vec2 r = rope_rotate(k[src + i], k[src + i + half_rot], float(pos), inv_freq[i]);
      kcache[dst + i] = KV_T(r.x);
      kcache[dst + i + half_rot] = KV_T(r.y);
    }
    for (uint i = 2u * half_rot + gl_LocalInvocationID.x; i < p.head_dim; i += gl_WorkGroupSize.x)
      kcache[dst + i] = KV_T(k[src + i]);
  } else {
    uint h = job - p.n_heads - p.n_kv_heads;
    uint src = row * kv_dim + h * p.head_dim, dst = pos * kv_dim + h * p.head_dim;
    for (uint i = gl_LocalInvocationID.x; i < p.head_dim; i += gl_WorkGroupSize.x)
      vcache[dst + i] = KV_T(v[src + i]);
  }
}
