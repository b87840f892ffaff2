// Sixteen consecutive weights of one row at a time, decoded to packed f16, for the tensor-core matmuls
// (matmul_cm.comp, matmul_rows_cm.comp). The includer defines one of W_F16, W_Q8_0, W_Q4K, W_Q6K; this
// file declares binding 0 accordingly (with W_UP also binding 4, a second matrix of the same dtype and
// shape: the gated FFN's up rows) and
//   WChunk w_fetch(row, k, e)   the raw words of W[row, e .. e + 15] (e % 16 == 0) for a matrix with
//                               rows of k elements: global loads only, so they can be issued a k step
//                               ahead and their latency hidden behind the multiply-adds;
//   WChunk w_fetch(up, row, k, e)  the same from binding 4 when `up` (a constant at every call, so the
//                               branch folds away);
//   uvec4[2] w_decode(c)        those 16 weights as f16 pairs, in element order;
//   WPair w_fetch_pair(up, row, k, e), uvec4[4] w_decode_pair(p)  (W_HAS_PAIRS: Q4_K, Q6_K) weights e .. e + 15
//                               and e + 32 .. e + 47 for e % 64 < 32, in fewer loads than two chunks;
//   uint w_touch(row, k, e)     F16 only (W_HAS_TOUCH): one word of the 32 bytes w_fetch(row, k, e) reads, a load
//                               that brings them into L1 a k step before w_fetch needs them (matmul_cm's
//                               CM_PREFETCH; for the quantized dtypes, with more loads per chunk, such touches lost
//                               on the H100: 2026-11-25-h100-session8.md, R3-R4); w_touch(up, row, k, e) from
//                               binding 4 when `up`.
// A chunk never straddles a block: 16 divides every block size, and a Q4_K / Q6_K scale covers at
// least 16 weights.
//
// Decoding stays in f16 (w_affine): each code is OR-ed into the mantissa of 1024.0, two to a word, and
// one packed subtract and one packed fma give scale * (code - bias) + shift. The first version converted
// every code to f32 and every pair back to f16, both at a quarter of the FMA rate on NVIDIA, which the
// prefill GEMM pays once per weight and token tile and serve's rows kernel once per weight and step.
// Q8_0 is exact then rounded once, as before (d is an f16); Q4_K's d * scale and dmin * min and Q6_K's
// d * scale are rounded to f16 first, so a weight carries up to ~1.5 f16 roundings of its terms instead
// of 0.5 (far inside the tests' 2u bound, which random roundings meet by three orders of magnitude).
//
// Q8_0 blocks (34 B) are only 2-byte aligned, so their bytes are read as words and joined with bs_funnel;
// the word past a chunk is read only when the chunk starts mid-word, and is clamped to the array (it then
// lies inside the same block).
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "dequant.glsl"

// 16 weights from four words of byte codes (word i: weights 4i .. 4i + 3, one per byte, each below 256):
// scale * (code - bias) + shift as f16 pairs in weight order. 1024 + code is exact in f16 below 1024, so
// subtracting 1024 + bias is exact; the fma rounds once.
uint w_affine(uint pair, float16_t minus, float16_t scale, float16_t shift) {
  return packFloat2x16(fma(unpackFloat2x16(pair) - f16vec2(minus), f16vec2(scale), f16vec2(shift)));
}
uvec4[2] w_from_bytes(uvec4 codes, uint bias, float16_t scale, float16_t shift) {
  const float16_t minus = float16_t(1024u + bias);
  uint h[8];
  [[unroll]] for (uint i = 0; i < 4u; ++i) {
    uint c = codes[i];  // bytes 0, 1 to the halves of one word, bytes 2, 3 to the next
    h[2u * i] = w_affine((c & 0xFFu) | ((c << 8) & 0xFF0000u) | 0x64006400u, minus, scale, shift);
    h[2u * i + 1u] = w_affine(((c >> 16) & 0xFFu) | ((c >> 8) & 0xFF0000u) | 0x64006400u, minus, scale, shift);
  }
  return uvec4[2](uvec4(h[0], h[1], h[2], h[3]), uvec4(h[4], h[5], h[6], h[7]));
}

#if defined(W_F16) || defined(W_Q4K) || defined(W_Q6K)
layout(std430, binding = 0) readonly buffer Wt { uvec4 wt[]; };
#ifdef W_UP
layout(std430, binding = 4) readonly buffer Wu { uvec4 wu[]; };
#endif
uvec4 w_at(bool up, uint i) {
#ifdef W_UP
  if (up) return wu[i];
#endif
  return wt[i];
}
#endif

