// Shared epilogue of the matvec kernels: a workgroup owns ROWS rows of W (one batch row), every
// invocation accumulates partial dot products for all of them in mv_acc, and mv_finish reduces them
// across the workgroup and writes y (adding into y when p.accumulate != 0, the residual add folded into
// the projection). Subgroup-size agnostic: per-subgroup sums meet in shared memory.
//
// The including kernel declares (after params.h): spec constant ROWS, buffer `x` (binding 1), and the
// weights `w` (binding 0; with MV_GATED also `wu`, binding 4, same element type), read only through
// mv_w(r, i): the weight array of accumulator r. This file declares the push constant `p` (MatvecParams,
// MatvecNormParams with MV_NORM, MatvecRopeParams with MV_ROPE or MV_KV) and `y` (binding 2).
//
// MV_NORM folds the RMSNorm that precedes the projection into it (p is then MatvecNormParams, and the
// norm weight is binding 3): the kernels read x only through mv_x4/mv_x2/mv_x1, which scale each value
// by (offset + nw[i]) and add x^2 to mv_ss. Every element of x is read exactly once per workgroup, so
// the workgroup's sum of squares comes for free with the dot products; the scale rsqrt(mean + eps) is
// a common factor of each row's sum and is applied in mv_finish. No separate norm dispatch, no barrier.
//
// MV_GATED (with MV_NORM) is the gated FFN in one dispatch: h = act(W_gate xn) * (W_up xn). The
// workgroup takes the same ROWS rows of both matrices (accumulators 0..ROWS-1 read w, ROWS..2 ROWS-1
// read wu), so each x value is loaded and normalized once for 2 ROWS dot products, and the
// activation is applied in mv_finish (p.act: 0 silu, 1 gelu_tanh): the gate and up vectors never
// reach memory, and the separate activation dispatch and its barrier disappear.
// MV_ROPE (q and k projections, decode) permutes the rows so a workgroup holds both halves of its
// rotation pairs: with ROWS = 4, workgroup g takes pairs P = 2g, 2g + 1 (P = head * head_dim/2 + i):
// rows head * head_dim + i and the same + head_dim/2. mv_finish then rotates each row with its
// partner's sum (rope.glsl, the angle from state.pos + b and inv_freq[i], binding 5/6), so q leaves
// the kernel rotated and no RoPE dispatch or barrier follows. MV_KV (k and v) writes the row as f16
// into the cache (binding 7) at position state.pos + b instead of y: the KV append is folded too.
//
// BATCH_FIRST = 1 (serve's batched decode, batch > 1) lays the grid out as (batch, row groups) instead of
// (row groups, batch): the workgroups reading the same rows of W are dispatched next to each other, so W
// streams from memory about once for all batch rows and they share it through the cache.
//
// MV_ARGMAX (the head's *_argmax kernels: greedy decode, one batch row) also maxes each row's argmax key (argmax.glsl)
// into key row / kArgmaxSliceRows (binding 10; params.h) with a 64-bit atomicMax, a subgroup's largest key at once; the
// host takes this form only where kArgmaxSliceRows % ROWS == 0 (a workgroup's rows in one slice). So greedy decode
// has no argmax_parts dispatch: sample_parts reduces the keys and sets them back to 0.
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#ifdef MV_ARGMAX
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ARGMAX_KEY_ONLY
#include "argmax.glsl"
layout(std430, binding = 10) buffer Keys { uint64_t keys[]; };
#endif
layout(constant_id = 2) const uint BATCH_FIRST = 0;
uint mv_group() { return BATCH_FIRST != 0u ? gl_WorkGroupID.y : gl_WorkGroupID.x; }
uint mv_batch_row() { return BATCH_FIRST != 0u ? gl_WorkGroupID.x : gl_WorkGroupID.y; }
//
// MV_EXPERT (mixture of experts, forward_moe.cpp): W is [experts, estride, k], of which rows row0 .. row0 + m of
// each expert are taken, and workgroup row (y) b is a routing slot: its expert is moe_ids[b] (binding 8, written
// by the router kernel on the GPU), its x row b / p.x_div
// (the token's row for gate / up, the slot's own h row for down), and it writes y row b. p is MoeMatvecParams.
#if defined(MV_EXPERT)
layout(push_constant) uniform PC { MoeMatvecParams p; };
layout(std430, binding = 8) readonly buffer MoeIds { uint moe_ids[]; };
#elif defined(MV_NORM)
#if defined(MV_ROPE) || defined(MV_KV)
layout(push_constant) uniform PC { MatvecRopeParams p; };
#else
layout(push_constant) uniform PC { MatvecNormParams p; };
#endif
#else
layout(push_constant) uniform PC { MatvecParams p; };
#endif
#ifndef MV_KV  // the k and v projections write the KV cache instead
layout(std430, binding = 2) buffer Y { float y[]; };
#endif
#if defined(MV_ROPE) || defined(MV_KV)
layout(std430, binding = 6) readonly buffer St { uint state[]; };
#endif
#ifdef MV_ROPE
#include "rope.glsl"
layout(std430, binding = 5) readonly buffer Fr { float inv_freq[]; };
#endif
#ifdef MV_KV
layout(std430, binding = 7) writeonly buffer KV { float16_t kv[]; };
#endif

