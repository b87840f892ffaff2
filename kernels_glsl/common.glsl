// Shared helpers for compute kernels. Subgroup-size agnostic: reductions combine subgroup results
// through shared memory, so the same code runs with subgroups of 8 (lavapipe), 32 (NVIDIA), 64 (AMD).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require

#define MAX_SUBGROUPS 64

// The gated FFN's activation: 0 = silu, 1 = gelu with the tanh approximation (HF gelu_pytorch_tanh).
float bs_act(float x, uint kind) {
  if (kind == 0u) return x / (1.0 + exp(-x));
  float t = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + tanh(t));
}
// The first key position a query at position pos sees: pos + 1 - window with a sliding window, else 0.
uint bs_window_lo(uint pos, uint window) { return (window > 0u && pos + 1u > window) ? pos + 1u - window : 0u; }

shared float bs_red[MAX_SUBGROUPS];

// Sum of v over the workgroup; every invocation gets the result.
float workgroup_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) bs_red[gl_SubgroupID] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) s += bs_red[i];
  barrier();
  return s;
}

float workgroup_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) bs_red[gl_SubgroupID] = v;
  barrier();
  float s = -3.402823466e38;
  for (uint i = 0; i < gl_NumSubgroups; ++i) s = max(s, bs_red[i]);
  barrier();
  return s;
}
