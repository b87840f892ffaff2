#version 450
// Prefill GEMM on tensor cores: Y[M, m] (+)= X[M, k] . W[m, k]^T, as matmul.comp (same MatvecParams:
// m, k, batch = M, accumulate) but with X in f16 (the model converts each input once, to_f16), with
// f16 x f16 -> f32 multiply-adds through GL_NV_cooperative_matrix (16 x 16 x 16 subgroup fragments). W
// is decoded to f16 (weight_chunk.glsl); products and sums stay f32. X in f16 halves the bytes of the
// kernel's heaviest traffic: every workgroup of a column of tiles re-reads its X rows (m / BN times in
// all), which in f32 cost 40% of a 4096x4096 GEMM on the H100 (2026-11-24-h100-gemm.md). Needs
// k % BK == 0 (the host falls back otherwise) and subgroups of 32 (Device::has_coopmat_f16).
//
// Dispatch: ((m + BN - 1) / BN, (M + BM - 1) / BM). The tile is fixed at compile time (CM_BM, CM_BN,
// CM_BK, CM_WARPS_M x CM_WARPS_N subgroups; variants.cmake), so every loop over fragments unrolls and
// the accumulators live in registers. A workgroup computes a BM x BN tile of Y, each subgroup a
// (BM / WARPS_M) x (BN / WARPS_N) part of it as FM x FN accumulator fragments. It steps through k BK
// at a time:
//   * staging: X [BM, BK] (f16) and W [BN, BK] decoded to f16 go to shared memory, so every
//     weight is decoded once per workgroup and reused by all BM tokens;
//   * the global loads of step s + 1 are issued before the multiply-adds of step s and stored after
//     them into the other of two shared buffers: one barrier per step, load latency behind the math.
// Epilogue: fragments wholly inside Y are stored straight to memory (with accumulate, they started
// from Y's values); edge fragments go through a per-subgroup shared scratch and are written element
// by element with bounds checks, so ragged M and m are exact.
//
// CM_SPLITK: the k steps are split among S workgroups per tile, so that a grid too small for the GPU fills
// it. The dispatch's y count is S times the token tiles; workgroup row y takes token tile y % tiles and part
// y / tiles of the steps, and writes its partial sums to plane y / tiles of binding 2 ([S, M, m] f32, never
// accumulated). splitk_reduce (elementwise.comp) then adds the planes, in order, into Y.
//
// CM_GATED: the gated FFN's gate and up projections in one GEMM, H = act(X W_gate^T) * (X W_up^T) written in f16
// (GatedMatmulParams; W_up at binding 4), the down projection's input: no gated_act pass, and gate and up never
// reach memory. A workgroup's BN staged rows are BN / 2 output columns' gate and up rows in alternating 16-row
// fragments (TILE_ROW), so each subgroup's fragment pairs (j, j + 1) are gate and up of the same columns, which
// the epilogue joins through the scratch. Dispatch ((M + BM - 1) / BM, (m + BN / 2 - 1) / (BN / 2)): token tiles
// along x, so the workgroups that read one W tile run back to back and W comes from DRAM once. (Columns along x,
// the 8B's gate and up, 66 MB in Q4_K, were read again by each of the 4 token tiles, more than the 50 MB L2
// holds: the GEMM took 28.5 ms against 24.7 for the two plain ones; session 10, A2.) CM_TOKENS_X lays out a
// plain kernel's grid so too (tuning builds).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "params.h"
#ifdef CM_GATED
#define W_UP
#include "common.glsl"  // bs_act
#endif
#include "weight_chunk.glsl"

#ifndef CM_BM
#define CM_BM 64
#endif
#ifndef CM_BN
#define CM_BN 64
#endif
#ifndef CM_BK
#define CM_BK 32
#endif
#ifndef CM_WARPS_M
#define CM_WARPS_M 2
#endif
#ifndef CM_WARPS_N
#define CM_WARPS_N 2
#endif
const uint BM = CM_BM, BN = CM_BN, BK = CM_BK, WARPS_M = CM_WARPS_M, WARPS_N = CM_WARPS_N;
const uint NT = 32 * WARPS_M * WARPS_N;  // invocations
layout(local_size_x = NT) in;
layout(std430, binding = 1) readonly buffer X { uvec4 x8[]; };  // 8 f16 values each
#ifdef CM_GATED
#if defined(CM_SPLITK) || (CM_BN / CM_WARPS_N / 16) % 2 != 0
#error "CM_GATED needs whole k per workgroup and fragment pairs"
#endif
layout(push_constant) uniform PC { GatedMatmulParams p; };
layout(std430, binding = 2) writeonly buffer H { uvec4 h8[]; };  // 8 f16 values each
#else
layout(push_constant) uniform PC { MatvecParams p; };
layout(std430, binding = 2) buffer Y { float y[]; };
#endif

