#version 450
// serve's batched decode on tensor cores: Y[M, m] (+)= X[M, k] . W[m, k]^T for M = 1 .. 32 rows (one
// per sequence), X in f16, W decoded to f16 (weight_chunk.glsl), f16 x f16 -> f32 multiply-adds through
// GL_NV_cooperative_matrix as matmul_cm.comp (the prefill GEMM), products and sums in f32. With RCM_GATED
// (W the gate at binding 0, U the up matrix at binding 4, same dtype and shape), the gated FFN in one
// dispatch: H = act(X W^T) * (X U^T), written as f16 pairs (the down projection's input).
//
// Why not matmul_cm: its tiles are 64 or more rows of W by 64 or more tokens, so a 2048-row matrix gives
// 32 workgroups, each walking all of k: a quarter of the H100's 132 SMs, and each subgroup's k walk is a
// chain of dependent loads. Here a workgroup owns 16 rows of W (one B fragment; gated 16 gate + 16 up)
// and its SG subgroups split k: subgroup s takes the BK-wide steps s, s + SG, s + 2 SG, .. (neighbouring
// subgroups read neighbouring bytes of the same rows), so a 2048-row matrix is 128 workgroups x SG
// subgroups. Each subgroup works alone until the end: it decodes its 16 rows x BK weights into its own
// shared tile (the next step's global loads issued before this step's multiply-adds, as matmul_cm), with
// subgroup barriers only, and loads the A fragments (tokens 0-15, and 16-31 when M > 16) straight from X
// in global memory: X is at most 32 x k f16 (128 KB at k = 2048) that every workgroup reads, so it is
// served from L1 / L2. At the end the subgroups' partial 16x16 accumulators meet in shared memory and
// every invocation sums one element's SG partials and writes it (bounds-checked: ragged M and m).
//
// BK, the k step, is 64 (RCM_BK=128: the *_k128 variants, half the steps of a long k's chain of dependent
// loads, twice the loads in flight; plain only). RCM_ROWS32 (the *_r32 variants, plain): 32 rows of W a
// workgroup, two B fragments sharing each A fragment and the workgroup's fixed costs (for the head, whose
// 8016 workgroups of 16 rows ran at ~450 GB/s on the H100); grid ((m + 31) / 32, 1).
// Contract (the host's conditions): k % BK == 0 (F16 rows are then 16-byte aligned; Q4_K rows of k not a
// multiple of 256 are padded to whole blocks, and only chunks below k are read); M <= 32; X's binding holds
// 16 rows of k values (32 when M > 16): A fragments read whole 16-row slabs and rows past M only reach
// accumulator rows that are never written (a row of D = A B depends on that row of A alone), so they may
// hold anything, NaN included; gated: m even. Subgroups of 32 (Device::has_coopmat_f16).
// Dispatch: ((m + 15) / 16, 1). Spec constant 0: the workgroup size, 32 SG (SG subgroups; the host keeps
// the shared arrays, 16 (BK / 8 + 1) 16 B x NF + 1 KiB x NF per subgroup, within the device's limit).
//
// RCM_X_SHARED (the *_xs variants, M <= 16): the A fragments come from shared memory, where each subgroup
// stages its step's 16 x BK slice of X beside the W tile (fetched a step ahead with plain 16-byte loads).
// Fragment loads straight from global memory cost the N = 16 step on the H100 0.82 of its 3.13 ms
// (a variant with constant A fragments took 2.31 ms, 2026-11-24 session 7).
//
// RCM_EMULATE (the matmul_rows_emu_* variants, for tests on devices without cooperative matrices: lavapipe)
// replaces the fragments: an operand is its offset and stride, each invocation of a 32-invocation group holds
// 8 elements of an accumulator and computes their dot products from X and the shared tile itself (f16
// values, f32 sums, as the tensor cores), and the subgroup barriers are workgroup barriers. Slow, but every
// index of this kernel (tiles, the k split, the partials, the epilogue) runs as on the GPU, so CI checks
// them where the real kernel cannot run.
#ifndef RCM_EMULATE
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "params.h"
#ifdef RCM_GATED
#define W_UP
#endif
#include "weight_chunk.glsl"
#include "common.glsl"

