#version 450
// Prefill attention on tensor cores in one pass over the keys (flash attention): the inputs and output of
// attention_tiled.comp (causal, optional sliding window, softcap, GQA) for head_dim = CM_HD (64 or 128).
//
// A workgroup of 4 subgroups takes 64 consecutive query rows of head h, each subgroup 16 of them. The
// workgroup walks the keys those rows see KB at a time: it stages the block's K and V rows (f16, from the
// cache) in shared memory once for all 4 subgroups, the next block's global loads issued before the current
// block's math. Per block, each subgroup
//   * computes S = Q K^T (16 x KB) on the tensor cores and puts it in shared memory,
//   * takes the online softmax row by row (2 lanes per row): the new running maximum m, the factor
//     alpha = e^(m_old - m) for what is already summed, P = e^(s - m) in f16 (in [0, 1]) and l,
//   * scales its output fragments by alpha row by row and adds P V.
// Accumulator fragments hide which element sits in which row, so "row by row" needs the map: a fragment
// loaded from a 16 x 16 matrix of row numbers tells each lane the row of each of its elements, once.
// The output is divided by l at the end. It replaces session 5's two-pass kernel (attention_cm.comp), which paid
// Q K^T twice and each 16-key step's round trips from L2 with nothing staged, and was slower than the scalar tiled
// kernel: on the H100 the 8B's attention at 512 tokens takes 1.8 ms here, 7.1 tiled, 13.5 two-pass.
// ATTN_OUT_F16 (the *_f16o variants) writes the output in f16 (packHalf2x16, as to_f16 rounds), the o projection's
// tensor-core input, so the model's to_f16 pass over it disappears.
//
// Rows past the cache's last written position may hold any bits (NaN included): they are zeroed when staged,
// and their scores are masked. Precision: Q and P are rounded to f16 (K and V are f16 already); products,
// sums, m and l are f32.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
#include "params.h"

#ifndef CM_HD
#define CM_HD 128
#endif
#ifndef FA_KB
#define FA_KB 32
#endif
const uint HD = CM_HD, NF = HD / 16u, WARPS = 4u, KB = FA_KB, NJ = KB / 16u;
layout(local_size_x = 128) in;  // WARPS subgroups of 32 (Device::has_coopmat_f16)
layout(push_constant) uniform PC { AttentionParams p; };
layout(std430, binding = 0) readonly buffer Q { vec4 q4[]; };
layout(std430, binding = 1) readonly buffer K { uvec4 k8[]; };  // 8 f16 values each
layout(std430, binding = 2) readonly buffer V { uvec4 v8[]; };
#ifdef ATTN_OUT_F16
layout(std430, binding = 3) writeonly buffer O { uvec4 o8[]; };  // 8 f16 values each
#else
layout(std430, binding = 3) buffer O { float o[]; };
#endif
layout(std430, binding = 5) readonly buffer S { uint state[]; };

#define F16MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
const float NEG = -3.402823466e38;  // a masked score

// K rows [0, KB) then V rows [KB, 2 KB), each HD f16 plus one uvec4 of padding (a fragment load's 8 rows
// on distinct banks). At the start the same space holds each subgroup's 16 Q rows (4 x 16 <= 2 KB rows).
const uint LT = HD / 8u + 1u;
shared uvec4 kv[2u * KB * LT];
// Per subgroup: scores (16 x KB f32; first the row-number matrix), P (16 x KB f16 + one uvec4 a row), and
// each row's alpha, then 1 / l.
const uint LP = KB / 8u + 1u;
shared float ss[WARPS * 16u * KB];
shared uvec4 sp[WARPS * 16u * LP];
shared float sa[WARPS * 16u];

