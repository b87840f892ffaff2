#version 450
// Decode attention, split over the context (flash-decoding): workgroup (h, s) takes one of the chunks
// of the window [lo, pos] for head h, and writes its partial softmax state (max m, sum l, unnormalized
// o = sum_j exp(score_j - m) v_j) to `part`. The last workgroup of a head to finish (an atomic count per
// head) merges the partials: o = sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s.
// The one-workgroup-per-head kernel (attention.comp) walks the whole context serially in 32 or so
// workgroups; here heads x S workgroups share it, with no second dispatch or barrier for the merge.
//
// The grid is fixed when the decode loop is recorded (S = splits >= max_ctx / MAX_CHUNK), but the
// window grows by one position per token, so the chunking is chosen at run time from the position:
// chunks of max(MIN_CHUNK, ceil(len / S)) positions, and only the first n_act = ceil(len / chunk)
// workgroups of a head work; the rest return at once. Short contexts thus take a few full chunks
// instead of S slivers (a sliver of 18 positions left 46 of 64 invocations idle, and the merge then
// walked S partials through L2 serially: 23 us per layer on the H100 at 576 positions).
//
// Latency, not bandwidth, bounds this kernel (a chunk's K and V are a few KiB), so each workgroup has
// 256 invocations that keep many independent loads in flight: 4 invocations per position for the
// scores (64 positions at once, each reading every 4th 8-byte piece of the key row: 4 of them, 32
// contiguous bytes, per step), and 256 / (head_dim / 4) groups striding over the positions for the
// weighted sum of V. (The first version had one invocation per position and 64 per workgroup: serial
// chains of 16-32 dependent L2 round trips per workgroup, 23-39 us per layer on the H100.) Each
// invocation also issues all its loads of a pass before it uses the first (KU, VU, MU). On the H200 that
// took the 8B f16's attention from 0.567 to 0.515 ms a step and left the 1B's as it was
// (benchmarks/results/2026-11-28-h200-session20.md, E4): at 640 positions the loads are ~2 of a
// layer's ~14 us on the 1B, against ~4 for the dispatch, ~3 for the merge and ~5 for the rest (E5).
//
// BATCH_SLOTS (serve's batched decode, the *_slots variants): one dispatch for every sequence of a batch,
// grid (n_heads, splits x rows): workgroup row y is split y % splits of sequence y / splits, with its own
// q and o rows, position (word 1 of its step state, rows STATE_WORDS words apart), partials and arrival
// counts (row-major regions of bindings 4 and 5), and caches, read through the addresses binding 7 holds
// (uvec4 per row: k cache, v cache).
//
// ATTN_OUT_F16 (the *_slots_f16o variants): o written as f16, the input serve's tensor-core o projection
// reads (it took a to_f16 dispatch and a barrier a layer; the values round exactly as to_f16 rounded them).
//
// One query row (decode). head_dim <= 256 (4 dims per invocation). Scores live in shared memory; f16 K
// and V are read as 8-byte vectors.
//
// ATTN_CHAIN (the _chain variant; decode on the per-phase path): chained dispatches (chain.glsl). A working workgroup
// waits for the q, k and v projections before it reads q or the cache, and each head's merge counts itself done, so the
// o projection after it waits for n_heads of them. The plain form only (not ATTN_GQA).
#extension GL_EXT_control_flow_attributes : require
#ifdef ATTN_CHAIN
#extension GL_KHR_memory_scope_semantics : require
#define CHAIN
#endif
#include "common.glsl"
#include "params.h"
#include "kv_type.glsl"
#include "chain.glsl"
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { AttentionSplitParams p; };
layout(std430, binding = 0) readonly buffer Q { float q[]; };
#ifdef BATCH_SLOTS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
layout(constant_id = 0) const uint STATE_WORDS = 64;
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer KvIn { KV_T4 e[]; };
layout(std430, binding = 7) readonly buffer Caches { uvec4 caches[]; };
#define K4(i) kin.e[i]
#define V4(i) vin.e[i]
#else
layout(std430, binding = 1) readonly buffer K { KV_T4 kc4[]; };
layout(std430, binding = 2) readonly buffer V { KV_T4 vc4[]; };
#define K4(i) kc4[i]
#define V4(i) vc4[i]
#endif
#ifdef ATTN_OUT_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(std430, binding = 3) writeonly buffer O { float16_t o[]; };
#define O_VALUE(v) float16_t(v)
#else
layout(std430, binding = 3) writeonly buffer O { float o[]; };
#define O_VALUE(v) (v)
#endif
layout(std430, binding = 4) coherent buffer P { float part[]; };     // [n_heads][S][head_dim + 2]
layout(std430, binding = 5) coherent buffer C { uint counter[]; };  // [n_heads], zero between uses
layout(std430, binding = 6) readonly buffer S { uint state[]; };
#ifdef ATTN_SINKS  // GPT-OSS: a per-head logit that joins the softmax's denominator and weighs no value
layout(std430, binding = 7) readonly buffer Sinks { float sinks[]; };
#endif