#define F16MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

// Shared tiles are rows of BK f16 (BK / 8 uvec4) plus one uvec4 of padding: an odd number of 16-byte
// units per row puts the 8 rows that one fragment load reads at a time on distinct bank groups.
const uint LD = BK / 8 + 1;
const uint FM = BM / WARPS_M / 16, FN = BN / WARPS_N / 16;  // fragments per subgroup
const uint XG = BK / 8, WG = BK / 16;   // groups of 8 X values, chunks of 16 weights, per tile row
#if defined(W_HAS_PAIRS) && CM_BK % 64 == 0
// Q4_K and Q6_K at k steps of 64 or more: an invocation stages chunk pairs (weights 64 g + 16 u and 32 further:
// Q4_K's share one qs uvec4, Q6_K's a qh uvec4 and their scales; weight_chunk.glsl's w_decode_pair), about half
// the load instructions of single chunks. The prefill GEMM is bound by its loads (2026-11-24-h100-session7.md,
// S6 and S7: without its global loads the 8B's TTFT fell 84 -> 58 ms; without its multiply-adds it did not move).
#define CM_PAIRS
const uint WP = BK / 32;  // chunk pairs per tile row and step
const uint XV = (BM * XG + NT - 1) / NT, WC = (BN * WP + NT - 1) / NT;  // ... per invocation (at most)
#else
const uint XV = (BM * XG + NT - 1) / NT, WC = (BN * WG + NT - 1) / NT;  // ... per invocation (at most)
#endif
// Shared memory: 2 (BM + BN) LD 16 B of tiles + 1 KiB of scratch per subgroup; 128x128 with 8 subgroups
// is 48 KiB, the most the H100 driver offers a workgroup (maxComputeSharedMemorySize): keep within it
// (256x128 fits only at BK 16: 45 KiB). CM_SINGLE: one shared buffer (two barriers a step; the global
// loads of step s + 1 are still issued before the multiply-adds of step s), which lets 128x128 take k
// steps of 64: twice the multiply-adds per barrier, 45 KiB. On the H100 that is the better Q6_K tile for
// the 8B's down projection (4096x14336 at 512 tokens: 685 vs 761 us; 2026-11-24-h100-session5.md, P5)
// and no better elsewhere.
#if defined(CM_SPLITK) && !defined(CM_SINGLE)
#error "CM_SPLITK is built on the single-buffered tile (a part's first step may be odd)"
#endif
#ifdef CM_SINGLE
const uint NBUF = 1;
#else
const uint NBUF = 2;
#endif
shared uvec4 xs[NBUF * BM * LD];
shared uvec4 ws[NBUF * BN * LD];
shared float scratch[WARPS_M * WARPS_N * 256];

// Staged tile row r (0 .. BN) of the workgroup whose first output column is n0 is W row n0 + r; with CM_GATED, row
// n0 + 16 (r / 32) + r % 16 of gate where r % 32 < 16, else of up. (Macros: the plain kernels keep their SPIR-V.)
#ifdef CM_GATED
#define TILE_ROW(n0, r) ((n0) + ((r) >> 5) * 16u + ((r) & 15u))
#define W_FETCH(r, row, k, e) w_fetch(((r) & 16u) != 0u, row, k, e)
#define W_FETCH_PAIR(r, row, k, e) w_fetch_pair(((r) & 16u) != 0u, row, k, e)
#define W_TOUCH(r, row, k, e) w_touch(((r) & 16u) != 0u, row, k, e)
#else
#define TILE_ROW(n0, r) ((n0) + (r))
#define W_FETCH(r, row, k, e) w_fetch(row, k, e)
#define W_FETCH_PAIR(r, row, k, e) w_fetch_pair(false, row, k, e)
#define W_TOUCH(r, row, k, e) w_touch(row, k, e)
#endif

// The raw loads of one k step, held in registers between fetch and store. Invocation tid stages the X
// groups g = tid + NT i (token g / XG, values 8 (g % XG) ..) and the W chunks c = tid + NT j (row
// c / WG, weights 16 (c % WG) ..): consecutive invocations read consecutive bytes of a row.
uvec4 staged_x[XV];
#ifdef CM_PAIRS
WPair staged_w[WC];
#else
WChunk staged_w[WC];
#endif