#ifdef MV_GATED
const uint MV_NR = 2u * ROWS;
#else
const uint MV_NR = ROWS;
#endif
float mv_acc[MV_NR];

// MV_CHAIN (the _chain variants): chained dispatches (chain.glsl); a consumer waits before its first load (the
// including kernel), every variant signals at the end of mv_finish.
#ifdef MV_CHAIN
#define CHAIN
#endif
#include "chain.glsl"
shared float mv_red[(MV_NR + 1) * MAX_SUBGROUPS];
#ifdef MV_OCCUPANCY_PAD
// Timing builds only (bs_gemv_bench --mv-spv; no registry kernel defines it): MV_OCCUPANCY_PAD floats of shared
// memory that bound how many workgroups an SM holds at once, to time a matvec at the persistent decode kernel's 16
// warps per SM (46 KB: 4 workgroups on a 228 KB SM). Read under a condition that never holds (p.m is a row count),
// so the compiler keeps it.
shared float mv_pad[MV_OCCUPANCY_PAD];
#endif

// First row of the workgroup's expert in W (MV_EXPERT), else 0; set by mv_begin.
uint mv_ebase = 0u;
// Sets up workgroup row b; returns the row of x it reads.
uint mv_begin(uint b) {
#ifdef MV_EXPERT
  mv_ebase = moe_ids[b] * p.estride + p.row0;
  return b / p.x_div;
#else
  return b;
#endif
}

// Row of W (of its matrix) behind accumulator r of the workgroup starting at row0; rows past m compute
// a duplicate of the last row that is never written.
uint mv_row(uint row0, uint r) {
#ifdef MV_ROPE
  uint half_hd = p.head_dim / 2u, pair = row0 / 2u + (r & 1u);  // row0 = 4g: pairs 2g, 2g + 1
  return (pair / half_hd) * p.head_dim + pair % half_hd + (r >= 2u ? half_hd : 0u);
#else
  return mv_ebase + min(row0 + (r < ROWS ? r : r - ROWS), p.m - 1u);
#endif
}

