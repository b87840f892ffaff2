// The argmax rule of the greedy sampler (sample.comp) and its slices (argmax_parts.comp), torch.argmax's: the largest
// value, the lowest id holding it. Include after common.glsl (bs_red). An id of 0xffffffff means none (no value above
// -FLT_MAX, e.g. all -inf or NaN).

// Whether (v, i) takes the place of (best, best_i).
bool argmax_takes(float v, uint i, float best, uint best_i) { return v > best || (v == best && i < best_i); }

shared uint bs_red_id[MAX_SUBGROUPS];

// The workgroup's (best, best_i), into every invocation's; in uniform control flow (barriers).
void workgroup_argmax(inout float best, inout uint best_i) {
  float sb = subgroupMax(best);
  uint si = subgroupMin(best == sb ? best_i : 0xffffffffu);
  if (subgroupElect()) {
    bs_red[gl_SubgroupID] = sb;
    bs_red_id[gl_SubgroupID] = si;
  }
  barrier();
  best = -3.402823466e38;
  best_i = 0xffffffffu;
  for (uint g = 0u; g < gl_NumSubgroups; ++g)
    if (argmax_takes(bs_red[g], bs_red_id[g], best, best_i)) {
      best = bs_red[g];
      best_i = bs_red_id[g];
    }
  barrier();  // bs_red is reused
}