void fetch(uint t0, uint n0, uint k0) {
  uint kv = p.k / 8u;
  [[unroll]] for (uint i = 0; i < XV; ++i) {
    uint g = gl_LocalInvocationID.x + NT * i, tok = t0 + g / XG, v = tok * kv + k0 / 8u + g % XG;
    if (g >= BM * XG) break;
    staged_x[i] = tok < p.batch ? x8[v] : uvec4(0u);
  }
#ifdef CM_PAIRS
  [[unroll]] for (uint j = 0; j < WC; ++j) {
    uint c = gl_LocalInvocationID.x + NT * j, row = min(TILE_ROW(n0, c / WP), p.m - 1u), q = c % WP;
    if (c >= BN * WP) break;
    staged_w[j] = W_FETCH_PAIR(c / WP, row, p.k, k0 + 64u * (q >> 1) + 16u * (q & 1u));  // rows past m are zeroed when stored
  }
#else
  [[unroll]] for (uint j = 0; j < WC; ++j) {
    uint c = gl_LocalInvocationID.x + NT * j, row = min(TILE_ROW(n0, c / WG), p.m - 1u);
    if (c >= BN * WG) break;
    staged_w[j] = W_FETCH(c / WG, row, p.k, k0 + 16u * (c % WG));  // rows past m are zeroed when stored
  }
#endif
}

void store(uint buf, uint n0) {
  [[unroll]] for (uint i = 0; i < XV; ++i) {
    uint g = gl_LocalInvocationID.x + NT * i;
    if (g >= BM * XG) break;
    xs[(buf * BM + g / XG) * LD + g % XG] = staged_x[i];
  }
#ifdef CM_PAIRS
  [[unroll]] for (uint j = 0; j < WC; ++j) {
    uint c = gl_LocalInvocationID.x + NT * j, r = c / WP, q = c % WP;
    uint o = (buf * BN + r) * LD + 2u * (4u * (q >> 1) + (q & 1u));  // the low chunk; the high one 2 chunks on
    if (c >= BN * WP) break;
    uvec4 h[4] = w_decode_pair(staged_w[j]);
    bool in_m = TILE_ROW(n0, r) < p.m;
    ws[o] = in_m ? h[0] : uvec4(0);
    ws[o + 1u] = in_m ? h[1] : uvec4(0);
    ws[o + 4u] = in_m ? h[2] : uvec4(0);
    ws[o + 5u] = in_m ? h[3] : uvec4(0);
  }
#else
  [[unroll]] for (uint j = 0; j < WC; ++j) {
    uint c = gl_LocalInvocationID.x + NT * j, r = c / WG, o = (buf * BN + r) * LD + 2u * (c % WG);
    if (c >= BN * WG) break;
    uvec4 h[2] = w_decode(staged_w[j]);
    bool in_m = TILE_ROW(n0, r) < p.m;
    ws[o] = in_m ? h[0] : uvec4(0);
    ws[o + 1u] = in_m ? h[1] : uvec4(0);
  }
#endif
}

#ifdef CM_PREFETCH
// One word of each 16 bytes of X and each 32 of W that fetch(t0, n0, k0) will read, loaded a k step before fetch
// and only folded into a sink a step later: the lines wait in L1, so the step's real loads need not wait on L2.
// With one workgroup per multiprocessor (these tiles take 172-212 registers) every k step waited for its own
// loads (2026-11-25-h100-session8.md, R1). On the H100 the touches made F16 and Q8_0 on the k-64 tile 5-12%
// faster (CM_PREFETCH_X: X's lines only) and Q4_K and Q6_K, whose chunks are more loads each, 2-20% slower
// (R3-R4), so W touches exist for F16 alone (weight_chunk.glsl's w_touch). Through VK_KHR_cooperative_matrix
// (session 9, T1) X-only touches turned 2-5% faster for Q6_K too (8B shapes), and stay 15-25% slower for Q4_K.
#if defined(CM_PREFETCH_X)
struct Touch { uint x[XV]; };  // X's lines only
#elif defined(W_HAS_TOUCH) && !defined(CM_PAIRS)
struct Touch { uint x[XV]; uint w[WC]; };
#else
#error "CM_PREFETCH touches W for F16 only: use CM_PREFETCH_X"
#endif
Touch touch(uint t0, uint n0, uint k0) {
  Touch t;
  uint kv = p.k / 8u;
  [[unroll]] for (uint i = 0; i < XV; ++i) {
    uint g = gl_LocalInvocationID.x + NT * i, tok = min(t0 + g / XG, p.batch - 1u);
    t.x[i] = g < BM * XG ? x8[tok * kv + k0 / 8u + g % XG].x : 0u;
  }
#if !defined(CM_PREFETCH_X)
  [[unroll]] for (uint j = 0; j < WC; ++j) {
    uint c = gl_LocalInvocationID.x + NT * j, row = min(TILE_ROW(n0, c / WG), p.m - 1u);
    t.w[j] = W_TOUCH(c / WG, row, p.k, k0 + 16u * (c % WG));
  }
#endif
  return t;
}
uint fold(Touch t) {
  uint f = 0u;
  [[unroll]] for (uint i = 0; i < XV; ++i) f ^= t.x[i];
#if !defined(CM_PREFETCH_X)
  [[unroll]] for (uint j = 0; j < WC; ++j) f ^= t.w[j];
#endif
  return f;
}
#endif

