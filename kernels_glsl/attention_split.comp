#version 450
// Decode attention, split over the context (flash-decoding): workgroup (h, s) takes one of S contiguous
// chunks of the window [lo, pos] for head h, and writes its partial softmax state (max m, sum l,
// unnormalized o = sum_j exp(score_j - m) v_j) to `part`. The last workgroup of a head to finish (an
// atomic count per head) merges the S partials: o = sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s.
// The one-workgroup-per-head kernel (attention.comp) walks the whole context serially in 32 or so
// workgroups; here heads x S workgroups share it, with no second dispatch or barrier for the merge.
//
// One query row (decode). Chunk length is ceil(window / S) <= MAX_CHUNK: the caller picks
// S >= max_ctx / MAX_CHUNK, and head_dim <= 256 (4 dims per invocation). Scores live in shared memory; f16 K and V are read as 8-byte vectors.
#include "common.glsl"
#include "params.h"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { AttentionSplitParams p; };
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { f16vec4 kc4[]; };
layout(std430, binding = 2) readonly buffer V { f16vec4 vc4[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(std430, binding = 4) coherent buffer P { float part[]; };     // [n_heads][S][head_dim + 2]
layout(std430, binding = 5) coherent buffer C { uint counter[]; };  // [n_heads], zero between uses
layout(std430, binding = 6) readonly buffer S { uint state[]; };

const uint MAX_HEAD_DIM = 256, MAX_CHUNK = 128;
shared vec4 s_q[MAX_HEAD_DIM / 4];
shared float s_sc[MAX_CHUNK];
shared vec4 s_part[64];
shared bool s_last;

void main() {
  uint h = gl_WorkGroupID.x, sp = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  uint kvh = h / (p.n_heads / p.n_kv_heads);
  uint hd4 = p.head_dim / 4, kv_dim4 = p.n_kv_heads * hd4;
  uint pos = state[1];
  uint lo = (p.window > 0 && pos + 1 > p.window) ? pos + 1 - p.window : 0;
  uint len = pos + 1 - lo, chunk = (len + p.splits - 1) / p.splits;
  uint j0 = lo + min(sp * chunk, len), j1 = lo + min((sp + 1) * chunk, len);

  for (uint d = tid; d < hd4; d += gl_WorkGroupSize.x)
    s_q[d] = vec4(q[h * p.head_dim + 4 * d], q[h * p.head_dim + 4 * d + 1], q[h * p.head_dim + 4 * d + 2],
                  q[h * p.head_dim + 4 * d + 3]);
  barrier();

  float mx = -3.402823466e38;
  for (uint j = j0 + tid; j < j1; j += gl_WorkGroupSize.x) {
    uint kb = j * kv_dim4 + kvh * hd4;
    float s = 0.0;
    for (uint d = 0; d < hd4; ++d) s += dot(s_q[d], vec4(kc4[kb + d]));
    s *= p.scale;
    if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
    s_sc[j - j0] = s;
    mx = max(mx, s);
  }
  mx = workgroup_max(mx);  // its barriers also publish s_sc
  float sum = 0.0;
  for (uint j = j0 + tid; j < j1; j += gl_WorkGroupSize.x) {
    float e = exp(s_sc[j - j0] - mx);
    s_sc[j - j0] = e;
    sum += e;
  }
  sum = workgroup_sum(sum);

  // Weighted sum of v: G = 64 / (head_dim / 4) groups of invocations (head_dim <= 256), each invocation
  // 4 dims, groups striding over the chunk's positions; the groups' partials meet in shared memory.
  uint groups = gl_WorkGroupSize.x / hd4;
  uint g = tid / hd4, d = tid % hd4;
  uint pbase = (h * p.splits + sp) * (p.head_dim + 2);
  vec4 acc = vec4(0.0);
  if (g < groups)
    for (uint j = j0 + g; j < j1; j += groups) acc += s_sc[j - j0] * vec4(vc4[j * kv_dim4 + kvh * hd4 + d]);
  s_part[tid] = acc;
  barrier();
  if (tid < hd4) {
    vec4 t = vec4(0.0);
    for (uint k = 0; k < groups; ++k) t += s_part[k * hd4 + tid];
    part[pbase + 4 * tid] = t.x;
    part[pbase + 4 * tid + 1] = t.y;
    part[pbase + 4 * tid + 2] = t.z;
    part[pbase + 4 * tid + 3] = t.w;
  }
  if (tid == 0) {
    part[pbase + p.head_dim] = j1 > j0 ? mx : -3.402823466e38;
    part[pbase + p.head_dim + 1] = sum;
  }

  // The last workgroup of this head merges.
  memoryBarrierBuffer();
  barrier();
  if (tid == 0) {
    s_last = atomicAdd(counter[h], 1u) == p.splits - 1u;
  }
  barrier();
  if (!s_last) return;
  memoryBarrierBuffer();
  float big = -3.402823466e38;
  for (uint s = 0; s < p.splits; ++s) big = max(big, part[(h * p.splits + s) * (p.head_dim + 2) + p.head_dim]);
  float den = 0.0;
  for (uint s = 0; s < p.splits; ++s) {
    uint b = (h * p.splits + s) * (p.head_dim + 2);
    den += exp(part[b + p.head_dim] - big) * part[b + p.head_dim + 1];
  }
  for (uint d = tid; d < p.head_dim; d += gl_WorkGroupSize.x) {
    float num = 0.0;
    for (uint s = 0; s < p.splits; ++s) {
      uint b = (h * p.splits + s) * (p.head_dim + 2);
      num += exp(part[b + p.head_dim] - big) * part[b + d];
    }
    o[h * p.head_dim + d] = num / den;
  }
  if (tid == 0) counter[h] = 0u;
}
