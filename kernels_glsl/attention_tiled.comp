#version 450
// Prefill attention, tiled (flash-attention on the CUDA cores): workgroup (h, b) takes BR = 16
// consecutive query rows of head h (positions state.pos + 16b + r) and walks the keys they see in tiles
// of BC = 32 positions. Each K/V tile is loaded into shared memory once for all 16 rows, the scores of
// a tile go through an online softmax (running max m and sum l per row, the accumulator rescaled by
// e^(m_old - m_new)), and nothing but the output leaves the workgroup. attention.comp instead takes one
// row per workgroup and re-reads the whole K/V prefix for every row, with a serial walk over positions:
// 6 ms of a 25 ms 512-token prefill of Llama-3.2-1B on the H100.
//
// Causal, with an optional sliding window and softcap; GQA (h reads kv head h / (n_heads / n_kv_heads)).
// head_dim a multiple of 4, at most 128 (the model falls back to attention.comp above that).
// Threads: r = tid / 16 is the row; lane = tid % 16 computes the scores of keys lane and lane + 16 of
// the tile and owns output dims [4 lane, 4 lane + 4) and [4 (lane + 16), ...).
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common.glsl"
#include "params.h"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { AttentionParams p; };
layout(std430, binding = 0) readonly buffer Q { vec4 q4[]; };
layout(std430, binding = 1) readonly buffer K { f16vec4 kc4[]; };
layout(std430, binding = 2) readonly buffer V { f16vec4 vc4[]; };
layout(std430, binding = 3) writeonly buffer O { vec4 o4[]; };
layout(std430, binding = 5) readonly buffer S { uint state[]; };
#ifdef ATTN_SINKS  // GPT-OSS: a per-head logit that joins the softmax's denominator and weighs no value
layout(std430, binding = 7) readonly buffer Sinks { float sinks[]; };
#endif


const uint BR = 16, BC = 32, MAXD4 = 32;  // rows, keys per tile, head_dim / 4 at most
const float NEG = -3.402823466e38;         // a masked score
shared vec4 sQ[BR * MAXD4];
shared f16vec4 sK[BC * (MAXD4 + 1)];  // padded rows: the 16 lanes of a row read 16 different keys
shared f16vec4 sV[BC * MAXD4];         // K and V stay f16 (as in the cache): 27 KiB in all, under 32 KiB
shared float sP[BR * BC];
shared float sS[BR * 16];  // per-lane partial (max, then sum) of a row

// Max and sum over the 16 lanes of a row (invocations 16 r .. 16 r + 15, within one subgroup of 16 or more).
float row_max(float v) {
  for (uint o = 8u; o > 0u; o >>= 1) v = max(v, subgroupShuffleXor(v, o));
  return v;
}
float row_sum(float v) {
  for (uint o = 8u; o > 0u; o >>= 1) v += subgroupShuffleXor(v, o);
  return v;
}

