#version 450
// Attention for rows of queries at positions state.pos + row against the f16 KV cache: one workgroup
// per (head, row). Scores go to a scratch row in global memory (contexts exceed shared memory), then a
// softmax in f32, then the weighted sum of v. Causal, with an optional sliding window and softcap.
#include "common.glsl"
#include "params.h"
layout(local_size_x = 128) in;
layout(push_constant) uniform PC { AttentionParams p; };
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float16_t kc[]; };
layout(std430, binding = 2) readonly buffer V { float16_t vc[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(std430, binding = 4) coherent buffer Sc { float scores[]; };
layout(std430, binding = 5) readonly buffer S { uint state[]; };

void main() {
  uint h = gl_WorkGroupID.x, row = gl_WorkGroupID.y;
  uint kvh = h / (p.n_heads / p.n_kv_heads);
  uint kv_dim = p.n_kv_heads * p.head_dim;
  uint pos = state[1] + row;
  uint lo = (p.window > 0 && pos + 1 > p.window) ? pos + 1 - p.window : 0;
  uint qbase = (row * p.n_heads + h) * p.head_dim;
  uint sbase = (row * p.n_heads + h) * p.max_ctx;

  float mx = -3.402823466e38;
  for (uint j = lo + gl_LocalInvocationID.x; j <= pos; j += gl_WorkGroupSize.x) {
    uint kb = j * kv_dim + kvh * p.head_dim;
    float s = 0.0;
    for (uint d = 0; d < p.head_dim; ++d) s += q[qbase + d] * float(kc[kb + d]);
    s *= p.scale;
    if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
    scores[sbase + j] = s;
    mx = max(mx, s);
  }
  mx = workgroup_max(mx);
  float sum = 0.0;
  for (uint j = lo + gl_LocalInvocationID.x; j <= pos; j += gl_WorkGroupSize.x) {
    float e = exp(scores[sbase + j] - mx);
    scores[sbase + j] = e;
    sum += e;
  }
  sum = workgroup_sum(sum);
  memoryBarrierBuffer();
  barrier();
  float inv = 1.0 / sum;
  for (uint d = gl_LocalInvocationID.x; d < p.head_dim; d += gl_WorkGroupSize.x) {
    float acc = 0.0;
    for (uint j = lo; j <= pos; ++j) acc += scores[sbase + j] * float(vc[j * kv_dim + kvh * p.head_dim + d]);
    o[qbase + d] = acc * inv;
  }
}
