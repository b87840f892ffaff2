#version 450
// Attention for rows of queries at positions state.pos + row against the f16 KV cache: one workgroup
// per (head, row). Scores go to a scratch row in global memory (contexts exceed shared memory; the row
// stays in L2), then a softmax in f32, then the weighted sum of v. Causal, with an optional sliding
// window and softcap.
//
// The weighted sum is the part that must not be serial: the workgroup is split into G = WG / (head_dim/4)
// groups; within a group each invocation owns 4 consecutive dims (one 8-byte load of f16 v per position),
// groups take positions j = g, g + G, ..., and the partial sums meet in shared memory.
#include "common.glsl"
#include "params.h"
#include "kv_type.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { AttentionParams p; };
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { KV_T4 kc4[]; };
layout(std430, binding = 2) readonly buffer V { KV_T4 vc4[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(std430, binding = 4) coherent buffer Sc { float scores[]; };
layout(std430, binding = 5) readonly buffer S { uint state[]; };
#ifdef ATTN_SINKS  // GPT-OSS: a per-head logit that joins the softmax's denominator and weighs no value
layout(std430, binding = 7) readonly buffer Sinks { float sinks[]; };
#endif


const uint MAX_HEAD_DIM = 512;
shared vec4 s_part[256];
shared vec4 s_q[MAX_HEAD_DIM / 4];

void main() {
  uint h = gl_WorkGroupID.x, row = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  uint kvh = h / (p.n_heads / p.n_kv_heads);
  uint hd4 = p.head_dim / 4;                  // head_dim is a multiple of 4 for every supported model
  uint kv_dim4 = p.n_kv_heads * hd4;
  uint pos = state[1] + row;
  uint lo = bs_window_lo(pos, p.window);
  uint qbase = (row * p.n_heads + h) * p.head_dim;
  uint sbase = (row * p.n_heads + h) * p.max_ctx;

  for (uint d = tid; d < hd4; d += gl_WorkGroupSize.x)
    s_q[d] = vec4(q[qbase + 4 * d], q[qbase + 4 * d + 1], q[qbase + 4 * d + 2], q[qbase + 4 * d + 3]);
  barrier();

  float mx = -3.402823466e38;
  for (uint j = lo + tid; j <= pos; j += gl_WorkGroupSize.x) {
    uint kb = j * kv_dim4 + kvh * hd4;
    float s = 0.0;
    for (uint d = 0; d < hd4; ++d) s += dot(s_q[d], vec4(kc4[kb + d]));
    s *= p.scale;
    if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
    scores[sbase + j] = s;
    mx = max(mx, s);
  }
  mx = workgroup_max(mx);
#ifdef ATTN_SINKS
  mx = max(mx, sinks[h]);
#endif
  float sum = 0.0;
  for (uint j = lo + tid; j <= pos; j += gl_WorkGroupSize.x) {
    float e = exp(scores[sbase + j] - mx);
    scores[sbase + j] = e;
    sum += e;
  }
  sum = workgroup_sum(sum);
#ifdef ATTN_SINKS
  sum += exp(sinks[h] - mx);
#endif
  memoryBarrierBuffer();
  barrier();

  uint groups = gl_WorkGroupSize.x / hd4;     // >= 1 while head_dim <= 4 * WG
  uint g = tid / hd4, d = tid % hd4;
  vec4 acc = vec4(0.0);
  if (g < groups)
    for (uint j = lo + g; j <= pos; j += groups) acc += scores[sbase + j] * vec4(vc4[j * kv_dim4 + kvh * hd4 + d]);
  s_part[tid] = acc;
  barrier();
  if (tid < hd4) {
    vec4 t = vec4(0.0);
    for (uint k = 0; k < groups; ++k) t += s_part[k * hd4 + tid];
    t /= sum;
    uint ob = qbase + 4 * tid;
    o[ob] = t.x;
    o[ob + 1] = t.y;
    o[ob + 2] = t.z;
    o[ob + 3] = t.w;
  }
}
