// Integer dot products for the Q4_K decode kernels (matvec_q4k_i8, decode_persistent_i8; issue 15).
//
// Why: the float decode (dequant.glsl bs_q4_lo/hi) costs an integer op and two float ops per weight, and
// on the H100 the Q4_K matvec is bound by instruction issue (2.1 TB/s against Q8_0's 2.75). With x
// quantized to int8, four nibbles meet four x values in one packed dot product (OpSDotAccSat: IDP4A on
// NVIDIA), so a weight costs about a quarter of a mask and half a dot product.
//
// Debian 12's glslang lacks GL_EXT_integer_dot_product; GL_EXT_spirv_intrinsics emits the instruction
// (capabilities DotProductInput4x8BitPacked = 6018, DotProduct = 6019; format 0 = 4x8 bit packed).
// Only kernels whose names end in _i8 include this file: KernelCache offers them where
// Device::has_int_dot (shaderIntegerDotProduct enabled).
//
// x in two levels, per 16 values (a lane's half of a Q4_K part, so no lane needs another's values):
//   d = amax / 127, q1 = round(x / d), q2 = round((x - q1 d) * 254 / d), |q2| <= 127, so
//   x = (d / 254) (254 q1 + q2) + e with |e| <= d / 508 = amax / 64516:
// ~2^-16 of the half's largest value, far below the f16 rounding (2^-11) of the KV cache and activations
// the parity tests already see. (254 rather than 128 as the second level's step: the remainder's range
// |x - q1 d| <= d / 2 then fills the int8 range, which halves the error for free.) A dot product with 16
// nibble codes is then 254 sum(c q1) + sum(c q2), exact in int32 and below 2^23 (|sum(c q1)| <= 16 x 15 x
// 127 = 30480), so its float conversion is exact too: the only roundings are x's quantization and the
// f32 accumulation. The min term uses the sum of the quantized values (not of x): a Q4_K weight is
// d sc c - dmin m, and with x's own sum the error would be sum(d sc c e) rather than sum(w e), up to
// twice as large where the min offsets the codes (and unbounded by |w|).
// Q8X_QUANTIZE_ONLY (quantize_x_q8, which runs everywhere): the quantizer and layout without the instruction.

// Two-level quantization of 16 values v[0..3]: q1 and q2 as 16 signed bytes each (byte i of word w =
// value 4w + i), and (d / 254, the sum of the quantized values (d / 254) (254 q1 + q2)).
void q8x_quantize(vec4 v0, vec4 v1, vec4 v2, vec4 v3, out uvec4 q1, out uvec4 q2, out vec2 ds) {
  vec4 a = max(max(abs(v0), abs(v1)), max(abs(v2), abs(v3)));
  float amax = max(max(a.x, a.y), max(a.z, a.w));
  float inv = amax > 0.0 ? 127.0 / amax : 0.0, d = amax / 127.0;
  vec4 v[4] = vec4[4](v0, v1, v2, v3), n1 = vec4(0.0), n2 = vec4(0.0);
  for (uint w = 0u; w < 4u; ++w) {
    vec4 r1 = clamp(round(v[w] * inv), -127.0, 127.0);
    vec4 r2 = clamp(round(fma(-r1, vec4(d), v[w]) * (254.0 * inv)), -127.0, 127.0);
    // packSnorm4x8 rounds c * 127: whole numbers / 127 come back exactly.
    q1[w] = packSnorm4x8(r1 * (1.0 / 127.0));
    q2[w] = packSnorm4x8(r2 * (1.0 / 127.0));
    n1 += r1, n2 += r2;
  }
  // Whole numbers below 2^20: exact.
  float step = d / 254.0;
  ds = vec2(step, step * (254.0 * dot(n1, vec4(1.0)) + dot(n2, vec4(1.0))));
}

#ifndef Q8X_QUANTIZE_ONLY
#extension GL_EXT_spirv_intrinsics : require
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6018, 6019], id = 4453)
int bs_sdot4x8_acc(int a, int b, int acc, spirv_literal int fmt);
// OpSUDotAccSat: a's bytes signed, b's unsigned.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6018, 6019], id = 4455)
int bs_sudot4x8_acc(int a, int b, int acc, spirv_literal int fmt);

// The dot product of the 16 signed bytes of a with those of b.
int q8x_sdot16(uvec4 a, uvec4 b) {
  ivec4 ai = ivec4(a), bi = ivec4(b);
  int s = bs_sdot4x8_acc(ai.x, bi.x, 0, 0);
  s = bs_sdot4x8_acc(ai.y, bi.y, s, 0);
  s = bs_sdot4x8_acc(ai.z, bi.z, s, 0);
  return bs_sdot4x8_acc(ai.w, bi.w, s, 0);
}

