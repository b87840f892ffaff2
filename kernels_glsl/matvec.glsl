// Shared epilogue of the matvec kernels: a workgroup owns ROWS rows of W (one batch row), every
// invocation accumulates partial dot products for all of them in mv_acc, and mv_finish reduces them
// across the workgroup and writes y (adding into y when p.accumulate != 0, the residual add folded into
// the projection). Subgroup-size agnostic: per-subgroup sums meet in shared memory.
//
// The including kernel declares: spec constant ROWS, push constant `p` (MatvecParams), buffers `x`, `y`.
//
// MV_NORM folds the RMSNorm that precedes the projection into it (p is then MatvecNormParams, and the
// norm weight is binding 3): the kernels read x only through mv_x4/mv_x2/mv_x1, which scale each value
// by (offset + nw[i]) and add x^2 to mv_ss. Every element of x is read exactly once per workgroup, so
// the workgroup's sum of squares comes for free with the dot products; the scale rsqrt(mean + eps) is
// a common factor of each row's sum and is applied in mv_finish. No separate norm dispatch, no barrier.
float mv_acc[ROWS];
shared float mv_red[(ROWS + 1) * MAX_SUBGROUPS];

// x is vec4[] in the K-quant and Q8_0 kernels (read with mv_x4), float[] in the f16 one (MV_X_SCALAR:
// mv_x2 and mv_x1).
#ifdef MV_NORM
layout(std430, binding = 3) readonly buffer NW { float nw[]; };
float mv_ss = 0.0;
#ifdef MV_X_SCALAR
vec2 mv_x2(uint base, uint e) {  // x[base + e], x[base + e + 1]
  vec2 v = vec2(x[base + e], x[base + e + 1u]);
  mv_ss += dot(v, v);
  return v * (p.offset + vec2(nw[e], nw[e + 1u]));
}
float mv_x1(uint base, uint e) {
  float v = x[base + e];
  mv_ss += v * v;
  return v * (p.offset + nw[e]);
}
#else
vec4 mv_x4(uint i) {  // i counts vec4s of x, from the start of the binding (batch row b at b * k / 4)
  vec4 v = x[i];
  mv_ss += dot(v, v);
  uint e = (i * 4u) % p.k;
  return v * (p.offset + vec4(nw[e], nw[e + 1u], nw[e + 2u], nw[e + 3u]));
}
#endif
#else
#ifdef MV_X_SCALAR
vec2 mv_x2(uint base, uint e) { return vec2(x[base + e], x[base + e + 1u]); }
float mv_x1(uint base, uint e) { return x[base + e]; }
#else
vec4 mv_x4(uint i) { return x[i]; }
#endif
#endif

void mv_finish(uint row0, uint b) {
  for (uint r = 0; r < ROWS; ++r) {
    float s = subgroupAdd(mv_acc[r]);
    if (subgroupElect()) mv_red[r * MAX_SUBGROUPS + gl_SubgroupID] = s;
  }
#ifdef MV_NORM
  float ss = subgroupAdd(mv_ss);
  if (subgroupElect()) mv_red[ROWS * MAX_SUBGROUPS + gl_SubgroupID] = ss;
#endif
  barrier();
#ifdef MV_NORM
  ss = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) ss += mv_red[ROWS * MAX_SUBGROUPS + i];
  float scale = inversesqrt(ss / float(p.k) + p.eps);
#endif
  for (uint r = gl_LocalInvocationID.x; r < ROWS; r += gl_WorkGroupSize.x) {
    if (row0 + r >= p.m) break;
    float s = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) s += mv_red[r * MAX_SUBGROUPS + i];
#ifdef MV_NORM
    s *= scale;
#endif
    uint o = b * p.m + row0 + r;
    y[o] = p.accumulate != 0u ? y[o] + s : s;
  }
}
