#version 450
// Embedding lookup from an f16 table: out[t, :] = table[tokens[t], :] * scale. One workgroup per token.
// Token ids outside the vocabulary give a zero row rather than a read out of bounds.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "params.h"
layout(local_size_x = 128) in;
layout(push_constant) uniform PC { GetRowsParams p; };
layout(std430, binding = 0) readonly buffer T { float16_t table[]; };
layout(std430, binding = 1) readonly buffer Tok { uint tokens[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
void main() {
  uint t = gl_WorkGroupID.x;
  uint id = tokens[t];
  for (uint i = gl_LocalInvocationID.x; i < p.dim; i += gl_WorkGroupSize.x)
    o[t * p.dim + i] = id < p.vocab ? float(table[id * p.dim + i]) * p.scale : 0.0;
}
