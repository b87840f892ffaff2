// Sum over a workgroup of n invocations (DeltaNet's heads are v_dim invocations: 20, 40, 128 ...), through
// shared memory only. common.glsl's workgroup_sum combines subgroup sums by gl_SubgroupID / gl_NumSubgroups,
// which came out short on lavapipe for workgroups of 20 and 24 invocations; a shared-memory tree does not
// depend on the subgroup layout. n is passed in: gl_WorkGroupSize read inside a function gave the
// unspecialized size (128) there.
shared float bsum_red[256];
float block_sum(float v, uint n) {
  const uint j = gl_LocalInvocationID.x;
  bsum_red[j] = v;
  barrier();
  uint s = 1u;
  while (s < n) s <<= 1u;
  for (s >>= 1u; s > 0u; s >>= 1u) {
    if (j < s && j + s < n) bsum_red[j] += bsum_red[j + s];
    barrier();
  }
  float r = bsum_red[0];
  barrier();
  return r;
}
