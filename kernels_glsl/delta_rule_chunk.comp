#version 450
// The gated delta rule over a prefill chunk in the chunked (WY / UT) form, then the gated RMSNorm: the same
// results as delta_rule.comp's token-by-token steps (see there for the rule), with the token-to-token
// dependencies of a chunk of CH tokens resolved by one triangular solve instead of CH barrier-separated steps.
// One workgroup per v head h, one invocation per state column j (local size = v_dim). Within a chunk, with
// G_t = sum_{s<=t} g_s, unit k_t, scaled unit q_t and the state S0 at the chunk's start:
//   delta_t = beta_t (v_t - e^{G_t} S0^T k_t) - sum_{s<t} A[t,s] delta_s,  A[t,s] = beta_t e^{G_t - G_s} k_t.k_s
//   o_t     = e^{G_t} S0^T q_t + sum_{s<=t} e^{G_t - G_s} (q_t.k_s) delta_s
//   S       = e^{G_last} S0 + sum_s e^{G_last - G_s} k_s delta_s^T
// (delta_t is the v-correction that step t adds, beta (v - k^T S_{t-1} decayed)). The CH x CH matrices and
// the chunk's q / k sit in shared memory; each invocation keeps its state column in registers throughout.
// state.pos == 0 starts a sequence from a zero state.
#include "common.glsl"
#include "block_sum.glsl"
#include "params.h"
layout(local_size_x = 128, local_size_x_id = 0) in;  // = v_dim
layout(constant_id = 1) const uint DK = 128;
// Tokens per chunk: the host fits it to the device's shared memory (delta_chunk). The defaults fit 32 KiB, the
// least a device offers, because validation checks the unspecialized module too.
layout(constant_id = 2) const uint CH = 16;
layout(push_constant) uniform PC { DeltaRuleParams p; };
layout(std430, binding = 0) readonly buffer QKV { float qkv[]; };  // [rows, 2 k_heads DK + v_heads v_dim] (after the conv)
layout(std430, binding = 1) readonly buffer Z { float z[]; };      // [rows, v_heads, v_dim]
layout(std430, binding = 2) readonly buffer A_ { float a[]; };     // [rows, v_heads]
layout(std430, binding = 3) readonly buffer B_ { float b[]; };     // [rows, v_heads]
layout(std430, binding = 4) readonly buffer AL { float a_log[]; }; // [v_heads]
layout(std430, binding = 5) readonly buffer DT { float dt_bias[]; };
layout(std430, binding = 6) readonly buffer NW { float norm_w[]; };  // [v_dim]
layout(std430, binding = 7) buffer SS { float S[]; };              // [v_heads, DK, v_dim]
layout(std430, binding = 8) readonly buffer ST { uint state[]; };
layout(std430, binding = 9) writeonly buffer O { float o[]; };     // [rows, v_heads, v_dim]

shared float ks[CH * DK], qs[CH * DK];  // the chunk's k (unit) and q (unit, times q_scale)
shared float am[CH * CH], bm[CH * CH];  // A[t,s] (s < t) and e^{G_t - G_s} q_t.k_s (s <= t)
shared float gs[CH], betas[CH], nk[CH], nq[CH];

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }  // torch's threshold

void main() {
  const uint h = gl_WorkGroupID.x, j = gl_LocalInvocationID.x, DV = gl_WorkGroupSize.x;
  const uint kh = h / (p.v_heads / p.k_heads);
  const uint width = 2u * p.k_heads * DK + p.v_heads * DV;
  const uint qoff = kh * DK, koff = (p.k_heads + kh) * DK, voff = 2u * p.k_heads * DK + h * DV;
  const bool fresh = state[1] == 0u;
  float col[DK];
  for (uint i = 0u; i < DK; ++i) col[i] = fresh ? 0.0 : S[(h * DK + i) * DV + j];
  float delta[CH];
  const float neg_a = -exp(a_log[h]), dt = dt_bias[h], nw = norm_w[j];
  for (uint c0 = 0u; c0 < p.rows; c0 += CH) {
    const uint L = min(CH, p.rows - c0);
    for (uint e = j; e < L * DK; e += DV) {
      uint t = e / DK, i = e % DK, row = (c0 + t) * width;
      ks[e] = qkv[row + koff + i];
      qs[e] = qkv[row + qoff + i];
    }
    barrier();
    // Per token: the l2 norms, g and beta; then the cumulative G (one invocation, CH adds).
    for (uint t = j; t < L; t += DV) {
      float sk = 0.0, sq = 0.0;
      for (uint i = 0u; i < DK; ++i) {
        sk += ks[t * DK + i] * ks[t * DK + i];
        sq += qs[t * DK + i] * qs[t * DK + i];
      }
      nk[t] = inversesqrt(sk + 1e-6);
      nq[t] = inversesqrt(sq + 1e-6) * p.q_scale;
      gs[t] = neg_a * softplus(a[(c0 + t) * p.v_heads + h] + dt);
      betas[t] = 1.0 / (1.0 + exp(-b[(c0 + t) * p.v_heads + h]));
    }
    barrier();
    if (j == 0u)
      for (uint t = 1u; t < L; ++t) gs[t] += gs[t - 1u];
    for (uint e = j; e < L * DK; e += DV) {
      ks[e] *= nk[e / DK];
      qs[e] *= nq[e / DK];
    }
    barrier();
    for (uint e = j; e < L * L; e += DV) {
      uint t = e / L, s = e % L;
      float kk = 0.0, qk = 0.0;
      if (s <= t)
        for (uint i = 0u; i < DK; ++i) {
          kk += ks[t * DK + i] * ks[s * DK + i];
          qk += qs[t * DK + i] * ks[s * DK + i];
        }
      float d = s <= t ? exp(gs[t] - gs[s]) : 0.0;
      am[t * CH + s] = s < t ? betas[t] * d * kk : 0.0;
      bm[t * CH + s] = d * qk;
    }
    barrier();
    // This column: forward substitution for delta, the outputs, then the state for the next chunk.
    for (uint t = 0u; t < L; ++t) {
      float sk = 0.0, sq = 0.0;
      for (uint i = 0u; i < DK; ++i) {
        sk += ks[t * DK + i] * col[i];
        sq += qs[t * DK + i] * col[i];
      }
      const float decay = exp(gs[t]);
      float d = betas[t] * (qkv[(c0 + t) * width + voff + j] - decay * sk);
      float acc = decay * sq;
      for (uint s = 0u; s < t; ++s) {
        d -= am[t * CH + s] * delta[s];
        acc += bm[t * CH + s] * delta[s];
      }
      delta[t] = d;
      acc += bm[t * CH + t] * d;
      const float scale = inversesqrt(block_sum(acc * acc, DV) / float(DV) + p.eps);
      const float zz = z[((c0 + t) * p.v_heads + h) * DV + j];
      o[((c0 + t) * p.v_heads + h) * DV + j] = acc * scale * nw * (zz / (1.0 + exp(-zz)));
    }
    const float glast = gs[L - 1u];
    for (uint t = 0u; t < L; ++t) delta[t] *= exp(glast - gs[t]);
    for (uint i = 0u; i < DK; ++i) {
      float s = exp(glast) * col[i];
      for (uint t = 0u; t < L; ++t) s += ks[t * DK + i] * delta[t];
      col[i] = s;
    }
    barrier();  // before the next chunk overwrites the shared arrays
  }
  for (uint i = 0u; i < DK; ++i) S[(h * DK + i) * DV + j] = col[i];
}
