// Decoding GGML weight blocks from 32-bit words, shared by the matvec, matmul and embed kernels.
//
// Weights are bound as uint (or uvec4) arrays: 8-bit storage is optional in Vulkan, and Q8_0 blocks (34 B)
// are only 2-byte aligned, so every other block starts mid-word. bs_funnel joins two words into the word
// that starts `sh` bits (0 or 16) into the first. (Q6_K's 210-byte blocks are padded to 224 on the GPU:
// runtime/base/dtype.h.)
//
// Ways to turn codes into floats:
//   * exact: float(code) — where the work is not bound by arithmetic (the scalar matmul tiles, embed rows);
//   * into f16 for the tensor-core kernels: weight_chunk.glsl's w_from_bytes (codes OR-ed into 1024.0);
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

// 1 + q/64 for 6-bit codes in the low bits of the 4 bytes of w.
vec4 bs_six(uint w) {
  return uintBitsToFloat((uvec4(w << 17, w << 9, w << 1, w >> 7) & 0x007E0000u) | 0x3F800000u);
}
// 1 + u/256 for u = q + 128, the 4 signed bytes of w biased to unsigned.
vec4 bs_byte_biased(uint w) {
  w ^= 0x80808080u;
  return uintBitsToFloat((uvec4(w << 15, w << 7, w >> 1, w >> 9) & 0x007F8000u) | 0x3F800000u);
}

// Exact 4-bit codes without shifting each into place: nibble i of the word (bits 4i..4i+3) is masked
// where it lies and OR-ed into 2^23 (0x4B000000), so the float minus 2^23 is q * 2^(4i) exactly (all
// below 2^23). Nibbles 5-7 would reach the exponent, so they are taken from w >> 12. Byte order:
// bs_q4_lo gives q * (1, 2^8, 2^16, 2^12) for the low nibbles of bytes 0..3, bs_q4_hi q * (2^4, 2^12,
// 2^8, 2^16) for the high ones; multiply x by kQ4LoScale / kQ4HiScale (exact powers of 2) to cancel.
const vec4 kQ4LoScale = vec4(1.0, 1.0 / 256.0, 1.0 / 65536.0, 1.0 / 4096.0);
const vec4 kQ4HiScale = vec4(1.0 / 16.0, 1.0 / 4096.0, 1.0 / 256.0, 1.0 / 65536.0);
vec4 bs_q4_lo(uint w) {
  uint u = w >> 12;
  return uintBitsToFloat((uvec4(w, w, w, u) & uvec4(0xFu, 0xF00u, 0xF0000u, 0xF000u)) | 0x4B000000u) - 8388608.0;
}
vec4 bs_q4_hi(uint w) {
  uint u = w >> 12;
  return uintBitsToFloat((uvec4(w, w, u, u) & uvec4(0xF0u, 0xF000u, 0xF00u, 0xF0000u)) | 0x4B000000u) - 8388608.0;
}

// Q4_K: the 6-bit scale and min of sub-block j (0..7) from the 12 scale bytes held in s.x, s.y, s.z
// (GGML's get_scale_min_k4: sub-blocks 0-3 use the low 6 bits of bytes j and j+4; sub-blocks 4-7 take
// their low 4 bits from byte j+4 and their top 2 bits from the top of bytes j-4 and j).
uvec2 q4k_scale_min(uvec3 s, uint j) {
  uint sh = (j & 3u) * 8u;
  uint a = (s.x >> sh) & 0xFFu, b = (s.y >> sh) & 0xFFu, c = (s.z >> sh) & 0xFFu;
  if (j < 4u) return uvec2(a & 63u, b & 63u);
  return uvec2((c & 15u) | ((a >> 6) << 4), (c >> 4) | ((b >> 6) << 4));
}

// Q4_K: (scale, scale, min, min) of sub-blocks 2j and 2j + 1 (j = 0..3) as floats, branch-free: both
// lie in the same word half (byte 2j & 3 and the next), so one shift per header word and one select
// give both pairs packed as bytes; float(byte) comes from the same 2^23 trick as bs_q4_lo.
vec4 q4k_scales_pair(uvec3 s, uint j) {
  uint sh = (j & 1u) * 16u;
  uint a = s.x >> sh, b = s.y >> sh, c = s.z >> sh;
  bool high = j >= 2u;  // sub-blocks 4-7: low 4 bits from c, top 2 from the top of a (scale) or b (min)
  uint sc = high ? (c & 0x0F0Fu) | ((a >> 2) & 0x3030u) : a & 0x3F3Fu;
  uint mn = high ? ((c >> 4) & 0x0F0Fu) | ((b >> 2) & 0x3030u) : b & 0x3F3Fu;
  return uintBitsToFloat((uvec4(sc, sc >> 8, mn, mn >> 8) & 0xFFu) | 0x4B000000u) - 8388608.0;
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

// MXFP4 (runtime/base/dtype.h): the e2m1 value of a 4-bit code (bit 3 the sign), and a block's E8M0 scale.
const float kE2m1[16] = float[16](0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0);
float bs_e8m0(uint e) { return exp2(float(e) - 127.0); }