void sync() {  // between a subgroup's shared-memory writes and its reads (and back)
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// The KV rows of one block, held in registers between fetch and store: invocation t moves the groups
// g = t + 128 i of K and of V (row g / (HD / 8), 8 values (g % (HD / 8)) ..).
const uint GV = (KB * HD / 8u + 127u) / 128u;
uvec4 staged_k[GV], staged_v[GV];
uint kvd8, col8;

void fetch(uint kb, uint last) {
  [[unroll]] for (uint i = 0; i < GV; ++i) {
    uint g = gl_LocalInvocationID.x + 128u * i, j = kb + g / (HD / 8u);
    bool in_ = g < KB * HD / 8u && j <= last;
    uint a = j * kvd8 + col8 + g % (HD / 8u);
    staged_k[i] = in_ ? k8[a] : uvec4(0u);
    staged_v[i] = in_ ? v8[a] : uvec4(0u);
  }
}

void store() {
  [[unroll]] for (uint i = 0; i < GV; ++i) {
    uint g = gl_LocalInvocationID.x + 128u * i, r = g / (HD / 8u), c = g % (HD / 8u);
    if (g < KB * HD / 8u) {
      kv[r * LT + c] = staged_k[i];
      kv[(KB + r) * LT + c] = staged_v[i];
    }
  }
}

void main() {
  uint h = gl_WorkGroupID.x, w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint wbase = (gl_NumWorkGroups.y - 1u - gl_WorkGroupID.y) * (16u * WARPS);  // longest blocks first
  uint rbase = wbase + 16u * w;
  uint nr = rbase < p.rows ? min(16u, p.rows - rbase) : 0u;  // this subgroup's rows (0: it only stages)
  uint kvh = h / (p.n_heads / p.n_kv_heads);
  kvd8 = p.n_kv_heads * HD / 8u;
  col8 = kvh * HD / 8u;
  uint pos0 = state[1];
  uint last = pos0 + min(p.rows, wbase + 16u * WARPS) - 1u;  // the workgroup's last row's position
  uint lo_wg = bs_window_lo(pos0 + wbase, p.window);
  uint posA = pos0 + rbase, posZ = posA + max(nr, 1u) - 1u;  // this subgroup's first and last positions
  uint lo_sg = bs_window_lo(posA, p.window);
  uint sb = w * 16u * KB, pb = w * 16u * LP;

  // Q rows -> f16 (rows past the last are zero), through shared memory into NF A fragments.
  uint qb = w * 16u * LT;
  for (uint i = lane; i < 16u * (HD / 8u); i += 32u) {
    uint r = i / (HD / 8u), g = i % (HD / 8u);
    uvec4 hq = uvec4(0u);
    if (r < nr) {
      uint b = ((rbase + r) * p.n_heads + h) * (HD / 4u) + 2u * g;
      vec4 a = q4[b], c = q4[b + 1u];
      hq = uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(c.xy), packHalf2x16(c.zw));
    }
    kv[qb + r * LT + g] = hq;
  }
  // The row of each of this lane's accumulator elements, from a fragment of row numbers.
  for (uint e = lane; e < 256u; e += 32u) ss[sb + e] = float(e / 16u);
  sync();
  F16MAT qa[NF];
  [[unroll]] for (uint f = 0; f < NF; ++f) coopMatLoadNV(qa[f], kv, qb + 2u * f, LT, false);
  F32MAT rows_f;
  coopMatLoadNV(rows_f, ss, sb, 16u, false);
  uint row_of[8];  // a 16 x 16 f32 fragment is 8 elements a lane (256 / 32) on the devices that run this
  [[unroll]] for (int i = 0; i < 8; ++i) row_of[i] = i < rows_f.length() ? uint(rows_f[i]) : 0u;
  barrier();  // Q is out of kv before the first block goes in

  // This lane's half row of the scores: row r, columns c0 .. c0 + KB / 2 - 1.
  uint r = lane >> 1, c0 = (lane & 1u) * (KB / 2u), pos_r = posA + r;
  uint lo_r = bs_window_lo(pos_r, p.window);
  bool row_ok = r < nr;
  float m = NEG, l = 0.0;
  F32MAT acc[NF];
  [[unroll]] for (uint f = 0; f < NF; ++f) acc[f] = F32MAT(0.0);

  uint kb0 = lo_wg - lo_wg % KB;
  fetch(kb0, last);
  for (uint kb = kb0; kb <= last; kb += KB) {
    store();
    barrier();
    if (kb + KB <= last) fetch(kb + KB, last);  // in flight during this block's math
    // Blocks wholly after this subgroup's rows, or wholly before its window, change nothing.
    if (nr > 0u && kb <= posZ && kb + KB > lo_sg) {
      [[unroll]] for (uint j = 0; j < NJ; ++j) {
        F32MAT s = F32MAT(0.0);
        [[unroll]] for (uint f = 0; f < NF; ++f) {
          F16MAT kt;  // K^T: column n is key kb + 16 j + n, k-contiguous
          coopMatLoadNV(kt, kv, (16u * j) * LT + 2u * f, LT, true);
          s = coopMatMulAddNV(qa[f], kt, s);
        }
        coopMatStoreNV(s, ss, sb + 16u * j, KB, false);
      }
      sync();
      // Online softmax over this lane's KB / 2 scores; the two lanes of a row agree through a shuffle.
      float sc[KB / 2u], mx = NEG;
      [[unroll]] for (uint c = 0; c < KB / 2u; ++c) {
        uint j = kb + c0 + c;
        float v = ss[sb + r * KB + c0 + c] * p.scale;
        v = p.softcap > 0.0 ? p.softcap * tanh(v / p.softcap) : v;
        sc[c] = (!row_ok || j > pos_r || j < lo_r) ? NEG : v;
        mx = max(mx, sc[c]);
      }
      mx = max(mx, subgroupShuffleXor(mx, 1u));
      float mn = max(m, mx);
      float alpha = (m == NEG || mn == NEG) ? (mn == NEG ? 1.0 : 0.0) : exp(m - mn);
      float sum = 0.0;
      uint pk[KB / 4u];
      [[unroll]] for (uint c = 0; c < KB / 2u; c += 2u) {
        float e0 = sc[c] == NEG ? 0.0 : exp(sc[c] - mn), e1 = sc[c + 1u] == NEG ? 0.0 : exp(sc[c + 1u] - mn);
        sum += e0 + e1;
        pk[c / 2u] = packHalf2x16(vec2(e0, e1));
      }
      sum += subgroupShuffleXor(sum, 1u);
      l = l * alpha + sum;
      m = mn;
      [[unroll]] for (uint q = 0; q < KB / 8u / 2u; ++q)
        sp[pb + r * LP + (lane & 1u) * (KB / 16u) + q] = uvec4(pk[4u * q], pk[4u * q + 1u], pk[4u * q + 2u], pk[4u * q + 3u]);
      if ((lane & 1u) == 0u) sa[w * 16u + r] = alpha;
      sync();
      // O = diag(alpha) O + P V.
      float al[8];
      [[unroll]] for (uint i = 0; i < 8u; ++i) al[i] = sa[w * 16u + row_of[i]];
      [[unroll]] for (uint f = 0; f < NF; ++f)
        [[unroll]] for (int i = 0; i < 8; ++i)
          if (i < acc[f].length()) acc[f][i] *= al[i];
      [[unroll]] for (uint j = 0; j < NJ; ++j) {
        F16MAT pa;
        coopMatLoadNV(pa, sp, pb + 2u * j, LP, false);
        [[unroll]] for (uint f = 0; f < NF; ++f) {
          F16MAT vb;  // V rows kb + 16 j .., row-major
          coopMatLoadNV(vb, kv, (KB + 16u * j) * LT + 2u * f, LT, false);
          acc[f] = coopMatMulAddNV(pa, vb, acc[f]);
        }
      }
    }
    barrier();  // every subgroup is done with kv before the next block is stored
  }
  if (nr == 0u) return;

  // O / l, rows rbase .. rbase + nr - 1 of [rows, n_heads, HD]: whole blocks straight to memory, a ragged
  // one through ss.
  if ((lane & 1u) == 0u) sa[w * 16u + r] = l > 0.0 ? 1.0 / l : 0.0;
  sync();
  float inv[8];
  [[unroll]] for (uint i = 0; i < 8u; ++i) inv[i] = sa[w * 16u + row_of[i]];
  uint ostride = p.n_heads * HD, ob = (rbase * p.n_heads + h) * HD;
#ifdef ATTN_OUT_F16
  // Each fragment goes through ss: lane l packs 8 values of row l / 2 into one 16-byte store (HD, ostride and ob are
  // multiples of 8).
  uint er = lane >> 1, ec = (lane & 1u) * 8u;
#endif
  [[unroll]] for (uint f = 0; f < NF; ++f) {
    [[unroll]] for (int i = 0; i < 8; ++i)
      if (i < acc[f].length()) acc[f][i] *= inv[i];
#ifdef ATTN_OUT_F16
    coopMatStoreNV(acc[f], ss, sb, 16u, false);
    sync();
    if (er < nr) {
      uint b = sb + 16u * er + ec;
      o8[(ob + er * ostride + 16u * f + ec) / 8u] =
          uvec4(packHalf2x16(vec2(ss[b], ss[b + 1u])), packHalf2x16(vec2(ss[b + 2u], ss[b + 3u])),
                packHalf2x16(vec2(ss[b + 4u], ss[b + 5u])), packHalf2x16(vec2(ss[b + 6u], ss[b + 7u])));
    }
    sync();
#else
    if (nr == 16u) {
      coopMatStoreNV(acc[f], o, ob + 16u * f, ostride, false);
    } else {
      coopMatStoreNV(acc[f], ss, sb, 16u, false);
      sync();
      for (uint e = lane; e < 256u; e += 32u)
        if (e / 16u < nr) o[ob + (e / 16u) * ostride + 16u * f + e % 16u] = ss[sb + e];
      sync();
    }
#endif
  }
}
