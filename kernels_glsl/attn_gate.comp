#version 450
// Qwen 3.5's gated attention: q_proj yields, per head, q then a gate of head_dim each; the attention output
// is multiplied by sigmoid(gate) before o_proj. GATE_SPLIT separates the two halves (q goes on to its norm
// and RoPE); GATE_APPLY multiplies.
#include "params.h"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { AttnGateParams p; };

#if defined(GATE_SPLIT)
layout(std430, binding = 0) readonly buffer QG { float qg[]; };  // [n / head_dim, 2, head_dim]
layout(std430, binding = 1) writeonly buffer Q { float q[]; };   // [n / head_dim, head_dim]
layout(std430, binding = 2) writeonly buffer G { float gate[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  uint src = (i / p.head_dim) * 2u * p.head_dim + i % p.head_dim;
  q[i] = qg[src];
  gate[i] = qg[src + p.head_dim];
}
#elif defined(GATE_APPLY)
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer G { float gate[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < p.n) x[i] = x[i] / (1.0 + exp(-gate[i]));
}
#endif