const uint WG = 256, TPP = 4, MAX_HEAD_DIM = 256, MAX_CHUNK = 128, MIN_CHUNK = 64;
// PROBE (timing breakdowns only, wrong outputs; 0 in every kernel that computes; BLUESHIFT_ATTN_PROBE):
// bit 8 returns at once (what the dispatch itself costs), 4 leaves out the key loads, 2 the V loads,
// 1 the merge and its arrival count.
layout(constant_id = 1) const uint PROBE = 0;
// Loads issued together by one invocation: a key row's pieces (all of them at head_dim 256), V rows, and
// the merge's splits (16 at 1024 positions in splits of 64).
const uint KU = MAX_HEAD_DIM / 4 / TPP, VU = 16, MF = 16;
shared vec4 s_q[MAX_HEAD_DIM / 4];
shared float s_sc[MAX_CHUNK];
shared vec4 s_part[WG];  // score quarters, then the V groups' partial sums
shared bool s_last;

// The partial (o, m, l) of query row hq's split sp into part: o the sum of the V groups' accumulators (each
// invocation's acc, none past the groups), m the scores' max, l the weights' sum. In uniform control flow; s_part is
// free after it.
void store_partial(uint hq, uint sp, vec4 acc, float mx, float sum) {
  uint tid = gl_LocalInvocationID.x, hd4 = p.head_dim / 4, groups = WG / hd4;
  s_part[tid] = tid / hd4 < groups ? acc : vec4(0.0);
  barrier();
  uint pbase = (hq * p.splits + sp) * (p.head_dim + 2);
  if (tid < hd4) {
    vec4 t = vec4(0.0);
    for (uint c = 0; c < groups; ++c) t += s_part[c * hd4 + tid];
    part[pbase + 4 * tid] = t.x;
    part[pbase + 4 * tid + 1] = t.y;
    part[pbase + 4 * tid + 2] = t.z;
    part[pbase + 4 * tid + 3] = t.w;
  }
  if (tid == 0) {
    part[pbase + p.head_dim] = mx;
    part[pbase + p.head_dim + 1] = sum;
  }
  barrier();
}

// Element dd of query row hq merged over its n_act splits' partials: MF splits' m, l and partial loaded at once, then
// folded in with a running max (the sums rescaled by e^(old - new) as it grows). Returns (num, den, max): o is num /
// den. Reducing the (m, l) pairs over the workgroup first took four barriers and a second round trip: 1B f16 864 -> 873
// tok/s, 8B f16 192.6 -> 193.5 without them (benchmarks/results/2026-11-28-h200-session21.md, F1).
vec3 merge_partials(uint hq, uint dd, uint n_act) {
  uint base = hq * p.splits * (p.head_dim + 2);
  float big = -3.402823466e38, den = 0.0, num = 0.0;
  for (uint s0 = 0; s0 < n_act; s0 += MF) {
    float ms[MF], ls[MF], ps[MF];
    [[unroll]] for (uint u = 0; u < MF; ++u)
      if (s0 + u < n_act) {
        uint b = base + (s0 + u) * (p.head_dim + 2);
        ms[u] = part[b + p.head_dim];
        ls[u] = part[b + p.head_dim + 1];
        ps[u] = part[b + dd];
      }
    [[unroll]] for (uint u = 0; u < MF; ++u)
      if (s0 + u < n_act) {
        float nb = max(big, ms[u]), a = exp(big - nb), w = exp(ms[u] - nb);
        den = den * a + w * ls[u];
        num = num * a + w * ps[u];
        big = nb;
      }
  }
  return vec3(num, den, big);
}