void main() {
  // Row blocks in reverse: the GPU starts workgroups in index order, and a causal block's work grows with
  // its rows' positions, so the longest blocks start first and the short ones fill in behind them.
  uint h = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
  uint row0 = (gl_NumWorkGroups.y - 1u - gl_WorkGroupID.y) * BR;
  uint r = tid / 16u, lane = tid % 16u;
  uint kvh = h / (p.n_heads / p.n_kv_heads), hd4 = p.head_dim / 4u, kvd4 = p.n_kv_heads * hd4;
  uint nrows = min(BR, p.rows - row0);
  uint pos_first = state[1] + row0, pos_last = pos_first + nrows - 1u, pos_r = pos_first + r;
  uint lo0 = bs_window_lo(pos_first, p.window);

  for (uint i = tid; i < BR * hd4; i += 256u) {
    uint rr = i / hd4, d = i % hd4;
    sQ[rr * MAXD4 + d] = rr < nrows ? q4[((row0 + rr) * p.n_heads + h) * hd4 + d] : vec4(0.0);
  }
  // The 16 lanes of a row keep identical copies of its running max m and sum l.
  float m = NEG, l = 0.0;
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0);
  barrier();

  for (uint j0 = lo0; j0 <= pos_last; j0 += BC) {
    for (uint i = tid; i < BC * hd4; i += 256u) {
      uint c = i / hd4, d = i % hd4, j = j0 + c;
      bool in_range = j <= pos_last;
      uint src = j * kvd4 + kvh * hd4 + d;
      sK[c * (MAXD4 + 1u) + d] = in_range ? kc4[src] : f16vec4(0.0);
      sV[c * MAXD4 + d] = in_range ? vc4[src] : f16vec4(0.0);
    }
    barrier();
    float sc[2];
    for (uint cc = 0u; cc < 2u; ++cc) {
      uint c = lane + 16u * cc, j = j0 + c;
      bool ok = r < nrows && j <= pos_r && (p.window == 0u || j + p.window > pos_r);
      float s = NEG;
      if (ok) {
        s = 0.0;
        for (uint d = 0u; d < hd4; ++d) s += dot(sQ[r * MAXD4 + d], vec4(sK[c * (MAXD4 + 1u) + d]));
        s *= p.scale;
        if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
      }
      sc[cc] = s;
    }
    // Online softmax, every lane of the row at once: the row's tile max from the lanes' maxima, then
    // each lane exponentiates its two scores and the lanes' sums are added. Where a subgroup holds whole
    // rows (16 lanes or more: the H100's 32) both go through subgroup shuffles (row_max, row_sum) and the
    // row's P is shared within its subgroup; otherwise (lavapipe's 8) through shared memory and workgroup
    // barriers.
    const bool rows_in_subgroup = gl_SubgroupSize >= 16u;  // uniform: the branches below may hold barriers
    float mx = m;
    if (rows_in_subgroup) {
      mx = max(mx, row_max(max(sc[0], sc[1])));
    } else {
      sS[tid] = max(sc[0], sc[1]);
      barrier();
      for (uint i = 0u; i < 16u; ++i) mx = max(mx, sS[r * 16u + i]);
      barrier();  // every lane has read the maxima
    }
    float a = m == NEG ? (mx == NEG ? 1.0 : 0.0) : exp(m - mx);
    float e0 = sc[0] == NEG ? 0.0 : exp(sc[0] - mx), e1 = sc[1] == NEG ? 0.0 : exp(sc[1] - mx);
    m = mx;
    sP[r * BC + lane] = e0;
    sP[r * BC + lane + 16u] = e1;
    float lt = 0.0;
    if (rows_in_subgroup) {
      lt = row_sum(e0 + e1);
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // the row's P, written by its 16 lanes, all in this subgroup
    } else {
      sS[tid] = e0 + e1;
      barrier();
      for (uint i = 0u; i < 16u; ++i) lt += sS[r * 16u + i];
    }
    l = l * a + lt;
    acc0 *= a;
    acc1 *= a;
    for (uint c = 0u; c < BC; ++c) {
      float pc = sP[r * BC + c];
      acc0 += pc * vec4(sV[c * MAXD4 + lane]);
      acc1 += pc * vec4(sV[c * MAXD4 + min(lane + 16u, MAXD4 - 1u)]);
    }
    barrier();  // the next tile overwrites sK, sV, sP
  }

  if (r < nrows) {
    float inv = 1.0 / l;
#ifdef ATTN_SINKS
    float big = max(m, sinks[h]), keep = exp(m - big);
    inv = keep / (l * keep + exp(sinks[h] - big));
#endif
    uint ob = ((row0 + r) * p.n_heads + h) * hd4;
    if (lane < hd4) o4[ob + lane] = acc0 * inv;
    if (lane + 16u < hd4) o4[ob + lane + 16u] = acc1 * inv;
  }
}