#ifndef RCM_BK
#define RCM_BK 64
#endif
const uint BK = RCM_BK;
#ifdef RCM_X_SHARED
const uint MF = 1;  // A fragments: tokens 0-15 (the host's condition: M <= 16)
#else
const uint MF = 2;  // A fragments: tokens 0-15 and 16-31 (the second only when M > 16, a uniform branch)
#endif
#if defined(RCM_GATED)
const uint NF = 2, FSTEP = 0;  // B fragments: gate rows, up rows (the same 16 row indices)
#elif defined(RCM_ROWS32)
const uint NF = 2, FSTEP = 16;  // rows n0 .. n0 + 15 and n0 + 16 .. n0 + 31 of one matrix (the head)
#else
const uint NF = 1, FSTEP = 0;
#endif
const uint WROWS = 16u + FSTEP;  // rows of W a workgroup
#if defined(RCM_X_SHARED) && (defined(RCM_GATED) || defined(RCM_ROWS32))
layout(local_size_x = 96, local_size_x_id = 0) in;  // unspecialized, within 32 KiB of shared memory
#else
layout(local_size_x = 128, local_size_x_id = 0) in;
#endif
const uint NT = gl_WorkGroupSize.x, SG = NT / 32u;

#ifdef RCM_GATED
layout(push_constant) uniform PC { MatvecNormParams p; };  // m, k, batch, act (accumulate, eps, offset unused)
layout(std430, binding = 2) writeonly buffer Y { uint yh[]; };  // f16 pairs
#else
layout(push_constant) uniform PC { MatvecParams p; };
layout(std430, binding = 2) buffer Y { float y[]; };
#endif
layout(std430, binding = 1) readonly buffer X { uvec4 x8[]; };  // 8 f16 values each

#ifndef RCM_EMULATE
#define F16MAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define F32MAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define MAT_ZERO F32MAT(0.0)
#ifdef RCM_X_SHARED
#define LOAD_X(a, o, stride, tok0) coopMatLoadNV(a, xs, o, stride, false)
#else
#define LOAD_X(a, o, stride, tok0) coopMatLoadNV(a, x8, o, stride, false)
#endif
#define LOAD_W(b, o, stride) coopMatLoadNV(b, ws, o, stride, true)
#define MMA(a, b, c) c = coopMatMulAddNV(a, b, c)
#define STORE_RED(c, o) coopMatStoreNV(c, red, o, 16u, false)
#define SG_BARRIER() subgroupBarrier()
#define SG_ID gl_SubgroupID
#define LANE gl_SubgroupInvocationID
#define KK_LOOP [[unroll]]
#else
struct EmuAcc {
  float v[8];  // elements LANE + 32 q (row e / 16, column e % 16) of a 16x16 accumulator
};
struct EmuRef {
  uint o, stride;  // a 16x16 f16 operand left where it lies: A in x8, B in ws
  uint rows;       // A: its rows that are tokens (< M), the only ones whose sums are ever written; B: 16
};
#define F16MAT EmuRef
#define F32MAT EmuAcc
#define MAT_ZERO emu_zero()
#define LOAD_X(a, o_, stride_, tok0) a = EmuRef(o_, stride_, min(16u, p.batch - min(p.batch, tok0)))
#define LOAD_W(b, o_, stride_) b = EmuRef(o_, stride_, 16u)
#define MMA(a, b, c) emu_mma(a, b, c)
#define STORE_RED(c, o) emu_store_red(c, o)
#define SG_BARRIER() barrier()
#define SG_ID (gl_LocalInvocationID.x / 32u)
#define LANE (gl_LocalInvocationID.x % 32u)
#define KK_LOOP [[dont_unroll]]  // llvmpipe compiles the emulation ~4x faster
#endif

// A staged W tile: 16 rows of BK f16 (BK / 8 uvec4) plus one uvec4 of padding, as matmul_cm's tiles
// (an odd number of 16-byte units a row puts a fragment load's 8 rows on distinct bank groups).
const uint LD = BK / 8u + 1u;
const uint TILE = 16u * LD;        // uvec4 per matrix and subgroup
const uint CPR = BK / 16u;         // 16-weight chunks per row and step
const uint WPL = 16u * CPR / 32u;  // chunks per lane and step (2 at BK 64)
shared uvec4 ws[SG * NF * TILE];
shared float red[SG * NF * 256u];  // the partial accumulators, [subgroup][matrix][16 x 16]
#ifdef RCM_X_SHARED
shared uvec4 xs[SG * TILE];  // each subgroup's 16 x BK slice of X, laid out as a W tile (row-major A)
#define A_SRC xs
#else
#define A_SRC x8
#endif

