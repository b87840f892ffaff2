#version 450
// Appends rows of k (or v) to the f16 cache at positions state.pos + row.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "params.h"
#include "kv_type.glsl"
layout(local_size_x = 128) in;
layout(push_constant) uniform PC { KvStoreParams p; };
layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Cache { KV_T cache[]; };
layout(std430, binding = 2) readonly buffer S { uint state[]; };

void main() {
  uint row = gl_WorkGroupID.y;
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.kv_dim) return;
  cache[(state[1] + row) * p.kv_dim + i] = KV_T(src[row * p.kv_dim + i]);
}
