// The argmax rule of the greedy sampler (sample.comp) and its slices (argmax_parts.comp), torch.argmax's: the largest
// value, the lowest id holding it. Include after common.glsl (bs_red). An id of 0xffffffff means none (no value above
// -FLT_MAX, e.g. all -inf or NaN).

// Whether (v, i) takes the place of (best, best_i).
bool argmax_takes(float v, uint i, float best, uint best_i) { return v > best || (v == best && i < best_i); }

// The same rule as one unsigned 64-bit key (lo, hi), the larger key the one argmax_takes keeps: hi is the value's bits
// made to order as unsigned integers (negatives inverted, the sign bit set on the rest; -0 as +0, which argmax_takes
// holds equal), lo the id inverted, so that among equal values the lower id is the larger key. A 64-bit atomicMax
// applies the rule in any order (the head's *_argmax matvecs, matvec.glsl). Key 0 is none: ids of 0xffffffff and the
// values no id takes (-inf, NaN: nothing lies above -FLT_MAX) map to it, and it reads back as (-FLT_MAX, 0xffffffff).
// The tests are on the bits, so no compiler's float assumptions reach them.
uvec2 argmax_key(float v, uint i) {
  uint b = floatBitsToUint(v);
  if ((b & 0x7fffffffu) == 0u) b = 0u;
  if ((b & 0x7fffffffu) > 0x7f800000u || b == 0xff800000u || i == 0xffffffffu) return uvec2(0u);
  return uvec2(~i, (b & 0x80000000u) != 0u ? ~b : b | 0x80000000u);
}
void argmax_unkey(uvec2 k, out float v, out uint i) {
  v = k.y == 0u ? -3.402823466e38 : uintBitsToFloat((k.y & 0x80000000u) != 0u ? k.y & 0x7fffffffu : ~k.y);
  i = k.y == 0u ? 0xffffffffu : ~k.x;
}

#ifndef ARGMAX_KEY_ONLY
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
#endif  // ARGMAX_KEY_ONLY
