// One embedding row out: embed_store(first + e, W[row, e] * scale) for e < dim, by the whole workgroup (weight_at:
// weight_fetch.glsl, included before this with the table's dtype). The includer defines embed_store(i, v) first.
// R values an invocation, all their loads issued before the first store: one trip to memory per R x WG values. (One
// value a loop trip was a chain of dependent round trips: the decode step's embed took 35 us for a 4096-wide F16 row
// on the H200, 2026-11-28-h200-session17.md.) embed.comp (a row a workgroup) and sample.comp's SAMPLE_EMBED (the
// sampled token's row, for the next decode step) write rows this way.
#extension GL_EXT_control_flow_attributes : require
const uint kEmbedR = 8u;

void embed_row(uint row, uint dim, float scale, uint first) {
  uint wg = gl_WorkGroupSize.x;
  for (uint i0 = gl_LocalInvocationID.x; i0 < dim; i0 += kEmbedR * wg) {
    float v[kEmbedR];
    [[unroll]] for (uint r = 0u; r < kEmbedR; ++r) v[r] = i0 + r * wg < dim ? weight_at(row, dim, i0 + r * wg) : 0.0;
    [[unroll]] for (uint r = 0u; r < kEmbedR; ++r)
      if (i0 + r * wg < dim) embed_store(first + i0 + r * wg, v[r] * scale);
  }
}
