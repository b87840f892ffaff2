#version 450
// Small elementwise kernels, one variant each (variants.cmake): gated activation, bias add, softcap.
#include "params.h"
layout(local_size_x = 256) in;

#if defined(GATED_ACT)
layout(push_constant) uniform PC { GatedActParams p; };
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer U { float u[]; };
layout(std430, binding = 2) writeonly buffer H { float h[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n) return;
  float x = g[i];
  float a;
  if (p.act == 0u) {
    a = x / (1.0 + exp(-x));
  } else {  // gelu, tanh approximation (HF gelu_pytorch_tanh)
    float t = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    a = 0.5 * x * (1.0 + tanh(t));
  }
  h[i] = a * u[i];
}
#elif defined(ADD_BIAS)
layout(push_constant) uniform PC { BiasParams p; };
layout(std430, binding = 0) buffer Y { float y[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
void main() {
  uint i = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y;
  if (i < p.n) y[r * p.n + i] += b[i];
}
#elif defined(SOFTCAP)
layout(push_constant) uniform PC { SoftcapParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i < p.n) x[i] = p.cap * tanh(x[i] / p.cap);
}
#endif
