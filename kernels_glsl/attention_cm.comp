#version 450
// Prefill attention on tensor cores (GL_NV_cooperative_matrix, 16x16x16 f16 -> f32): the same inputs
// and output as attention_tiled.comp (causal, optional sliding window, softcap, GQA, GPT-OSS sinks), for
// head_dim = CM_HD (64 or 128: one variant each). Each subgroup owns 16 consecutive query rows of head h
// and walks the keys they see 16 at a time, independently of the other subgroups of its workgroup
// (no workgroup barriers: 4 subgroups share a workgroup only so that they share K/V through L1).
//
// Two passes over the keys instead of an online softmax: a subgroup's output lives in accumulator
// fragments, whose element layout is the driver's, so it cannot be rescaled row by row as the running
// maximum moves. Pass 1 computes S = Q K^T on the tensor cores and keeps only each row's maximum m and
// sum l of e^(s - m); pass 2 recomputes S, forms P = e^(s - m) / l exactly (f16, in [0, 1]) and
// accumulates O += P V. The QK^T products are paid twice (1.5x the math of one pass), all on tensor cores.
//
// Inputs: Q f32 rows (converted to f16 here), K and V straight from the f16 cache: a 16-key fragment of
// K^T (column-major) or V (row-major) is loaded from global memory, stride kv_dim. The fragment that
// reaches past the subgroup's last row may cover cache rows not written yet (any bits, NaN included):
// it is staged through shared memory with those rows zeroed, and its scores are masked before use.
// Precision: Q and P are rounded to f16 (K and V are f16 already); products and sums are f32.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "params.h"

#ifndef CM_HD
#define CM_HD 128
#endif
const uint HD = CM_HD, NF = HD / 16u, WARPS = 4u;
layout(local_size_x = 128) in;  // WARPS subgroups of 32 (Device::has_coopmat_f16)
layout(push_constant) uniform PC { AttentionParams p; };
layout(std430, binding = 0) readonly buffer Q { vec4 q4[]; };
layout(std430, binding = 1) readonly buffer K { uvec4 k8[]; };  // 8 f16 values each
layout(std430, binding = 2) readonly buffer V { uvec4 v8[]; };
layout(std430, binding = 3) buffer O { float o[]; };
layout(std430, binding = 5) readonly buffer S { uint state[]; };
#ifdef ATTN_SINKS  // GPT-OSS: a per-head logit that joins the softmax's denominator and weighs no value
layout(std430, binding = 7) readonly buffer Sinks { float sinks[]; };
#endif

#define F16MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
const float NEG = -3.402823466e38;  // a masked score

// Per subgroup: a 16 x HD f16 tile (Q at the start, then the staged K of an edge fragment; rows padded
// by one uvec4 so a fragment load's 8 rows fall on distinct banks), the staged V, the 16 x 16 scores in
// f32 (also the output of a ragged block), P in f16 and the two half-row (max, sum) pairs of a row.
const uint LT = HD / 8u + 1u, LP = 3u;
shared uvec4 tk[WARPS * 16 * LT];
shared uvec4 tv[WARPS * 16 * LT];
shared float ts[WARPS * 256];
shared uvec4 tp[WARPS * 16 * LP];
shared vec2 tml[WARPS * 32];

void sync() {  // between a subgroup's shared-memory writes and its reads (and back)
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}


// Per-subgroup offsets into the shared tiles, and the rows this subgroup owns (set once in main).
uint tb, sb, pb, posZ, kvd8, col8;

// S = Q K^T for the 16 keys at kb, into ts (row-major 16 x 16). Returns whether the fragment reaches
// past posZ, in which case K and V were staged (rows past posZ zero) and V must be read from tv.
bool scores(uint kb, F16MAT qa[NF]) {
  uint lane = gl_SubgroupInvocationID;
  bool staged = kb + 15u > posZ;
  if (staged) {
    for (uint i = lane; i < 16u * (HD / 8u); i += 32u) {
      uint rr = i / (HD / 8u), g = i % (HD / 8u), j = kb + rr;
      bool in_ = j <= posZ;
      tk[tb + rr * LT + g] = in_ ? k8[j * kvd8 + col8 + g] : uvec4(0u);
      tv[tb + rr * LT + g] = in_ ? v8[j * kvd8 + col8 + g] : uvec4(0u);
    }
    sync();
  }
  F32MAT acc = F32MAT(0.0);
  [[unroll]] for (uint f = 0; f < NF; ++f) {
    F16MAT kt;  // K^T: column n is key kb + n, k-contiguous
    if (staged) coopMatLoadNV(kt, tk, tb + 2u * f, LT, true);
    else coopMatLoadNV(kt, k8, kb * kvd8 + col8 + 2u * f, kvd8, true);
    acc = coopMatMulAddNV(qa[f], kt, acc);
  }
  coopMatStoreNV(acc, ts, sb, 16u, false);
  sync();
  return staged;
}

// The scaled (and soft-capped) score of key j for row r at pos_r, NEG where masked.
float score(uint r, bool row_ok, uint pos_r, uint lo_r, uint j, uint c) {
  if (!row_ok || j > pos_r || j < lo_r) return NEG;
  float s = ts[sb + r * 16u + c] * p.scale;
  return p.softcap > 0.0 ? p.softcap * tanh(s / p.softcap) : s;
}