#ifdef ATTN_GQA
// ATTN_GQA (the _gqa variant: the long-context decode recording's, Model::long_context_from; not with BATCH_SLOTS or
// ATTN_SINKS): workgroup (kv head, split) takes the kv head's G = n_heads / n_kv_heads query heads (2-4) over its
// chunk. Each K and V piece is loaded once for the G heads (the plain form loads it in G workgroups), into G scores (a
// vec4) and G accumulators, and there are G times fewer workgroups: at long contexts the plain form's n_heads x splits
// workgroups take more than one wave. The arrival count is the kv head's, and its last workgroup merges the G heads.
// Each head's sums run in the plain form's order, so the outputs are the same bits. PROBE does not reach this form.
// The grouped form's V positions a round (the plain form's VU is 16): at 4,096 + 128 on the H200, 4 against 16 took the
// 1B f16 from 687.0 to 700.8 tok/s and the 8B f16 from 163.2 to 164.2 (benchmarks/results/2026-12-01-h200-session41.md,
// W17), and the registers from 128 to 116.
const uint VG = 4;
shared vec4 s_qg[MAX_HEAD_DIM];   // the G heads' q rows, G x head_dim / 4 vec4s
shared vec4 s_sc4[MAX_CHUNK];     // a position's G scores, then weights
shared vec4 s_red4[MAX_SUBGROUPS];
vec4 wg_max4(vec4 v) {
  v = subgroupMax(v);
  if (subgroupElect()) s_red4[gl_SubgroupID] = v;
  barrier();
  vec4 r = vec4(-3.402823466e38);
  for (uint i = 0; i < gl_NumSubgroups; ++i) r = max(r, s_red4[i]);
  barrier();
  return r;
}
vec4 wg_sum4(vec4 v) {
  v = subgroupAdd(v);
  if (subgroupElect()) s_red4[gl_SubgroupID] = v;
  barrier();
  vec4 r = vec4(0.0);
  for (uint i = 0; i < gl_NumSubgroups; ++i) r += s_red4[i];
  barrier();
  return r;
}

