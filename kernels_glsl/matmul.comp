#version 450
// Prefill GEMM: Y[M, m] (+)= X[M, k] . W[m, k]^T for f32 X, W in the weight dtype (W_F16 | W_Q8_0 |
// W_Q4K | W_Q6K, decoded by weight_fetch.glsl), f32 accumulation. MatvecParams: m, k, batch = M,
// accumulate (adds into Y: the residual add).
//
// Dispatch: ((m + 63) / 64, (M + 63) / 64). A workgroup of 256 invocations computes a 64 (tokens) x 64
// (rows of W) tile of Y, stepping through k 32 at a time: it stages the X tile and the decoded W tile
// in shared memory (f32, 2 x 8.1 KiB, within lavapipe's 32 KiB), then each invocation accumulates a
// 4 x 4 block: tokens ty + 16i, rows tx + 16j. Strided (not contiguous) ownership keeps the shared
// reads of a subgroup on distinct banks and its Y writes contiguous. Every W weight is decoded once
// per workgroup and used by all 64 tokens, so exact per-weight decoding costs little.
// The tiles carry one column of padding so the transposing stores do not collide on one bank.
// A cooperative-matrix variant for tensor cores is a later step.
#include "params.h"
#include "weight_fetch.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
#ifdef MM_EXPERT
// The grouped expert GEMM of MoE prefill: W is [experts, estride, k] (rows row0 .. row0 + m of each expert
// taken); workgroup y = e * p.tiles + tile takes token
// tile `tile` of the slots routed to expert e (moe_group: count, offset, perm), x row perm[.] / x_div in, y
// row perm[.] out. Dispatch ((m + 63) / 64, experts * tiles) with tiles = (rows + 63) / 64: an expert gets at
// most `rows` slots (one per token), and tiles past its count exit at once, so the grid is fixed.
layout(push_constant) uniform PC { MoeMatvecParams p; };
layout(std430, binding = 9) readonly buffer Cnt { uint counts[]; };
layout(std430, binding = 10) readonly buffer Off { uint offsets[]; };
layout(std430, binding = 11) readonly buffer Perm { uint perm[]; };
#else
layout(push_constant) uniform PC { MatvecParams p; };
#endif

const uint TM = 64, TN = 64, TK = 32;
shared float xs[TK][TM + 1];
shared float ws[TK][TN + 1];

void main() {
  uint tid = gl_LocalInvocationID.x, tx = tid % 16u, ty = tid / 16u;
#ifdef MM_EXPERT
  uint n0 = gl_WorkGroupID.x * TN, t0 = (gl_WorkGroupID.y % p.tiles) * TM;
  const uint e = gl_WorkGroupID.y / p.tiles, n_tok = counts[e], base = offsets[e], wrow0 = e * p.estride + p.row0;
  if (t0 >= n_tok) return;  // the whole workgroup: no barrier is skipped
#else
  uint n0 = gl_WorkGroupID.x * TN, t0 = gl_WorkGroupID.y * TM;
  const uint n_tok = p.batch, wrow0 = 0u;
#endif
  // Staging: invocation tid loads column kk = tid % 32 of tile rows tid / 32 + 8 i.
  uint kk = tid % TK, r8 = tid / TK;
  float acc[4][4];
  for (uint i = 0; i < 4u; ++i)
    for (uint j = 0; j < 4u; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += TK) {
    uint kc = k0 + kk;
    for (uint i = 0; i < TM / 8u; ++i) {
      uint tm = r8 + 8u * i, tok = t0 + tm, row = n0 + tm;
#ifdef MM_EXPERT
      uint xr = tok < n_tok ? perm[base + tok] / p.x_div : 0u;
#else
      uint xr = tok;
#endif
      xs[kk][tm] = tok < n_tok && kc < p.k ? x[xr * p.k + kc] : 0.0;
      ws[kk][tm] = row < p.m && kc < p.k ? weight_at(wrow0 + row, p.k, kc) : 0.0;
    }
    barrier();
    for (uint c = 0; c < TK; ++c) {
      float a[4], b[4];
      for (uint i = 0; i < 4u; ++i) a[i] = xs[c][ty + 16u * i];
      for (uint j = 0; j < 4u; ++j) b[j] = ws[c][tx + 16u * j];
      for (uint i = 0; i < 4u; ++i)
        for (uint j = 0; j < 4u; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }

  for (uint i = 0; i < 4u; ++i) {
    uint tok = t0 + ty + 16u * i;
    if (tok >= n_tok) continue;
#ifdef MM_EXPERT
    uint yr = perm[base + tok];
#else
    uint yr = tok;
#endif
    for (uint j = 0; j < 4u; ++j) {
      uint row = n0 + tx + 16u * j;
      if (row >= p.m) continue;
      uint o = yr * p.m + row;
      y[o] = p.accumulate != 0u ? y[o] + acc[i][j] : acc[i][j];
    }
  }
}
