// One embedding row out: embed_store(first + e, W[row, e] * scale) for e < dim, by the whole workgroup (weight_at:
// weight_fetch.glsl, included before this with the table's dtype). The includer defines embed_store(i, v) first.
// R values an invocation, all their loads issued before the first store: one trip to memory per R x WG values. (One
// value a loop trip was a chain of dependent round trips: the decode step's embed took 35 us for a 4096-wide F16 row
// on the H200, 2026-11-28-h200-session17.md.) embed.comp (a row a workgroup) and sample.comp's SAMPLE_EMBED (the
// sampled token's row, for the next decode step) write rows this way; Q6_K rows a part of 16 values an invocation.
#extension GL_EXT_control_flow_attributes : require
const uint kEmbedR = 8u;

// The rows of `dim` values the table's binding holds, read off its length rounded up to cover a final half word (the
// binding must be whole rows, optionally padded by fewer than row_bytes - 2 bytes; embed.comp).
uint embed_rows(uint dim) { return (uint(wt.length()) * kWeightElemBytes + 2u) / weight_row_bytes(dim); }

void embed_row(uint row, uint dim, float scale, uint first) {
  uint wg = gl_WorkGroupSize.x;
#ifdef W_Q6K
  // Q6_K (dim % 256 == 0): a part is 4 consecutive l of half h of a block, 16 values (quarters qq = 0..3) from one
  // word each of ql, ql + 32 and qh (q6k_codes), their 4 scales' 8 bytes and d: 6 loads, all issued at once, where
  // weight_at takes 4 a value. The values are weight_at's, bit for bit: d * the quarter's scale * (q - 32), then *
  // scale.
  for (uint part = gl_LocalInvocationID.x; part < dim / 16u; part += wg) {
    uint blk = part >> 4, h = (part >> 3) & 1u, l = 4u * (part & 7u), bo = (row * (dim >> 8) + blk) * 56u;  // words
    uvec4 q = q6k_codes(wt[bo + 16u * h + l / 4u], wt[bo + 16u * h + 8u + l / 4u], wt[bo + 32u + 8u * h + l / 4u]);
    uint s0 = wt[bo + 48u + 2u * h], s1 = wt[bo + 49u + 2u * h];  // scale bytes 8 h + 0..7
    float d = unpackHalf2x16(wt[bo + 52u]).x;
    [[unroll]] for (uint qq = 0u; qq < 4u; ++qq) {
      uint sb = 2u * qq + (l >> 4), sw = sb < 4u ? s0 : s1;  // quarter qq's scale: byte 8 h + 2 qq + l / 16
      float sc = float(int(sw << (24u - 8u * (sb & 3u))) >> 24);
      [[unroll]] for (uint b = 0u; b < 4u; ++b)
        embed_store(first + 256u * blk + 128u * h + 32u * qq + l + b,
                    d * sc * (float((q[qq] >> (8u * b)) & 0xFFu) - 32.0) * scale);
    }
  }
#else
  for (uint i0 = gl_LocalInvocationID.x; i0 < dim; i0 += kEmbedR * wg) {
    float v[kEmbedR];
    [[unroll]] for (uint r = 0u; r < kEmbedR; ++r) v[r] = i0 + r * wg < dim ? weight_at(row, dim, i0 + r * wg) : 0.0;
    [[unroll]] for (uint r = 0u; r < kEmbedR; ++r)
      if (i0 + r * wg < dim) embed_store(first + i0 + r * wg, v[r] * scale);
  }
#endif
}
