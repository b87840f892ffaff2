// The multi-row matvec (MV_MULTI; serve's batched decode): Y[b, :] (+)= W X[b, :] for up to NB batch rows
// per workgroup, W decoded once for all of them. The plain decode matvec (matvec.glsl) runs one workgroup
// per (batch row, row group), so every batch row re-decodes W and re-reads it from L2: +0.5 ms per row per
// step on Llama-3.2-1B. Here a workgroup owns ROWS rows of W and NB batch rows: each invocation decodes a
// part of 8 weights of each of its rows into registers (scales applied: 8 x ROWS floats) and multiplies
// them into each batch row's 8 x values, so the weights' decode costs 1/NB of what it did per FMA and
// every x value loaded serves ROWS (2 ROWS gated) FMAs. NB x ROWS accumulators per invocation, reduced
// per (batch row, weight row) at the end. Grid: ((m + ROWS - 1) / ROWS, (batch + NB - 1) / NB).
//
// Without MV_NORM, MV_GATED takes x as normalized already (the *_multi_gated_xn variants): a folded sum of
// squares costs 8 FMAs a part and batch row, as many as a row's dot product at ROWS 1.
// MV_NORM folds the RMSNorm before the projection (MatvecNormParams, norm weight at binding 3): each x
// value is read once per workgroup, so each batch row's sum of squares comes with the dot products; the
// norm weight is folded into the decoded weights (once per part, not per batch row) and the per-row
// scale rsqrt(mean + eps) into the sums. MV_GATED (with MV_NORM): gate rows in accumulators 0..ROWS-1,
// up rows (binding 4) in ROWS..2 ROWS-1, y = act(gate) * up (p.act as in matvec.glsl).
//
// The including kernel declares: spec constant ROWS (id 1), the weights (binding 0, with MV_GATED also
// binding 4), `x` as vec4[] (binding 1; k % 4 == 0), and after this file:
//   uint mv_nparts()  parts of a row (8 weights each);
//   uvec2 mv_groups(uint part)  the vec4 indices in a row of x of the part's two groups of 4 weights;
//   void mv_decode(uint row, bool up, uint part, out vec4 w0, out vec4 w1)  the part's weights of `row`
//     (of the up matrix when `up`), dequantized.
// Groups at or past k / 4 (Q4_K rows padded to whole blocks) read x as 0 and nw not at all.
// Spec constants: 0 = workgroup size, 1 = ROWS, 2 = NB. The reduction's shared array is (NB x accumulator
// rows + NB) x workgroup size floats: the host keeps it within the device's limit.
//
// The reduction: NB x ROWS (x 2) sums over the workgroup. Per value a subgroupAdd (5 shuffles and adds at
// 32 lanes) and a pass through shared memory cost ~10 instructions an invocation: ~800 for 80 values,
// a quarter of the work of a 2048-wide row at 64 invocations. Instead every invocation writes its values
// to its row of shared memory (an odd row stride: neighbours' rows start in different banks) and each
// value's column is summed by one invocation: ~3 instructions a value, whatever the subgroup size.
#extension GL_EXT_control_flow_attributes : require
layout(constant_id = 2) const uint NB = 4;  // small by default: every kernel builds with its defaults (tests)
#if defined(MV_NORM) || defined(MV_GATED)
layout(push_constant) uniform PC { MatvecNormParams p; };
#else
layout(push_constant) uniform PC { MatvecParams p; };
#endif
layout(std430, binding = 2) buffer Y { float y[]; };

#ifdef MV_GATED
const uint MV_NR = 2u * ROWS;
#else
const uint MV_NR = ROWS;
#endif
uint mv_nparts();
uvec2 mv_groups(uint part);
void mv_decode(uint row, bool up, uint part, out vec4 w0, out vec4 w1);

