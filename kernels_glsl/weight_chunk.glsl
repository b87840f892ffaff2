// Sixteen consecutive weights of one row at a time, decoded to packed f16, for the tensor-core matmuls
// (matmul_cm.comp, matmul_rows_cm.comp). The includer defines one of W_F16, W_Q8_0, W_Q4K, W_Q6K; this
// file declares binding 0 accordingly (with W_UP also binding 4, a second matrix of the same dtype and
// shape: the gated FFN's up rows) and
//   WChunk w_fetch(row, k, e)   the raw words of W[row, e .. e + 15] (e % 16 == 0) for a matrix with
//                               rows of k elements: global loads only, so they can be issued a k step
//                               ahead and their latency hidden behind the multiply-adds;
//   WChunk w_fetch(up, row, k, e)  the same from binding 4 when `up` (a constant at every call, so the
//                               branch folds away);
//   uvec4[2] w_decode(c)        those 16 weights as f16 pairs, in element order.
// A chunk never straddles a block: 16 divides every block size, and a Q4_K / Q6_K scale covers at
// least 16 weights. Decoding is exact (float(code), f32 products as the CPU reference), then rounded
// once to f16.
//
// Q8_0 (34 B) and Q6_K (210 B) blocks are only 2-byte aligned, so their bytes are read as words and
// joined with bs_funnel; the word past a chunk is read only when the chunk starts mid-word, and is
// clamped to the array (it then lies inside the same block).
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "dequant.glsl"

uvec4 w_pack(vec4 a, vec4 b) { return uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw)); }

#if defined(W_F16) || defined(W_Q4K)
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
  float a = dm.x * float(sm.x), b = dm.y * float(sm.y);
  uvec4 q = (c.sub & 1u) != 0u ? c.qs >> 4 : c.qs;
  vec4 v[4];
  for (uint i = 0; i < 4u; ++i) v[i] = a * bs_nib_lo_exact(q[i]) - b;
  return uvec4[2](w_pack(v[0], v[1]), w_pack(v[2], v[3]));
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
  float d = bs_half_at(c.dw, c.bo);
  uvec4 q = w_join(c.qs, c.bo + 2u);  // the chunk's offset, bo + 2 (+ 16), has this parity
  vec4 v[4];
  for (uint i = 0; i < 4u; ++i) v[i] = d * bs_i8_exact(q[i]);
  return uvec4[2](w_pack(v[0], v[1]), w_pack(v[2], v[3]));
}

#elif defined(W_Q6K)
// 210-byte blocks {ql[128], qh[64], scales[16] (i8), d (f16)}. Element el of a block: half h = el/128,
// quarter qq = (el/32) % 4, l = el % 32; its low 4 bits are nibble qq/2 of ql[64h + 32(qq%2) + l], its
// high 2 bits are bits 2qq of qh[32h + l], its scale is scales[el/16] (GGML's interleaving).
struct WChunk { uint[5] ql, qh; uint sw, dw; uint bo, el; };
WChunk w_fetch(bool up, uint row, uint k, uint e) {
  uint bo = (row * (k >> 8) + (e >> 8)) * 210u, el = e & 255u;
  uint h = el >> 7, qq = (el >> 5) & 3u, l = el & 16u;
  uint so = bo + 192u + (el >> 4), dof = bo + 208u;
  return WChunk(w_words16(up, bo + 64u * h + 32u * (qq & 1u) + l), w_words16(up, bo + 128u + 32u * h + l),
                w_at(up, so >> 2), w_at(up, dof >> 2), bo, el);
}
uvec4[2] w_decode(WChunk c) {
  uint h = c.el >> 7, qq = (c.el >> 5) & 3u, l = c.el & 16u;
  uvec4 ql = w_join(c.ql, c.bo + 64u * h + 32u * (qq & 1u) + l) >> (4u * (qq >> 1));
  uvec4 qh = w_join(c.qh, c.bo + 128u + 32u * h + l) >> (2u * qq);
  uint so = c.bo + 192u + (c.el >> 4);
  float scale = bs_half_at(c.dw, c.bo + 208u) * float(int(c.sw << (24u - 8u * (so & 3u))) >> 24);
  vec4 v[4];
  for (uint i = 0; i < 4u; ++i) {
    uvec4 code = (uvec4(ql[i]) >> uvec4(0, 8, 16, 24) & 15u) | ((uvec4(qh[i]) >> uvec4(0, 8, 16, 24) & 3u) << 4);
    v[i] = scale * (vec4(code) - 32.0);
  }
  return uvec4[2](w_pack(v[0], v[1]), w_pack(v[2], v[3]));
}
#endif
#endif

WChunk w_fetch(uint row, uint k, uint e) { return w_fetch(false, row, k, e); }
