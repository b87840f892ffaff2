// The multi-row matvec with invocations across rows of W (MV_LANES, included by matvec_multi.glsl; the
// *_multi_lanes variants): Y[b, :] (+)= W X[b, :] for up to NB batch rows, W decoded once per step.
//
// Why: the first multi-row kernel (lanes across k, a few rows of W a workgroup) measured no faster than
// re-decoding W per sequence on the H100 (2026-11-24 evening: 8.8 ms of a 7.9 ms step at N = 16). Its
// x traffic explains it: every workgroup of ROWS rows reads all NB rows of x, NB x 4 / (ROWS x 0.56) =
// ~28 times the bytes of W it decodes, ~22 GB a step from L2. Here lane l of a workgroup owns rows
// row0 + l + LR t (t < ROWS) and all lanes of a slice of LR invocations walk the same parts of k, so
// each x value a slice loads is one address for all its lanes (a broadcast) and serves LR x ROWS rows:
// x traffic falls ~LR-fold. The workgroup's slices split k (contiguous ranges of parts, so a lane
// reads its row sequentially) and their partial sums meet in shared memory at the end.
//
// Plain (with accumulate) and gated (MV_GATED: rows of W and of the up matrix, y = act(W x) * (U x));
// no norm folded (the host normalizes x first): every lane of a slice sees the same x, so a folded sum
// of squares would cost each lane a row's worth of FMAs.
// Spec constants: 0 = workgroup size (a multiple of LR), 1 = ROWS, 2 = NB, 3 = LR (lanes a slice: the
// subgroup size where it is known, so a slice's x loads are one broadcast).
// Grid: ((m + LR ROWS - 1) / (LR ROWS), (batch + NB - 1) / NB).
layout(constant_id = 3) const uint MV_LR = 32;
const uint MV_NACC = NB * MV_NR;
// Slices 1.. leave their sums here for slice 0, value i of lane l of slice s at i * (WG - LR) + (s - 1) LR + l
// (consecutive lanes, consecutive words). +1: a one-slice workgroup needs none.
shared float mv_red[(gl_WorkGroupSize.x - MV_LR) * MV_NACC + 1u];

void main() {
  const uint lid = gl_LocalInvocationID.x, lane = lid % MV_LR, slice = lid / MV_LR;
  const uint nslices = gl_WorkGroupSize.x / MV_LR, others = gl_WorkGroupSize.x - MV_LR;
  uint row0 = gl_WorkGroupID.x * MV_LR * ROWS, b0 = gl_WorkGroupID.y * NB;
  uint nbr = min(NB, p.batch - b0), kv = p.k / 4u, nparts = mv_nparts();
  uint per = (nparts + nslices - 1u) / nslices, p0 = min(slice * per, nparts), p1 = min(p0 + per, nparts);
  float acc[MV_NACC];  // [batch row][accumulator row]
  [[unroll]] for (uint i = 0; i < MV_NACC; ++i) acc[i] = 0.0;
  for (uint part = p0; part < p1; ++part) {
    uvec2 g = mv_groups(part);
    if (g.x >= kv) continue;  // padding only (uniform across the slice)
    bool hi = g.y < kv;
    vec4 wa[MV_NR], wb[MV_NR];
    [[unroll]] for (uint r = 0; r < MV_NR; ++r) {
      uint t = r < ROWS ? r : r - ROWS;  // rows past m decode a duplicate of the last row, never written
      mv_decode(min(row0 + lane + MV_LR * t, p.m - 1u), r >= ROWS, part, wa[r], wb[r]);
    }
    [[unroll]] for (uint b = 0; b < NB; ++b) {
      if (b < nbr) {
        uint xb = (b0 + b) * kv;
        vec4 xa = x[xb + g.x], xc = hi ? x[xb + g.y] : vec4(0.0);
        [[unroll]] for (uint r = 0; r < MV_NR; ++r) acc[b * MV_NR + r] += dot(wa[r], xa) + dot(wb[r], xc);
      }
    }
  }
  if (slice > 0u) {
    [[unroll]] for (uint i = 0; i < MV_NACC; ++i) mv_red[i * others + (slice - 1u) * MV_LR + lane] = acc[i];
  }
  barrier();
  if (slice > 0u) return;
  for (uint s = 1u; s < nslices; ++s) {
    [[unroll]] for (uint i = 0; i < MV_NACC; ++i) acc[i] += mv_red[i * others + (s - 1u) * MV_LR + lane];
  }
  [[unroll]] for (uint b = 0; b < NB; ++b) {
    [[unroll]] for (uint t = 0; t < ROWS; ++t) {
      uint row = row0 + lane + MV_LR * t;
      if (b < nbr && row < p.m) {
        float s = acc[b * MV_NR + t];
#ifdef MV_GATED
        s = bs_act(s, p.act) * acc[b * MV_NR + ROWS + t];
#endif
        uint o = (b0 + b) * p.m + row;
        y[o] = p.accumulate != 0u ? y[o] + s : s;
      }
    }
  }
}
