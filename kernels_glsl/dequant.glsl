// Decoding GGML weight blocks from 32-bit words, shared by the matvec, matmul and embed kernels.
//
// Weights are bound as uint (or uvec4) arrays: 8-bit storage is optional in Vulkan, and Q8_0 (34 B)
// and Q6_K (210 B) blocks are only 2-byte aligned, so every other block starts mid-word. bs_funnel
// joins two words into the word that starts `sh` bits (0 or 16) into the first.
//
// Two ways to turn codes into floats:
//   * exact: float(code) — used where the work is not bandwidth-bound (matmul tiles, embed rows);
//   * biased mantissa: the code is OR-ed into the mantissa of 1.0, giving 1 + q/2^bits with one
//     shift and one and/or (no int->float conversion, which runs at 1/4 rate on NVIDIA). A dot product
//     then recovers sum(q*x) = 2^bits * (sum(f*x) - sum(x)), where sum(x) is computed once per chunk
//     of x and reused for every row. The cancellation costs a few ulps (a NMSE near 1e-13), far
//     below the f16 scales' own rounding.

uint bs_funnel(uint lo, uint hi, uint sh) {
  // (hi << 1) << (31 - sh) is hi << (32 - sh) without the undefined shift by 32 when sh == 0.
  return (lo >> sh) | ((hi << 1) << (31u - sh));
}

// f16 at a 2-byte aligned byte offset, given the word that holds it.
float bs_half_at(uint word, uint byte_off) { return unpackHalf2x16(word >> ((byte_off & 2u) * 8u)).x; }

// 1 + q/16 for the low (resp. high) nibbles of the 4 bytes of w, in byte order.
vec4 bs_nib_lo(uint w) {
  return uintBitsToFloat((uvec4(w << 19, w << 11, w << 3, w >> 5) & 0x00780000u) | 0x3F800000u);
}
vec4 bs_nib_hi(uint w) {
  return uintBitsToFloat((uvec4(w << 15, w << 7, w >> 1, w >> 9) & 0x00780000u) | 0x3F800000u);
}
// 1 + q/64 for 6-bit codes in the low bits of the 4 bytes of w.
vec4 bs_six(uint w) {
  return uintBitsToFloat((uvec4(w << 17, w << 9, w << 1, w >> 7) & 0x007E0000u) | 0x3F800000u);
}
// 1 + u/256 for u = q + 128, the 4 signed bytes of w biased to unsigned.
vec4 bs_byte_biased(uint w) {
  w ^= 0x80808080u;
  return uintBitsToFloat((uvec4(w << 15, w << 7, w >> 1, w >> 9) & 0x007F8000u) | 0x3F800000u);
}

// Exact codes, in byte order.
vec4 bs_nib_lo_exact(uint w) { return vec4((uvec4(w) >> uvec4(0, 8, 16, 24)) & 0xFu); }
vec4 bs_nib_hi_exact(uint w) { return vec4((uvec4(w) >> uvec4(4, 12, 20, 28)) & 0xFu); }
vec4 bs_i8_exact(uint w) { return vec4(ivec4(uvec4(w) << uvec4(24, 16, 8, 0)) >> 24); }

// Q4_K: the 6-bit scale and min of sub-block j (0..7) from the 12 scale bytes held in s.x, s.y, s.z
// (GGML's get_scale_min_k4: sub-blocks 0-3 use the low 6 bits of bytes j and j+4; sub-blocks 4-7 take
// their low 4 bits from byte j+4 and their top 2 bits from the top of bytes j-4 and j).
uvec2 q4k_scale_min(uvec3 s, uint j) {
  uint sh = (j & 3u) * 8u;
  uint a = (s.x >> sh) & 0xFFu, b = (s.y >> sh) & 0xFFu, c = (s.z >> sh) & 0xFFu;
  if (j < 4u) return uvec2(a & 63u, b & 63u);
  return uvec2((c & 15u) | ((a >> 6) << 4), (c >> 4) | ((b >> 6) << 4));
}

// Q6_K: four words of 6-bit codes from 4 bytes of ql at l, 4 bytes of ql at l + 32 and 4 bytes of
// qh at l (GGML interleaving): quarter 0 = low nibbles of ql[l] + qh bits 0-1, quarter 1 = low
// nibbles of ql[l+32] + qh bits 2-3, quarter 2 = high nibbles of ql[l] + bits 4-5, quarter 3 = high
// nibbles of ql[l+32] + bits 6-7. Byte i of result q holds the code of element l + i of the quarter.
uvec4 q6k_codes(uint ql_a, uint ql_b, uint qh) {
  return uvec4((ql_a & 0x0F0F0F0Fu) | ((qh << 4) & 0x30303030u),
               (ql_b & 0x0F0F0F0Fu) | ((qh << 2) & 0x30303030u),
               ((ql_a >> 4) & 0x0F0F0F0Fu) | (qh & 0x30303030u),
               ((ql_b >> 4) & 0x0F0F0F0Fu) | ((qh >> 2) & 0x30303030u));
}