// x is vec4[] in the K-quant and Q8_0 kernels (read with mv_x4), float[] in the f16 one (MV_X_SCALAR:
// mv_x2 and mv_x1). xb is the batch row's first element (in x's units), i the element (or vec4) in it.
#ifdef MV_NORM
#ifdef MV_X_SCALAR
layout(std430, binding = 3) readonly buffer NW { float nw[]; };
float mv_ss = 0.0;
vec2 mv_x2(uint xb, uint e) {  // x[xb + e], x[xb + e + 1]
  vec2 v = vec2(x[xb + e], x[xb + e + 1u]);
  mv_ss += dot(v, v);
  return v * (p.offset + vec2(nw[e], nw[e + 1u]));
}
float mv_x1(uint xb, uint e) {
  float v = x[xb + e];
  mv_ss += v * v;
  return v * (p.offset + nw[e]);
}
#else
layout(std430, binding = 3) readonly buffer NW { vec4 nw[]; };  // k % 4 == 0 for these kernels
float mv_ss = 0.0;
vec4 mv_x4(uint xb, uint i) {
  vec4 v = x[xb + i];
  mv_ss += dot(v, v);
  return v * (p.offset + nw[i]);
}
#endif
#else
#ifdef MV_X_SCALAR
vec2 mv_x2(uint xb, uint e) { return vec2(x[xb + e], x[xb + e + 1u]); }
float mv_x1(uint xb, uint e) { return x[xb + e]; }
#elif !defined(MV_X_Q8)  // MV_X_Q8: x arrives quantized (matvec_q4k_i8 reads it itself)
vec4 mv_x4(uint xb, uint i) { return x[xb + i]; }
#endif
#endif
#if !defined(MV_X_SCALAR) && !defined(MV_X_Q8)
// mv_x4 for i < kv, else 0 without reading x (or nw): rows padded to whole blocks (matvec_q4k.comp).
vec4 mv_x4m(uint xb, uint i, uint kv) { return i < kv ? mv_x4(xb, i) : vec4(0.0); }
#endif

// MV_TREDUCE = 1: a subgroup's sums of its values (the MV_NR accumulators, then the norm's sum of squares) in one
// transposed butterfly, when they are 2 to MV_TMAX and no more than the subgroup's lanes: each exchange sends half of
// a lane's values to its partner and keeps the other half, until a lane holds one value's partial, then the plain
// butterfly sums it (np - 1 + log2(sg / np) exchanges for np values rounded up to a power of two: 5 for the 10 of two
// subgroupAdds at 32 lanes, 9 for 25 where gate + up take 2 rows with the norm). The decode matvecs end in
// these sums once a workgroup (session 18: the persistent kernel's two-row form of it, pair_sum, took 2% of its
// step). Only where the workgroup is whole subgroups: a lane past the workgroup's end (8 invocations in a 32-lane
// subgroup: the MoE tests' workgroups) holds no value to exchange, so those sum with subgroupAdd, which counts the
// active lanes alone. 0: a subgroupAdd each everywhere (session 18's A/B compared a build with 0).
layout(constant_id = 3) const uint MV_TREDUCE = 1;
#ifdef MV_NORM
const uint MV_NV = MV_NR + 1u;
#else
const uint MV_NV = MV_NR;
#endif
const uint MV_TMAX = 16u;

