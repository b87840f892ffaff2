#version 450
// The gated delta rule (Qwen 3.5's Gated DeltaNet), token by token, and the gated RMSNorm of its output.
// One workgroup per v head h, one invocation per column j of the head's state S [k_dim, v_dim]: the
// column lives in registers for all rows, since every step touches only its own column:
//   S[:, j] *= exp(g);  delta = beta (v[j] - k . S[:, j]);  S[:, j] += k delta;  o[j] = q . S[:, j]
// with q, k the l2-normalized q/k head h / (v_heads / k_heads) (q also scaled by 1/sqrt(k_dim)),
// g = -exp(A_log[h]) softplus(a + dt_bias[h]), beta = sigmoid(b). Then o = rmsnorm(o) * w * silu(z) over
// the head. This is the decode step (rows = 1); prefill uses it over a whole chunk. state.pos == 0 starts
// a sequence from a zero state.
#include "common.glsl"
#include "block_sum.glsl"
#include "params.h"
layout(local_size_x = 128, local_size_x_id = 0) in;  // = v_dim
layout(constant_id = 1) const uint DK = 128;
layout(push_constant) uniform PC { DeltaRuleParams p; };
layout(std430, binding = 0) readonly buffer QKV { float qkv[]; };  // [rows, 2 k_heads DK + v_heads v_dim] (after the conv)
layout(std430, binding = 1) readonly buffer Z { float z[]; };      // [rows, v_heads, v_dim]
layout(std430, binding = 2) readonly buffer A { float a[]; };      // [rows, v_heads]
layout(std430, binding = 3) readonly buffer B { float b[]; };      // [rows, v_heads]
layout(std430, binding = 4) readonly buffer AL { float a_log[]; }; // [v_heads]
layout(std430, binding = 5) readonly buffer DT { float dt_bias[]; };
layout(std430, binding = 6) readonly buffer NW { float norm_w[]; };  // [v_dim]
layout(std430, binding = 7) buffer SS { float S[]; };              // [v_heads, DK, v_dim]
layout(std430, binding = 8) readonly buffer ST { uint state[]; };
layout(std430, binding = 9) writeonly buffer O { float o[]; };     // [rows, v_heads, v_dim]

shared float qs[DK], ks[DK];

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }  // torch's threshold

void main() {
  const uint h = gl_WorkGroupID.x, j = gl_LocalInvocationID.x, DV = gl_WorkGroupSize.x;
  const uint kh = h / (p.v_heads / p.k_heads);
  const uint width = 2u * p.k_heads * DK + p.v_heads * DV;
  const bool fresh = state[1] == 0u;
  float col[DK];
  for (uint i = 0u; i < DK; ++i) col[i] = fresh ? 0.0 : S[(h * DK + i) * DV + j];
  const float neg_a = -exp(a_log[h]), dt = dt_bias[h], nw = norm_w[j];
  for (uint t = 0u; t < p.rows; ++t) {
    const uint row = t * width;
    float sq = 0.0, sk = 0.0;
    for (uint i = j; i < DK; i += DV) {
      float qv = qkv[row + kh * DK + i], kv = qkv[row + (p.k_heads + kh) * DK + i];
      qs[i] = qv;
      ks[i] = kv;
      sq += qv * qv;
      sk += kv * kv;
    }
    // block_sum's barriers also publish qs / ks.
    const float nq = inversesqrt(block_sum(sq, DV) + 1e-6) * p.q_scale, nk = inversesqrt(block_sum(sk, DV) + 1e-6);
    const float decay = exp(neg_a * softplus(a[t * p.v_heads + h] + dt));
    const float beta = 1.0 / (1.0 + exp(-b[t * p.v_heads + h]));
    float m = 0.0;
    for (uint i = 0u; i < DK; ++i) {
      col[i] *= decay;
      m += col[i] * ks[i];
    }
    const float delta = beta * (qkv[row + 2u * p.k_heads * DK + h * DV + j] - m * nk) * nk;
    float acc = 0.0;
    for (uint i = 0u; i < DK; ++i) {
      col[i] += ks[i] * delta;
      acc += col[i] * qs[i];
    }
    acc *= nq;
    // The gated norm; its barriers also keep the next row's qs / ks writes after these reads.
    const float scale = inversesqrt(block_sum(acc * acc, DV) / float(DV) + p.eps);
    const float zz = z[(t * p.v_heads + h) * DV + j];
    o[(t * p.v_heads + h) * DV + j] = acc * scale * nw * (zz / (1.0 + exp(-zz)));
  }
  for (uint i = 0u; i < DK; ++i) S[(h * DK + i) * DV + j] = col[i];
}