// Whether the fragment at (tok, row) lies wholly inside Y and may be loaded and stored directly: a
// row-major Y needs 16-byte aligned rows for that (m % 4 == 0).
bool whole_fragment(uint tok, uint row) { return tok + 16u <= p.batch && row + 16u <= p.m && (p.m & 3u) == 0u; }

void main() {
#ifdef CM_SPLITK
  const uint tiles = (p.batch + BM - 1u) / BM, part = gl_WorkGroupID.y / tiles, parts = gl_NumWorkGroups.y / tiles;
  const uint t0 = (gl_WorkGroupID.y % tiles) * BM, plane = part * p.batch * p.m;
#define ACCUMULATE false
#elif defined(CM_GATED)
  const uint t0 = gl_WorkGroupID.x * BM;  // token tiles along x (above)
#define ACCUMULATE false
#elif defined(CM_TOKENS_X)
  const uint t0 = gl_WorkGroupID.x * BM, plane = 0u;
#define ACCUMULATE (p.accumulate != 0u)
#else
  const uint t0 = gl_WorkGroupID.y * BM, plane = 0u;
#define ACCUMULATE (p.accumulate != 0u)
#endif
#if defined(CM_GATED)
  uint n0 = gl_WorkGroupID.y * (BN / 2u), sg = gl_SubgroupID;  // the first output column
#elif defined(CM_TOKENS_X)
  uint n0 = gl_WorkGroupID.y * BN, sg = gl_SubgroupID;
#else
  uint n0 = gl_WorkGroupID.x * BN, sg = gl_SubgroupID;
#endif
  uint sm = (sg / WARPS_N) * (BM / WARPS_M), sn = (sg % WARPS_N) * (BN / WARPS_N);  // this subgroup's part

  // With accumulate, whole fragments start from Y itself (no coopmat addition needed later: glslang
  // 12's optimizer crashes on one); edge fragments start from zero and add Y when written.
  F32MAT acc[FM][FN];
  [[unroll]] for (uint i = 0; i < FM; ++i) {
    [[unroll]] for (uint j = 0; j < FN; ++j) {
      uint tok = t0 + sm + 16u * i, row = n0 + sn + 16u * j;
#ifndef CM_GATED
      if (ACCUMULATE && whole_fragment(tok, row)) coopMatLoadNV(acc[i][j], y, tok * p.m + row, p.m, false);
      else
#endif
        acc[i][j] = F32MAT(0.0);
    }
  }

#ifdef CM_SPLITK
  const uint first = p.k / BK * part / parts, steps = p.k / BK * (part + 1u) / parts;  // steps [first, steps)
#else
  const uint first = 0u, steps = p.k / BK;
#endif
  fetch(t0, n0, first * BK);
#ifdef CM_PREFETCH
  Touch pf = touch(t0, n0, min(first + 1u, steps - 1u) * BK);
  uint sink = 0u;
#endif
  store(0u, n0);
  barrier();
  for (uint s = first; s < steps; ++s) {
    uint buf = NBUF == 1u ? 0u : s & 1u;
    bool more = s + 1u < steps;
    if (more) fetch(t0, n0, (s + 1u) * BK);
#ifdef CM_PREFETCH
    Touch next = touch(t0, n0, min(s + 2u, steps - 1u) * BK);
#endif
    [[unroll]] for (uint kk = 0; kk < BK / 8u; kk += 2u) {  // 16-deep slices, in uvec4 units
      F16MAT a[FM];
      [[unroll]] for (uint i = 0; i < FM; ++i)
        coopMatLoadNV(a[i], xs, (buf * BM + sm + 16u * i) * LD + kk, LD, false);
      [[unroll]] for (uint j = 0; j < FN; ++j) {
        // B = W^T [k, rows]: column n is row n of W, stored k-contiguous, i.e. column-major.
        F16MAT b;
        coopMatLoadNV(b, ws, (buf * BN + sn + 16u * j) * LD + kk, LD, true);
        [[unroll]] for (uint i = 0; i < FM; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
      }
    }
#ifdef CM_PREFETCH
    sink ^= fold(pf);  // loaded a step ago
    pf = next;
#endif
    if (NBUF == 1u) {
      barrier();  // every subgroup is done with the buffer
      if (more) store(0u, n0);
    } else if (more) {
      store(buf ^ 1u, n0);
    }
    barrier();
  }

#ifdef CM_PREFETCH
#ifdef CM_GATED
  if (sink == 0x9E3779B9u && p.m == 0u) h8[0] = uvec4(0u);  // never: keeps the touches
#else
  if (sink == 0x9E3779B9u && p.m == 0u) y[0] = 0.0;  // never: keeps the touches
#endif
#endif
#ifdef CM_GATED
  // Fragments (i, j) and (i, j + 1), j even: gate and up of tokens tok .. tok + 15, columns col .. col + 15. Both
  // go through the subgroup's scratch; lane l joins 8 consecutive values of row l / 2 (as gated_act_f32_f16 does:
  // act(g) * u, packHalf2x16) and writes them as one uvec4 (m % 16 == 0, so a fragment is wholly in or out).
  uint lane = gl_SubgroupInvocationID, sc = sg * 256u, er = lane >> 1, ec = (lane & 1u) * 8u;
  [[unroll]] for (uint i = 0; i < FM; ++i) {
    [[unroll]] for (uint j = 0; j < FN; j += 2u) {
      uint tok = t0 + sm + 16u * i, col = n0 + (sn + 16u * j) / 2u;
      if (tok >= p.batch || col >= p.m) continue;
      float g[8];
      coopMatStoreNV(acc[i][j], scratch, sc, 16u, false);
      subgroupBarrier();
      [[unroll]] for (uint q = 0; q < 8u; ++q) g[q] = scratch[sc + 16u * er + ec + q];
      subgroupBarrier();
      coopMatStoreNV(acc[i][j + 1u], scratch, sc, 16u, false);
      subgroupBarrier();
      uint hp[4];
      [[unroll]] for (uint q = 0; q < 4u; ++q) {
        vec2 u = vec2(scratch[sc + 16u * er + ec + 2u * q], scratch[sc + 16u * er + ec + 2u * q + 1u]);
        hp[q] = packHalf2x16(vec2(bs_act(g[2u * q], p.act), bs_act(g[2u * q + 1u], p.act)) * u);
      }
      subgroupBarrier();  // the next pair reuses the scratch
      if (tok + er < p.batch) h8[((tok + er) * p.m + col + ec) / 8u] = uvec4(hp[0], hp[1], hp[2], hp[3]);
    }
  }
#else
  // Fragment (i, j) covers tokens tok .. tok + 15 and rows row .. row + 15 of Y.
  uint lane = gl_SubgroupInvocationID, sc = sg * 256u;
  [[unroll]] for (uint i = 0; i < FM; ++i) {
    [[unroll]] for (uint j = 0; j < FN; ++j) {
      uint tok = t0 + sm + 16u * i, row = n0 + sn + 16u * j, o = plane + tok * p.m + row;
      if (tok >= p.batch || row >= p.m) continue;
      if (whole_fragment(tok, row)) {
        coopMatStoreNV(acc[i][j], y, o, p.m, false);
      } else {
        coopMatStoreNV(acc[i][j], scratch, sc, 16u, false);
        subgroupBarrier();
        for (uint e = lane; e < 256u; e += gl_SubgroupSize) {
          uint r = e / 16u, c = e % 16u;
          if (tok + r < p.batch && row + c < p.m) {
            uint oe = o + r * p.m + c;
            y[oe] = (ACCUMULATE ? y[oe] : 0.0) + scratch[sc + e];
          }
        }
        subgroupBarrier();  // the next fragment reuses the scratch
      }
    }
  }
#endif
}