#ifdef MV_LANES
#include "matvec_lanes.glsl"
#else
#ifdef MV_NORM
layout(std430, binding = 3) readonly buffer NW { vec4 nw[]; };
#endif
const uint MV_NACC = NB * MV_NR;
float mv_acc[MV_NACC];  // [batch row][accumulator row]
#ifdef MV_NORM
float mv_ss[NB];
const uint MV_NV = MV_NACC + NB;  // the values to sum: accumulators, then sums of squares
#else
const uint MV_NV = MV_NACC;
#endif
const uint MV_STRIDE = MV_NV | 1u;
shared float mv_red[gl_WorkGroupSize.x * MV_STRIDE];
shared float mv_tot[MV_NV];

void main() {
  uint row0 = gl_WorkGroupID.x * ROWS, b0 = gl_WorkGroupID.y * NB;
  uint nbr = min(NB, p.batch - b0), kv = p.k / 4u, nparts = mv_nparts();
  // Every loop over accumulators unrolls (NB, ROWS are constants when the pipeline is made), so they
  // stay in registers; a batch row past the batch is skipped by a uniform branch, not a loop exit.
  [[unroll]] for (uint i = 0; i < MV_NACC; ++i) mv_acc[i] = 0.0;
#ifdef MV_NORM
  [[unroll]] for (uint b = 0; b < NB; ++b) mv_ss[b] = 0.0;
#endif
  for (uint part = gl_LocalInvocationID.x; part < nparts; part += gl_WorkGroupSize.x) {
    uvec2 g = mv_groups(part);
    if (g.x >= kv) continue;  // padding only
    bool hi = g.y < kv;
#ifdef MV_NORM
    vec4 na = p.offset + nw[g.x], nb = hi ? p.offset + nw[g.y] : vec4(0.0);
#endif
    vec4 wa[MV_NR], wb[MV_NR];
    [[unroll]] for (uint r = 0; r < MV_NR; ++r) {
      // Rows past m decode a duplicate of the last row, never written.
      mv_decode(min(row0 + (r < ROWS ? r : r - ROWS), p.m - 1u), r >= ROWS, part, wa[r], wb[r]);
#ifdef MV_NORM
      wa[r] *= na;
      wb[r] *= nb;
#endif
    }
    [[unroll]] for (uint b = 0; b < NB; ++b) {
      if (b < nbr) {
        uint xb = (b0 + b) * kv;
        vec4 xa = x[xb + g.x], xc = hi ? x[xb + g.y] : vec4(0.0);
#ifdef MV_NORM
        mv_ss[b] += dot(xa, xa) + dot(xc, xc);
#endif
        [[unroll]] for (uint r = 0; r < MV_NR; ++r) mv_acc[b * MV_NR + r] += dot(wa[r], xa) + dot(wb[r], xc);
      }
    }
  }

  const uint lid = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < MV_NACC; ++i) mv_red[lid * MV_STRIDE + i] = mv_acc[i];
#ifdef MV_NORM
  [[unroll]] for (uint b = 0; b < NB; ++b) mv_red[lid * MV_STRIDE + MV_NACC + b] = mv_ss[b];
#endif
  barrier();
  for (uint v = lid; v < MV_NV; v += gl_WorkGroupSize.x) {
    float s = 0.0;
    for (uint j = 0; j < gl_WorkGroupSize.x; ++j) s += mv_red[j * MV_STRIDE + v];
    mv_tot[v] = s;
  }
  barrier();
  for (uint o = lid; o < NB * ROWS; o += gl_WorkGroupSize.x) {
    uint b = o / ROWS, r = o % ROWS;
    if (b >= nbr || row0 + r >= p.m) continue;
    float s = mv_tot[b * MV_NR + r];
#ifdef MV_NORM
    float scale = inversesqrt(mv_tot[MV_NACC + b] / float(p.k) + p.eps);
    s *= scale;
#else
    const float scale = 1.0;  // x normalized by the host (the *_gated_xn variants)
#endif
#ifdef MV_GATED
    s = bs_act(s, p.act) * (mv_tot[b * MV_NR + ROWS + r] * scale);
#endif
    uint o2 = (b0 + b) * p.m + row0 + r;
    y[o2] = p.accumulate != 0u ? y[o2] + s : s;
  }
}
#endif  // MV_LANES
