#version 450
// Causal depthwise conv over the token axis, then SiLU (Qwen 3.5's Gated DeltaNet, before the recurrence).
// One invocation per channel walks the rows in order with the last width-1 inputs in registers; the rows
// before the first come from the layer's conv state, and the state is left holding the last width-1
// inputs, so a decode step and a prefill chunk are the same kernel. state.pos == 0 starts a sequence:
// the old state is ignored (zeros).
#include "params.h"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { ConvSiluParams p; };
layout(std430, binding = 0) readonly buffer X { float x[]; };    // [rows, channels]
layout(std430, binding = 1) readonly buffer W { float w[]; };    // [channels, width]
layout(std430, binding = 2) buffer C { float conv_state[]; };    // [channels, width - 1], oldest first
layout(std430, binding = 3) readonly buffer S { uint state[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };   // [rows, channels]

void main() {
  uint c = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (c >= p.channels) return;
  const uint h = p.width - 1u;  // at most 7 (validate_config)
  const bool fresh = state[1] == 0u;
  float win[7];
  for (uint i = 0u; i < h; ++i) win[i] = fresh ? 0.0 : conv_state[c * h + i];
  float wl = w[c * p.width + h];
  for (uint t = 0u; t < p.rows; ++t) {
    float xt = x[t * p.channels + c];
    float s = wl * xt;
    for (uint i = 0u; i < h; ++i) s += w[c * p.width + i] * win[i];
    y[t * p.channels + c] = s / (1.0 + exp(-s));
    for (uint i = 0u; i + 1u < h; ++i) win[i] = win[i + 1u];
    if (h > 0u) win[h - 1u] = xt;
  }
  for (uint i = 0u; i < h; ++i) conv_state[c * h + i] = win[i];
}