#if defined(W_F16)
struct WChunk { uvec4 lo, hi; };
WChunk w_fetch(bool up, uint row, uint k, uint e) {
  uint i = (row * k + e) >> 3;  // k % 32 == 0 (the host's condition), so rows are 16-byte aligned
  return WChunk(w_at(up, i), w_at(up, i + 1u));
}
uvec4[2] w_decode(WChunk c) { return uvec4[2](c.lo, c.hi); }
#define W_HAS_TOUCH
uint w_touch(uint row, uint k, uint e) { return w_at(false, (row * k + e) >> 3).x; }  // one 32-byte sector
uint w_touch(bool up, uint row, uint k, uint e) { return w_at(up, (row * k + e) >> 3).x; }

#elif defined(W_Q4K)
// 144-byte blocks {d, dmin (f16); scales[12]; qs[128]} are 16-byte aligned: one uvec4 holds the
// header, and the 16 qs bytes of a chunk hold its codes in the low (even sub-block) or high (odd
// sub-block) nibbles (GGML: sub-blocks 2j and 2j+1 share qs bytes 32j .. 32j + 31). Rows of k not a
// multiple of 256 are padded to whole blocks (DOPPLER's "row" layout); chunks past k are never fetched
// (k % BK == 0).
struct WChunk { uvec4 hdr, qs; uint sub; };
WChunk w_fetch(bool up, uint row, uint k, uint e) {
  uint base = (row * ((k + 255u) >> 8) + (e >> 8)) * 9u, el = e & 255u, sub = el >> 5;
  uint byte = 32u * (sub >> 1) + (el & 16u);
  return WChunk(w_at(up, base), w_at(up, base + 1u + (byte >> 4)), sub);
}
uvec4[2] w_decode(WChunk c) {
  uvec2 sm = q4k_scale_min(c.hdr.yzw, c.sub);
  vec2 dm = unpackHalf2x16(c.hdr.x);
  uvec4 q = ((c.sub & 1u) != 0u ? c.qs >> 4 : c.qs) & 0x0F0F0F0Fu;
  return w_from_bytes(q, 0u, float16_t(dm.x * float(sm.x)), -float16_t(dm.y * float(sm.y)));
}
// Both chunks whose codes one qs uvec4 holds, from a chunk fetched at e with an even sub-block (e % 64 < 32):
// weights e .. e + 15 (low nibbles) and e + 32 .. e + 47 (high nibbles, the next sub-block), so a kernel whose k
// steps cover whole 64-weight groups pays one header and one code load per 32 weights instead of per 16.
#define W_HAS_PAIRS
#define WPair WChunk
WChunk w_fetch_pair(bool up, uint row, uint k, uint e) { return w_fetch(up, row, k, e); }
uvec4[4] w_decode_pair(WChunk c) {
  vec2 dm = unpackHalf2x16(c.hdr.x);
  uvec2 a = q4k_scale_min(c.hdr.yzw, c.sub), b = q4k_scale_min(c.hdr.yzw, c.sub + 1u);
  uvec4 lo[2] = w_from_bytes(c.qs & 0x0F0F0F0Fu, 0u, float16_t(dm.x * float(a.x)), -float16_t(dm.y * float(a.y)));
  uvec4 hi[2] = w_from_bytes((c.qs >> 4) & 0x0F0F0F0Fu, 0u, float16_t(dm.x * float(b.x)), -float16_t(dm.y * float(b.y)));
  return uvec4[4](lo[0], lo[1], hi[0], hi[1]);
}