#ifdef RCM_EMULATE
EmuAcc emu_zero() {
  EmuAcc c;
  for (uint q = 0; q < 8u; ++q) c.v[q] = 0.0;
  return c;
}
// Element h of an array of f16 held 8 to a uvec4.
float emu_half(uvec4 q, uint h) { return unpackHalf2x16(q[(h >> 1) & 3u])[h & 1u]; }
// c += A B for this lane's 8 elements: A row-major in x8 or xs (row i at a.o + i a.stride), B column-major in ws
// (column j at b.o + j b.stride), products of f16 values exact in f32, sums in f32. Rows of A past the tokens are
// skipped (their sums stay 0 and are never written): at serve's usual 2-4 sequences that is 4-8x less work than
// the whole fragment, the difference between a test's 24-token request taking ~8 s and ~25 s on lavapipe (2 cores).
void emu_mma(EmuRef a, EmuRef b, inout EmuAcc c) {
  [[dont_unroll]] for (uint q = 0; q < 8u; ++q) {
    const uint e = LANE + 32u * q, i = e / 16u, j = e % 16u;
    if (i >= a.rows) break;  // rows grow with q
    float s = c.v[q];
    [[dont_unroll]] for (uint t = 0; t < 16u; ++t) s += emu_half(A_SRC[a.o + i * a.stride + t / 8u], t) * emu_half(ws[b.o + j * b.stride + t / 8u], t);
    c.v[q] = s;
  }
}
void emu_store_red(EmuAcc c, uint o) {
  for (uint q = 0; q < 8u; ++q) red[o + LANE + 32u * q] = c.v[q];
}
#endif

// This lane's raw loads of one step, held in registers between fetch and store. Lane l takes chunks
// c = l + 32 j: row c / CPR, weights 16 (c % CPR) .. of the step, so consecutive lanes read
// consecutive bytes of a row.
WChunk staged[WPL * NF];
#ifdef RCM_X_SHARED
// ... and the step's slice of X: 16 rows x BK / 8 uvec4, lane l taking u = l + 32 j (row u / (BK / 8)).
const uint XPL = 16u * (BK / 8u) / 32u;
uvec4 xstaged[XPL];
#endif

void fetch(uint n0, uint k0) {
  uint lane = LANE;
#ifdef RCM_X_SHARED
  [[unroll]] for (uint j = 0; j < XPL; ++j) {
    uint u = lane + 32u * j;
    xstaged[j] = x8[(u / (BK / 8u)) * (p.k / 8u) + k0 / 8u + u % (BK / 8u)];
  }
#endif
  [[unroll]] for (uint j = 0; j < WPL; ++j) {
    uint c = lane + 32u * j, row = min(n0 + c / CPR, p.m - 1u), e = k0 + 16u * (c % CPR);
    // Rows past m: zeroed in store. (Not a loop over f with w_fetch(f == 1u, ..): glslc 2023.2's optimizer
    // crashes on that.)
    staged[j * NF] = w_fetch(false, row, p.k, e);
#if defined(RCM_GATED)
    staged[j * NF + 1u] = w_fetch(true, row, p.k, e);
#elif defined(RCM_ROWS32)
    staged[j * NF + 1u] = w_fetch(false, min(n0 + 16u + c / CPR, p.m - 1u), p.k, e);
#endif
  }
}

void store(uint base, uint n0) {
  uint lane = LANE;
#ifdef RCM_X_SHARED
  [[unroll]] for (uint j = 0; j < XPL; ++j) {
    uint u = lane + 32u * j;
    xs[SG_ID * TILE + (u / (BK / 8u)) * LD + u % (BK / 8u)] = xstaged[j];
  }
#endif
  [[unroll]] for (uint j = 0; j < WPL; ++j) {
    uint c = lane + 32u * j, r = c / CPR;
    [[unroll]] for (uint f = 0; f < NF; ++f) {
      bool in_m = n0 + f * FSTEP + r < p.m;
      uvec4 h[2] = w_decode(staged[j * NF + f]);
      uint o = base + f * TILE + r * LD + 2u * (c % CPR);
      ws[o] = in_m ? h[0] : uvec4(0u);
      ws[o + 1u] = in_m ? h[1] : uvec4(0u);
    }
  }
}