void main() {
  uint kvh = gl_WorkGroupID.x, sp = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  uint G = p.n_heads / p.n_kv_heads, h0 = kvh * G, hd4 = p.head_dim / 4, kv_dim4 = p.n_kv_heads * hd4;
  uint pos = state[1];
  uint lo = bs_window_lo(pos, p.window);
  uint len = pos + 1 - lo, chunk = max(MIN_CHUNK, (len + p.splits - 1) / p.splits);
  uint n_act = (len + chunk - 1) / chunk;
  if (sp >= n_act) return;  // uniform per workgroup: no barrier has been reached
  uint j0 = lo + sp * chunk, j1 = lo + min((sp + 1) * chunk, len), n = j1 - j0;

  for (uint d = tid; d < G * hd4; d += WG) {
    uint b = h0 * p.head_dim + 4 * d;
    s_qg[d] = vec4(q[b], q[b + 1], q[b + 2], q[b + 3]);
  }
  barrier();

  // Scores: as the plain form's, each key piece dotted with the G heads' q pieces.
  vec4 mx = vec4(-3.402823466e38);
  uint quarter = tid % TPP;
  for (uint i0 = 0; i0 < n; i0 += WG / TPP) {
    uint i = i0 + tid / TPP;
    vec4 s = vec4(0.0);
    if (i < n) {
      uint kb = (j0 + i) * kv_dim4 + kvh * hd4;
      KV_T4 kk[KU];
      [[unroll]] for (uint u = 0; u < KU; ++u)
        if (quarter + u * TPP < hd4) kk[u] = K4(kb + quarter + u * TPP);
      [[unroll]] for (uint u = 0; u < KU; ++u) {
        uint dd = quarter + u * TPP;
        if (dd < hd4) {
          vec4 kf = vec4(kk[u]);
          s.x += dot(s_qg[dd], kf);
          if (G > 1u) s.y += dot(s_qg[hd4 + dd], kf);
          if (G > 2u) s.z += dot(s_qg[2 * hd4 + dd], kf);
          if (G > 3u) s.w += dot(s_qg[3 * hd4 + dd], kf);
        }
      }
    }
    s_part[tid] = s;
    barrier();
    if (quarter == 0 && i < n) {
      s = (s_part[tid] + s_part[tid + 1] + s_part[tid + 2] + s_part[tid + 3]) * p.scale;
      if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
      s_sc4[i] = s;
      mx = max(mx, s);
    }
    barrier();
  }
  mx = wg_max4(mx);  // its barriers also publish s_sc4
  vec4 sum = vec4(0.0);
  for (uint i = tid; i < n; i += WG) {
    vec4 e = exp(s_sc4[i] - mx);
    s_sc4[i] = e;
    sum += e;
  }
  sum = wg_sum4(sum);

  // Weighted sums of v: the plain form's groups, each V piece weighed for the G heads.
  uint groups = WG / hd4, g = tid / hd4, d = tid % hd4;
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
  if (g < groups)
    for (uint i0 = g; i0 < n; i0 += groups * VG) {
      KV_T4 vv[VG];
      [[unroll]] for (uint u = 0; u < VG; ++u)
        if (i0 + u * groups < n) vv[u] = V4((j0 + i0 + u * groups) * kv_dim4 + kvh * hd4 + d);
      [[unroll]] for (uint u = 0; u < VG; ++u)
        if (i0 + u * groups < n) {
          vec4 w = s_sc4[i0 + u * groups], vf = vec4(vv[u]);
          [[unroll]] for (uint k = 0; k < 4; ++k) acc[k] += w[k] * vf;
        }
    }
  [[unroll]] for (uint k = 0; k < 4; ++k) {
    if (k >= G) break;
    store_partial(h0 + k, sp, acc[k], mx[k], sum[k]);
  }

  // The last workgroup of this kv head merges its G heads, one element an invocation at a time.
  memoryBarrierBuffer();
  barrier();
  if (tid == 0) s_last = atomicAdd(counter[kvh], 1u) == n_act - 1u;
  barrier();
  if (!s_last) return;
  memoryBarrierBuffer();
  for (uint e = tid; e < G * p.head_dim; e += WG) {
    uint hq = h0 + e / p.head_dim, dd = e % p.head_dim;
    vec3 r = merge_partials(hq, dd, n_act);
    o[hq * p.head_dim + dd] = O_VALUE(r.x / r.y);
  }
  if (tid == 0) counter[kvh] = 0u;
}
#else
void main() {
  if ((PROBE & 8u) != 0u) return;
  uint h = gl_WorkGroupID.x, sp = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
  uint kvh = h / (p.n_heads / p.n_kv_heads);
  uint hd4 = p.head_dim / 4, kv_dim4 = p.n_kv_heads * hd4;
#ifdef BATCH_SLOTS
  // Sequence `row`: its q / o rows, partials and counts are offsets into the bindings; `h` stays the head
  // within the row (the merge's weights), `hq` indexes the row-major q / o / counts.
  uint row = sp / p.splits;
  sp %= p.splits;
  uint pos = state[row * STATE_WORDS + 1u], hq = row * p.n_heads + h;
  KvIn kin = KvIn(caches[row].xy), vin = KvIn(caches[row].zw);
#else
  uint pos = state[1], hq = h;
#endif
  uint lo = bs_window_lo(pos, p.window);
  uint len = pos + 1 - lo, chunk = max(MIN_CHUNK, (len + p.splits - 1) / p.splits);
  uint n_act = (len + chunk - 1) / chunk;
  if (sp >= n_act) return;  // uniform per workgroup: no barrier has been reached
  uint j0 = lo + sp * chunk, j1 = lo + min((sp + 1) * chunk, len), n = j1 - j0;
  chain_wait();  // ATTN_CHAIN: until the q, k and v projections are done

  for (uint d = tid; d < hd4; d += WG)
    s_q[d] = vec4(q[hq * p.head_dim + 4 * d], q[hq * p.head_dim + 4 * d + 1], q[hq * p.head_dim + 4 * d + 2],
                  q[hq * p.head_dim + 4 * d + 3]);
  barrier();

  // Scores: invocation tid takes quarter tid % 4 of position tid / 4 (+ 64 per pass), its pieces of the key
  // row all loaded before the first is used (a loop of load-then-dot waits one round trip a piece).
  float mx = -3.402823466e38;
  uint quarter = tid % TPP;
  for (uint i0 = 0; i0 < n; i0 += WG / TPP) {
    uint i = i0 + tid / TPP;
    float s = 0.0;
    if (i < n) {
      uint kb = (j0 + i) * kv_dim4 + kvh * hd4;
      KV_T4 kk[KU];
      [[unroll]] for (uint u = 0; u < KU; ++u)
        if (quarter + u * TPP < hd4) kk[u] = (PROBE & 4u) != 0u ? KV_T4(0.5) : K4(kb + quarter + u * TPP);
      [[unroll]] for (uint u = 0; u < KU; ++u)
        if (quarter + u * TPP < hd4) s += dot(s_q[quarter + u * TPP], vec4(kk[u]));
    }
    s_part[tid].x = s;
    barrier();
    if (quarter == 0u) s = s_part[tid].x + s_part[tid + 1].x + s_part[tid + 2].x + s_part[tid + 3].x;
    if (quarter == 0 && i < n) {
      s *= p.scale;
      if (p.softcap > 0.0) s = p.softcap * tanh(s / p.softcap);
      s_sc[i] = s;
      mx = max(mx, s);
    }
    barrier();
  }
  mx = workgroup_max(mx);  // its barriers also publish s_sc
  float sum = 0.0;
  for (uint i = tid; i < n; i += WG) {
    float e = exp(s_sc[i] - mx);
    s_sc[i] = e;
    sum += e;
  }
  sum = workgroup_sum(sum);

  // Weighted sum of v: G = 256 / (head_dim / 4) groups of invocations, each invocation 4 dims, groups
  // striding over the chunk's positions; the groups' partials meet in shared memory.
  uint groups = WG / hd4;
  uint g = tid / hd4, d = tid % hd4;
  // VU positions a round, loaded before any is weighed: one round trip for a whole chunk at head_dim 64-128.
  vec4 acc = vec4(0.0);
  if (g < groups)
    for (uint i0 = g; i0 < n; i0 += groups * VU) {
      KV_T4 vv[VU];
      [[unroll]] for (uint u = 0; u < VU; ++u)
        if (i0 + u * groups < n)
          vv[u] = (PROBE & 2u) != 0u ? KV_T4(0.5) : V4((j0 + i0 + u * groups) * kv_dim4 + kvh * hd4 + d);
      [[unroll]] for (uint u = 0; u < VU; ++u)
        if (i0 + u * groups < n) {
          acc += s_sc[i0 + u * groups] * vec4(vv[u]);
        }
    }
  store_partial(hq, sp, acc, mx, sum);

  // The last workgroup of this head merges.
  if ((PROBE & 1u) != 0u) return;
  memoryBarrierBuffer();
  barrier();
  if (tid == 0) {
    s_last = atomicAdd(counter[hq], 1u) == n_act - 1u;
  }
  barrier();
  if (!s_last) return;
  memoryBarrierBuffer();
  // Merge, one dim an invocation (head_dim <= WG).
  if (tid < p.head_dim) {
    vec3 r = merge_partials(hq, tid, n_act);
    float num = r.x, den = r.y;
#ifdef ATTN_SINKS
    float nb = max(r.z, sinks[h]), a = exp(r.z - nb);
    den = den * a + exp(sinks[h] - nb);
    num *= a;
#endif
    o[hq * p.head_dim + tid] = O_VALUE(num / den);
  }
  if (tid == 0) counter[hq] = 0u;
  chain_signal();  // ATTN_CHAIN: this head's o is written
}

#endif