#elif defined(W_Q6K)
// 224-byte blocks on the GPU: GGML's 210 {ql[128], qh[64], scales[16] (i8), d (f16)}, then 14 zero bytes
// (runtime/base/dtype.h, kQ6KGpuBlockBytes), 14 uvec4s: ql is uvec4s 0-7, qh 8-11, scales 12, d the low half of
// 13's first word. Element el of a block: half h = el/128, quarter qq = (el/32) % 4, l = el % 32; its low 4 bits
// are nibble qq/2 of ql[64h + 32(qq%2) + l], its high 2 bits are bits 2qq of qh[32h + l], its scale is
// scales[el/16] (GGML's interleaving). A chunk (l = 0 or 16) is one uvec4 of ql, one of qh, a word of scales and
// d's word: 4 loads, against 12 words joined by funnel shifts in GGML's 2-byte aligned blocks.
struct WChunk { uvec4 ql, qh; uint sw, dw, el; };
uint q6k_block(uint row, uint k, uint e) { return (row * (k >> 8) + (e >> 8)) * 14u; }  // its first uvec4
uint q6k_ql(uint block, uint el) { return block + 4u * (el >> 7) + 2u * ((el >> 5) & 1u) + ((el >> 4) & 1u); }
WChunk w_fetch(bool up, uint row, uint k, uint e) {
  uint base = q6k_block(row, k, e), el = e & 255u;
  return WChunk(w_at(up, q6k_ql(base, el)), w_at(up, base + 8u + 2u * (el >> 7) + ((el >> 4) & 1u)),
                w_at(up, base + 12u)[el >> 6], w_at(up, base + 13u).x, el);
}
uvec4[2] w_from_q6k(uvec4 ql, uvec4 qh, uint sw, uint dw, uint el) {
  uint qq = (el >> 5) & 3u;
  uvec4 lo = (ql >> (4u * (qq >> 1))) & 0x0F0F0F0Fu, hi = ((qh >> (2u * qq)) & 0x03030303u) << 4;
  float scale = unpackHalf2x16(dw).x * float(int(sw << (24u - 8u * ((el >> 4) & 3u))) >> 24);
  return w_from_bytes(lo | hi, 32u, float16_t(scale), float16_t(0.0));
}
uvec4[2] w_decode(WChunk c) { return w_from_q6k(c.ql, c.qh, c.sw, c.dw, c.el); }
// Chunk pairs, as Q4_K's (matmul_cm's CM_PAIRS): weights e .. e + 15 and e + 32 .. e + 47 for e % 64 < 32, which
// share their qh uvec4, scales word and d (the second's ql is 2 uvec4s on): 5 loads per 32 weights.
#define W_HAS_PAIRS
struct WPair { uvec4 ql, ql2, qh; uint sw, dw, el; };
WPair w_fetch_pair(bool up, uint row, uint k, uint e) {
  WChunk c = w_fetch(up, row, k, e);
  return WPair(c.ql, w_at(up, q6k_ql(q6k_block(row, k, e), c.el + 32u)), c.qh, c.sw, c.dw, c.el);
}
uvec4[4] w_decode_pair(WPair c) {
  uvec4 lo[2] = w_from_q6k(c.ql, c.qh, c.sw, c.dw, c.el), hi[2] = w_from_q6k(c.ql2, c.qh, c.sw, c.dw, c.el + 32u);
  return uvec4[4](lo[0], lo[1], hi[0], hi[1]);
}

#else
layout(std430, binding = 0) readonly buffer Wt { uint wt[]; };
#ifdef W_UP
layout(std430, binding = 4) readonly buffer Wu { uint wu[]; };
#endif
uint w_at(bool up, uint i) {
#ifdef W_UP
  if (up) return wu[i];
#endif
  return wt[i];
}
uint w_len(bool up) {
#ifdef W_UP
  if (up) return uint(wu.length());
#endif
  return uint(wt.length());
}
// The 16 bytes at 2-byte aligned byte offset o, as 5 words (the fifth read only when o is mid-word).
uint[5] w_words16(bool up, uint o) {
  uint i = o >> 2;
  return uint[5](w_at(up, i), w_at(up, i + 1u), w_at(up, i + 2u), w_at(up, i + 3u),
                 (o & 2u) != 0u ? w_at(up, min(i + 4u, w_len(up) - 1u)) : 0u);
}
uvec4 w_join(uint[5] w, uint o) {
  uint sh = (o & 2u) * 8u;
  return uvec4(bs_funnel(w[0], w[1], sh), bs_funnel(w[1], w[2], sh), bs_funnel(w[2], w[3], sh),
               bs_funnel(w[3], w[4], sh));
}

#if defined(W_Q8_0)
// 34-byte blocks {d (f16); qs[32] (i8)}: a chunk is one half of a block.
struct WChunk { uint[5] qs; uint dw; uint bo; };
WChunk w_fetch(bool up, uint row, uint k, uint e) {
  uint bo = (row * (k >> 5) + (e >> 5)) * 34u;
  return WChunk(w_words16(up, bo + 2u + (e & 16u)), w_at(up, bo >> 2), bo);
}
uvec4[2] w_decode(WChunk c) {
  float16_t d = unpackFloat2x16(c.dw >> ((c.bo & 2u) * 8u)).x;
  uvec4 q = w_join(c.qs, c.bo + 2u);  // the chunk's offset, bo + 2 (+ 16), has this parity
  return w_from_bytes(q ^ 0x80808080u, 128u, d, float16_t(0.0));  // signed bytes biased to unsigned
}

#endif
#endif

WChunk w_fetch(uint row, uint k, uint e) { return w_fetch(false, row, k, e); }
