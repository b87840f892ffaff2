// The BLAKE3 compression of N inputs at once, one per SIMD lane, with GCC vector extensions. Included
// only by the per-ISA translation units (blake3_sse41.cpp, ...), each compiled for its ISA: the
// anonymous namespace gives every unit its own copy, so no copy built for AVX-512 can be picked by the
// linker for a CPU without it.
#pragma once
#include <utility>

#include "sharding/blake3_impl.h"

namespace bs::blake3_detail {
namespace {

// GCC takes no template-dependent vector_size, so the widths are spelled out here.
typedef uint32_t U32x4 __attribute__((vector_size(16)));
typedef uint8_t U8x16 __attribute__((vector_size(16)));
typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef uint8_t U8x32 __attribute__((vector_size(32)));
typedef uint32_t U32x16 __attribute__((vector_size(64)));
typedef uint8_t U8x64 __attribute__((vector_size(64)));

// V: N lanes of 32-bit words; VB: the same bytes as a byte vector (for shuffles).
template <class V, class VB, bool kByteShuffleRotate>
struct Lanes {
  static constexpr int N = sizeof(V) / 4;

  // Rotations by 16 and 8 are byte shuffles (pshufb) where that beats two shifts and an or; AVX-512
  // has a rotate instruction, which the shift form compiles to. The masks must be constants for GCC
  // to see an in-lane shuffle.
  template <int R, size_t... I>
  static constexpr VB rotate_mask(std::index_sequence<I...>) {
    return VB{uint8_t((I & ~size_t(3)) | ((I + R / 8) & 3))...};
  }
  template <int R>
  static V rotr(V x) {
    if constexpr (kByteShuffleRotate && (R == 16 || R == 8)) {
      constexpr VB mask = rotate_mask<R>(std::make_index_sequence<4 * N>{});
      return (V)__builtin_shuffle((VB)x, mask);
    } else {
      return (x >> R) | (x << (32 - R));
    }
  }

  // Message loading: word j of every lane's block into vector j. Each lane's words are loaded as whole
  // vectors (rows) and an N x N transpose of 32-bit elements, log2(N) stages of two-input shuffles with
  // constant masks, turns rows into columns. Stage K pairs rows i and i+K and interleaves runs of K.
  static constexpr uint32_t transpose_index(size_t k, bool hi, size_t e) {
    size_t run = e / (2 * k) * (2 * k), pos = e % (2 * k);
    if (!hi) return uint32_t(pos < k ? run + pos : N + run + pos - k);
    return uint32_t(pos < k ? run + k + pos : N + run + pos);
  }
  template <size_t K, bool kHi, size_t... E>
  static constexpr V transpose_mask(std::index_sequence<E...>) {
    return V{transpose_index(K, kHi, E)...};
  }
  template <size_t K>
  static void transpose_stage(V* r) {
    if constexpr (K < size_t(N)) {
      constexpr V lo = transpose_mask<K, false>(std::make_index_sequence<N>{});
      constexpr V hi = transpose_mask<K, true>(std::make_index_sequence<N>{});
      for (size_t i = 0; i < size_t(N); ++i) {
        if (i & K) continue;
        V a = r[i], b = r[i + K];
        r[i] = __builtin_shuffle(a, b, lo);
        r[i + K] = __builtin_shuffle(a, b, hi);
      }
      transpose_stage<2 * K>(r);
    }
  }
  static void load_transposed(const uint8_t* const* in, size_t offset, V m[16]) {
    for (int g = 0; g < 16 / N; ++g) {  // 16 words a block: 16/N groups of N words
      V r[N];
      for (int l = 0; l < N; ++l) std::memcpy(&r[l], in[l] + offset + 4 * N * g, sizeof(V));  // little-endian
      transpose_stage<1>(r);
      for (int j = 0; j < N; ++j) m[N * g + j] = r[j];
    }
  }

  // N inputs of `blocks` blocks, exactly (the caller pads a short batch).
  // `x`: what state words 12..15 are XORed with (state_tweak), folded in here and not per block.
  static void hash(const uint8_t* const* in, size_t blocks, const uint32_t key[8], uint64_t counter,
                   bool increment, uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint32_t* out,
                   const uint32_t x[4]) {
    V h[8];
    for (int i = 0; i < 8; ++i) h[i] = V{} + key[i];
    V ctr_lo, ctr_hi;
    for (int l = 0; l < N; ++l) {
      uint64_t c = counter + (increment ? uint64_t(l) : 0);
      ctr_lo[l] = uint32_t(c) ^ x[0];
      ctr_hi[l] = uint32_t(c >> 32) ^ x[1];
    }
    const V block_len = V{} + (uint32_t(kBlockLen) ^ x[2]);
    for (size_t b = 0; b < blocks; ++b) {
      V m[16];
      load_transposed(in, b * kBlockLen, m);
      uint32_t f = (flags | (b == 0 ? flags_start : 0) | (b + 1 == blocks ? flags_end : 0)) ^ x[3];
      V v[16] = {h[0],         h[1],         h[2],         h[3],         h[4],   h[5],   h[6],      h[7],
                 V{} + kIv[0], V{} + kIv[1], V{} + kIv[2], V{} + kIv[3], ctr_lo, ctr_hi, block_len, V{} + f};
      // Unrolled, so the schedule's indices are constants and the message words can live in registers.
#pragma GCC unroll 7
      for (int r = 0; r < 7; ++r) {
        const uint8_t* s = kSchedule.w[r];
        g(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
        g(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
        g(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
        g(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
        g(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
        g(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
        g(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
        g(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
      }
      for (int i = 0; i < 8; ++i) h[i] = v[i] ^ v[i + 8];
    }
    for (int l = 0; l < N; ++l)
      for (int i = 0; i < 8; ++i) out[8 * l + i] = h[i][l];
  }

  static void g(V& a, V& b, V& c, V& d, V x, V y) {
    a += b + x;
    d = rotr<16>(d ^ a);
    c += d;
    b = rotr<12>(b ^ c);
    a += b + y;
    d = rotr<8>(d ^ a);
    c += d;
    b = rotr<7>(b ^ c);
  }
};

// Runs the N-lane kernel over `n` inputs; a short last batch repeats input 0 in its spare lanes and
// drops their results.
template <class V, class VB, bool kByteShuffleRotate>
inline void hash_many_lanes(const uint8_t* const* inputs, size_t n, size_t blocks, const uint32_t key[8],
                            uint64_t counter, bool increment, uint8_t flags, uint8_t flags_start,
                            uint8_t flags_end, uint32_t* out, Blake3Variant variant) {
  const uint32_t* x = state_tweak(variant);
  using L = Lanes<V, VB, kByteShuffleRotate>;
  constexpr size_t N = L::N;
  for (size_t i = 0; i < n; i += N) {
    size_t m = std::min<size_t>(N, n - i);
    if (m == N) {
      L::hash(inputs + i, blocks, key, counter + (increment ? i : 0), increment, flags, flags_start,
              flags_end, out + 8 * i, x);
      continue;
    }
    const uint8_t* padded[N];
    uint32_t tmp[8 * N];
    for (size_t l = 0; l < N; ++l) padded[l] = inputs[i + (l < m ? l : 0)];
    L::hash(padded, blocks, key, counter + (increment ? i : 0), increment, flags, flags_start, flags_end, tmp,
            x);
    std::memcpy(out + 8 * i, tmp, m * 8 * sizeof(uint32_t));
  }
}

}  // namespace
}  // namespace bs::blake3_detail