void main() {
  uint h = gl_WorkGroupID.x, w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint rbase = (gl_NumWorkGroups.y - 1u - gl_WorkGroupID.y) * (16u * WARPS) + 16u * w;  // longest blocks first
  if (rbase >= p.rows) return;
  uint nr = min(16u, p.rows - rbase);
  uint kvh = h / (p.n_heads / p.n_kv_heads);
  kvd8 = p.n_kv_heads * HD / 8u;
  col8 = kvh * HD / 8u;
  uint posA = state[1] + rbase;
  posZ = posA + nr - 1u;
  uint lo = (p.window > 0u && posA + 1u > p.window) ? posA + 1u - p.window : 0u;
  uint kb0 = lo & ~15u;
  tb = w * 16u * LT;
  sb = w * 256u;
  pb = w * 16u * LP;

  // Q rows -> f16 in tk (rows past the last are zero), then into NF A fragments.
  for (uint i = lane; i < 16u * (HD / 8u); i += 32u) {
    uint r = i / (HD / 8u), g = i % (HD / 8u);
    uvec4 hq = uvec4(0u);
    if (r < nr) {
      uint b = ((rbase + r) * p.n_heads + h) * (HD / 4u) + 2u * g;
      vec4 a = q4[b], c = q4[b + 1u];
      hq = uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(c.xy), packHalf2x16(c.zw));
    }
    tk[tb + r * LT + g] = hq;
  }
  sync();
  F16MAT qa[NF];
  [[unroll]] for (uint f = 0; f < NF; ++f) coopMatLoadNV(qa[f], tk, tb + 2u * f, LT, false);
  sync();

  // This lane's half row of every 16 x 16 score block: row r, columns c0 .. c0 + 7.
  uint r = lane >> 1, c0 = (lane & 1u) * 8u, pos_r = posA + r;
  uint lo_r = (p.window > 0u && pos_r + 1u > p.window) ? pos_r + 1u - p.window : 0u;
  bool row_ok = r < nr;

  // Pass 1: each lane's running max and sum over its columns, then the two halves of a row meet.
  float m = NEG, l = 0.0;
  for (uint kb = kb0; kb <= posZ; kb += 16u) {
    scores(kb, qa);
    float s[8], mx = m;
    [[unroll]] for (uint c = 0; c < 8u; ++c) {
      s[c] = score(r, row_ok, pos_r, lo_r, kb + c0 + c, c0 + c);
      mx = max(mx, s[c]);
    }
    if (mx > NEG) {
      l *= exp(m - mx);
      [[unroll]] for (uint c = 0; c < 8u; ++c) l += s[c] == NEG ? 0.0 : exp(s[c] - mx);
      m = mx;
    }
    sync();  // ts is rewritten next step
  }
  tml[w * 32u + lane] = vec2(m, l);
  sync();
  vec2 other = tml[w * 32u + (lane ^ 1u)];
  float mr = max(m, other.x);
  float lr = (m > NEG ? l * exp(m - mr) : 0.0) + (other.x > NEG ? other.y * exp(other.x - mr) : 0.0);
#ifdef ATTN_SINKS
  if (mr > NEG) lr += exp(sinks[h] - mr);
#endif
  float inv = lr > 0.0 ? 1.0 / lr : 0.0;

  // Pass 2: P = e^(s - m) / l in f16, O += P V.
  F32MAT acc_o[NF];
  [[unroll]] for (uint f = 0; f < NF; ++f) acc_o[f] = F32MAT(0.0);
  for (uint kb = kb0; kb <= posZ; kb += 16u) {
    bool staged = scores(kb, qa);
    float e[8];
    [[unroll]] for (uint c = 0; c < 8u; ++c) {
      float s = score(r, row_ok, pos_r, lo_r, kb + c0 + c, c0 + c);
      e[c] = s == NEG ? 0.0 : exp(s - mr) * inv;
    }
    tp[pb + r * LP + (lane & 1u)] = uvec4(packHalf2x16(vec2(e[0], e[1])), packHalf2x16(vec2(e[2], e[3])),
                                          packHalf2x16(vec2(e[4], e[5])), packHalf2x16(vec2(e[6], e[7])));
    sync();
    F16MAT pa;
    coopMatLoadNV(pa, tp, pb, LP, false);
    [[unroll]] for (uint f = 0; f < NF; ++f) {
      F16MAT vb;
      if (staged) coopMatLoadNV(vb, tv, tb + 2u * f, LT, false);
      else coopMatLoadNV(vb, v8, kb * kvd8 + col8 + 2u * f, kvd8, false);
      acc_o[f] = coopMatMulAddNV(pa, vb, acc_o[f]);
    }
    sync();  // ts, tp and the staged tiles are rewritten next step
  }

  // Rows rbase .. rbase + nr - 1 of O ([rows, n_heads, HD]): whole blocks straight to memory, a ragged
  // one through ts.
  uint ostride = p.n_heads * HD, ob = (rbase * p.n_heads + h) * HD;
  [[unroll]] for (uint f = 0; f < NF; ++f) {
    if (nr == 16u) {
      coopMatStoreNV(acc_o[f], o, ob + 16u * f, ostride, false);
    } else {
      coopMatStoreNV(acc_o[f], ts, sb, 16u, false);
      sync();
      for (uint e = lane; e < 256u; e += 32u)
        if (e / 16u < nr) o[ob + (e / 16u) * ostride + 16u * f + e % 16u] = ts[sb + e];
      sync();
    }
  }
}