// 254 sum(c q1) + sum(c q2) for the 16 codes c (bytes 0..15, each 0..15) of the words of c.
int q8x_dot16(uvec4 c, uvec4 q1, uvec4 q2) {
#ifdef Q8X_ONE_LEVEL  // benchmarks only (matvec_q4k_i8_1level): the speed of a single int8 level
  return q8x_sdot16(c, q1) * 254;
#else
  return q8x_sdot16(c, q1) * 254 + q8x_sdot16(c, q2);
#endif
}

// The Q4_K part's two halves: low nibbles (sub-block 2j) and high nibbles (sub-block 2j + 1) of qs words q.
// x's step d / 254 is multiplied by kQ8xHiStep for the high half's dot product.
uvec4 q4_nib_lo(uvec4 q) { return q & 0x0F0F0F0Fu; }
#ifdef Q8X_MIXED
// *_i8mx: the high nibbles where they lie (codes x 16 as unsigned bytes, 0..240) meet x in mixed-signedness
// dot products: one AND per word instead of a shift and an AND. The result is 16 x the codes' (< 2^27, no
// overflow); its float conversion rounds (2^-24 relative, far below x's quantization) and the 16 comes
// out of the step exactly.
const float kQ8xHiStep = 1.0 / 16.0;
uvec4 q4_nib_hi(uvec4 q) { return q & 0xF0F0F0F0u; }
// The dot product of the 16 signed bytes of a with the 16 unsigned bytes of u.
int q8x_sudot16(uvec4 a, uvec4 u) {
  ivec4 ai = ivec4(a), ui = ivec4(u);
  int s = bs_sudot4x8_acc(ai.x, ui.x, 0, 0);
  s = bs_sudot4x8_acc(ai.y, ui.y, s, 0);
  s = bs_sudot4x8_acc(ai.z, ui.z, s, 0);
  return bs_sudot4x8_acc(ai.w, ui.w, s, 0);
}
int q8x_dot16_hi(uvec4 c, uvec4 q1, uvec4 q2) { return q8x_sudot16(q1, c) * 254 + q8x_sudot16(q2, c); }
#else
const float kQ8xHiStep = 1.0;
uvec4 q4_nib_hi(uvec4 q) { return (q >> 4u) & 0x0F0F0F0Fu; }
int q8x_dot16_hi(uvec4 c, uvec4 q1, uvec4 q2) { return q8x_dot16(c, q1, q2); }
#endif
#endif

// Quantized x in memory (matvec_q4k_i8's binding 1, written by quantize_x_q8): per 256 values (one Q4_K
// block of columns) 40 uvec4s. The block's 16 halves h = 64j + 32i + 16e (in values; j the sub-block pair,
// i low / high nibbles, e which 16 of the sub-block) sit in slot s = 2j + e + 8i, so the part t = 2j + e
// reads slots t and t + 8 and consecutive lanes read consecutive slots: q1 at uvec4 2s, q2 at 2s + 1, and
// (d / 254, sum) as float bits at uvec4 32 + s / 2, components 2 (s & 1) and 2 (s & 1) + 1.
const uint kQ8xBlockWords = 40u;
// First value (in the block) of slot s.
uint q8x_slot_first(uint s) { return 64u * ((s & 7u) >> 1) + 32u * (s >> 3) + 16u * (s & 1u); }
// First value (in the row) of slot g, counting slots across the row's blocks (16 a block).
uint q8x_row_first(uint g) { return (g / 16u) * 256u + q8x_slot_first(g % 16u); }
// Stores slot s's q1, q2 and ds (q8x_quantize) into the uvec4 array ARR, whose block starts at uvec4 BASE (a macro:
// GLSL functions take no buffers; quantize_x_q8, rms_norm_q8x and decode_persistent's head_norm_q8x write it).
#define Q8X_STORE(ARR, BASE, s, q1, q2, ds)                                     \
  {                                                                             \
    uint q8x_at_ = (BASE) + 32u + (s) / 2u, q8x_c_ = 2u * ((s) & 1u);           \
    ARR[(BASE) + 2u * (s)] = (q1);                                              \
    ARR[(BASE) + 2u * (s) + 1u] = (q2);                                         \
    ARR[q8x_at_][q8x_c_] = floatBitsToUint((ds).x);                             \
    ARR[q8x_at_][q8x_c_ + 1u] = floatBitsToUint((ds).y);                        \
  }