// Writes value j's subgroup sum to mv_red[j * MAX_SUBGROUPS + subgroup] for every j < MV_NV.
void mv_subgroup_sums() {
  uint np = 1u;
  while (np < MV_NV) np *= 2u;
  bool whole = gl_WorkGroupSize.x % gl_SubgroupSize == 0u;
  if (MV_TREDUCE != 0u && np > 1u && np <= MV_TMAX && np <= gl_SubgroupSize && whole) {
    float t[MV_TMAX];
    [[unroll]] for (uint i = 0u; i < MV_TMAX; ++i) t[i] = i < MV_NR ? mv_acc[min(i, MV_NR - 1u)] : 0.0;
#ifdef MV_NORM
    t[MV_NR] = mv_ss;
#endif
    uint lane = gl_SubgroupInvocationID, cnt = np;
    // Lane l ends with value l / (sg / np): the first exchange (lanes sg / 2 apart) splits the values by their
    // highest index bit, the next by the one below, and so on.
    [[unroll]] for (uint s = 1u; s <= 7u; ++s) {
      uint o = gl_SubgroupSize >> s;
      if (o == 0u) break;
      if (cnt > 1u) {
        cnt >>= 1;
        bool hi = (lane & o) != 0u;
        [[unroll]] for (uint i = 0u; i < MV_TMAX / 2u; ++i)
          if (i < cnt) {
            float send = hi ? t[i] : t[i + cnt];
            t[i] = (hi ? t[i + cnt] : t[i]) + subgroupShuffleXor(send, o);
          }
      } else {
        t[0] += subgroupShuffleXor(t[0], o);
      }
    }
    uint span = gl_SubgroupSize / np, j = lane / span;
    if (lane % span == 0u && j < MV_NV) mv_red[j * MAX_SUBGROUPS + gl_SubgroupID] = t[0];
    return;
  }
  for (uint r = 0; r < MV_NR; ++r) {
    float s = subgroupAdd(mv_acc[r]);
    if (subgroupElect()) mv_red[r * MAX_SUBGROUPS + gl_SubgroupID] = s;
  }
#ifdef MV_NORM
  float ss = subgroupAdd(mv_ss);
  if (subgroupElect()) mv_red[MV_NR * MAX_SUBGROUPS + gl_SubgroupID] = ss;
#endif
}

void mv_finish(uint row0, uint b) {
#ifdef MV_OCCUPANCY_PAD
  if (p.m == 0xFFFFFFFFu) mv_acc[0] += mv_pad[gl_LocalInvocationID.x % uint(MV_OCCUPANCY_PAD)];
#endif
  mv_subgroup_sums();
  barrier();
#ifdef MV_NORM
  float ss = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) ss += mv_red[MV_NR * MAX_SUBGROUPS + i];
  float scale = inversesqrt(ss / float(p.k) + p.eps);
#endif
#ifdef MV_ARGMAX
  uvec2 key = uvec2(0u);  // the largest of this invocation's rows
#endif
  for (uint r = gl_LocalInvocationID.x; r < ROWS; r += gl_WorkGroupSize.x) {
    if (row0 + r >= p.m) break;
    float s = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) s += mv_red[r * MAX_SUBGROUPS + i];
#ifdef MV_NORM
    s *= scale;
#endif
#ifdef MV_ROPE
    float t = 0.0;  // the partner row's sum: rows r and r ^ 2 are a rotation pair
    for (uint i = 0; i < gl_NumSubgroups; ++i) t += mv_red[(r ^ 2u) * MAX_SUBGROUPS + i];
    t *= scale;
    uint row = mv_row(row0, r);
    float pos = float(state[1] + b), f = inv_freq[row % (p.head_dim / 2u)];
    s = r < 2u ? rope_rotate(s, t, pos, f).x : rope_rotate(t, s, pos, f).y;  // r < 2: the first half
#else
    uint row = row0 + r;
#endif
#ifdef MV_GATED
    float u = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) u += mv_red[(ROWS + r) * MAX_SUBGROUPS + i];
    s = bs_act(s, p.act) * (u * scale);
#endif
#ifdef MV_KV
    kv[(state[1] + b) * p.m + row] = float16_t(s);
#else
    uint o = b * p.m + row;
    y[o] = p.accumulate != 0u ? y[o] + s : s;
#endif
#ifdef MV_ARGMAX
    uvec2 k = argmax_key(s, row);
    if (k.y > key.y || (k.y == key.y && k.x > key.x)) key = k;
#endif
  }
#ifdef MV_ARGMAX
  uint hi = subgroupMax(key.y), lo = subgroupMax(key.y == hi ? key.x : 0u);
  if (subgroupElect() && hi != 0u)
    atomicMax(keys[row0 / kArgmaxSliceRows * kArgmaxKeyStride], packUint2x32(uvec2(lo, hi)));
#endif
  chain_signal();
}
