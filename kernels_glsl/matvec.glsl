// Shared epilogue of the matvec kernels: a workgroup owns ROWS rows of W (one batch row), every
// invocation accumulates partial dot products for all of them in mv_acc, and mv_finish reduces them
// across the workgroup and writes y (adding into y when p.accumulate != 0, the residual add folded into
// the projection). Subgroup-size agnostic: per-subgroup sums meet in shared memory.
//
// The including kernel declares: spec constant ROWS, push constant `p` (MatvecParams), buffer `y`.
float mv_acc[ROWS];
shared float mv_red[ROWS * MAX_SUBGROUPS];

void mv_finish(uint row0, uint b) {
  for (uint r = 0; r < ROWS; ++r) {
    float s = subgroupAdd(mv_acc[r]);
    if (subgroupElect()) mv_red[r * MAX_SUBGROUPS + gl_SubgroupID] = s;
  }
  barrier();
  for (uint r = gl_LocalInvocationID.x; r < ROWS; r += gl_WorkGroupSize.x) {
    if (row0 + r >= p.m) break;
    float s = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) s += mv_red[r * MAX_SUBGROUPS + i];
    uint o = b * p.m + row0 + r;
    y[o] = p.accumulate != 0u ? y[o] + s : s;
  }
}