void main() {
  const uint sg = SG_ID, n0 = gl_WorkGroupID.x * WROWS, kv = p.k / 8u, steps = p.k / BK;
  const bool two = MF > 1u && p.batch > 16u;  // uniform: the second A fragment's loads and multiply-adds
  const uint base = sg * NF * TILE;

  F32MAT acc[MF][NF];
  [[unroll]] for (uint i = 0; i < MF; ++i)
    [[unroll]] for (uint f = 0; f < NF; ++f) acc[i][f] = MAT_ZERO;

  if (sg < steps) {
    fetch(n0, sg * BK);
    store(base, n0);
  }
  // Every subgroup makes the same number of passes (uniform barriers for the emulation); a subgroup past the
  // last step idles through its final pass.
  for (uint s0 = 0; s0 < steps; s0 += SG) {
    const uint s = s0 + sg;
    const bool more = s + SG < steps;
    if (more) fetch(n0, (s + SG) * BK);
    SG_BARRIER();  // every lane's part of this step's tile is stored (and visible: shared memory semantics)
    if (s < steps) {
      KK_LOOP for (uint kk = 0; kk < BK / 16u; ++kk) {
        F16MAT a0, a1;
#ifdef RCM_X_SHARED
        LOAD_X(a0, sg * TILE + 2u * kk, LD, 0u);  // this subgroup's slice of step s
#else
        const uint xo = (s * BK + 16u * kk) / 8u;  // in uvec4 units
        LOAD_X(a0, xo, kv, 0u);
        if (two) LOAD_X(a1, 16u * kv + xo, kv, 16u);
#endif
        [[unroll]] for (uint f = 0; f < NF; ++f) {
          // B = W^T [k, rows]: column n is row n of W, stored k-contiguous, i.e. column-major.
          F16MAT b;
          LOAD_W(b, base + f * TILE + 2u * kk, LD);
          MMA(a0, b, acc[0][f]);
#ifndef RCM_X_SHARED
          if (two) MMA(a1, b, acc[1][f]);
#endif
        }
      }
    }
    SG_BARRIER();  // every lane's B loads are done before the tile is overwritten
    if (more) store(base, n0);
  }

  // The partials meet: fragment i covers tokens 16 i .. 16 i + 15 and rows n0 .. n0 + 15 of Y; element e
  // of it is token 16 i + e / 16, row n0 + e % 16.
  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < MF; ++i) {
    if (i > 0u && !two) break;
    [[unroll]] for (uint f = 0; f < NF; ++f) STORE_RED(acc[i][f], (sg * NF + f) * 256u);
    barrier();
#ifdef RCM_GATED
    for (uint e2 = lid; e2 < 128u; e2 += NT) {  // two neighbouring rows an invocation: one f16 pair
      const uint e = 2u * e2, tok = 16u * i + e / 16u, row = n0 + e % 16u;
      vec2 g = vec2(0.0), u = vec2(0.0);
      for (uint t = 0; t < SG; ++t) {
        g += vec2(red[(t * 2u) * 256u + e], red[(t * 2u) * 256u + e + 1u]);
        u += vec2(red[(t * 2u + 1u) * 256u + e], red[(t * 2u + 1u) * 256u + e + 1u]);
      }
      if (tok < p.batch && row < p.m) yh[(tok * p.m + row) / 2u] = packHalf2x16(vec2(bs_act(g.x, p.act), bs_act(g.y, p.act)) * u);
    }
#else
    for (uint e = lid; e < 256u * NF; e += NT) {  // element el of fragment f
      const uint f = e / 256u, el = e % 256u, tok = 16u * i + el / 16u, row = n0 + f * FSTEP + el % 16u;
      float v = 0.0;
      for (uint t = 0; t < SG; ++t) v += red[(t * NF + f) * 256u + el];
      if (tok < p.batch && row < p.m) {
        const uint o = tok * p.m + row;
        y[o] = (p.accumulate != 0u ? y[o] : 0.0) + v;
      }
    }
#endif
    barrier();  // the next fragment reuses red
  }
}
