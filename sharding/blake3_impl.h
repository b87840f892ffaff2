// BLAKE3 internals shared by blake3.cpp and the per-ISA kernels (blake3_x86.cpp): constants from the
// specification and the portable compression function.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "sharding/blake3.h"

namespace bs::blake3_detail {

constexpr size_t kBlockLen = 64;
constexpr size_t kChunkLen = 1024;
constexpr uint32_t kIv[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                             0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
enum : uint8_t { kChunkStart = 1, kChunkEnd = 2, kParent = 4, kRoot = 8 };

// Message word order of each of the 7 rounds: round r reads m[kSchedule[r][i]] where round 0 reads
// them in order, and each following round applies the specification's permutation once more.
struct Schedule {
  uint8_t w[7][16];
};
constexpr Schedule make_schedule() {
  constexpr uint8_t perm[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
  Schedule s{};
  for (int i = 0; i < 16; ++i) s.w[0][i] = uint8_t(i);
  for (int r = 1; r < 7; ++r)
    for (int i = 0; i < 16; ++i) s.w[r][i] = s.w[r - 1][perm[i]];
  return s;
}
inline constexpr Schedule kSchedule = make_schedule();

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint32_t rotr32(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// DOPPLER's variant XORs state words 12..15 (counter_lo, counter_hi, block_len, flags) with IV[4..7];
// the spec XORs with nothing. The kernels fold this into values they set up once per call, so the spec
// path pays nothing for it.
constexpr uint32_t kNoTweak[4] = {0, 0, 0, 0};
inline const uint32_t* state_tweak(Blake3Variant v) {
  return v == Blake3Variant::doppler ? kIv + 4 : kNoTweak;
}

// The compression function, giving the first 8 words of the output, which is both a chaining value and
// the root's 32-byte hash (DOPPLER's variant leaves out the feed-forward XOR for the root only).
inline void compress(const uint32_t cv[8], const uint8_t block[64], uint32_t block_len, uint64_t counter,
                     uint8_t flags, uint32_t out[8], Blake3Variant variant) {
  const uint32_t* x = state_tweak(variant);
  uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = load_le32(block + 4 * i);
  uint32_t v[16] = {cv[0],
                    cv[1],
                    cv[2],
                    cv[3],
                    cv[4],
                    cv[5],
                    cv[6],
                    cv[7],
                    kIv[0],
                    kIv[1],
                    kIv[2],
                    kIv[3],
                    uint32_t(counter) ^ x[0],
                    uint32_t(counter >> 32) ^ x[1],
                    block_len ^ x[2],
                    flags ^ x[3]};
  auto g = [&v](int a, int b, int c, int d, uint32_t x, uint32_t y) {
    v[a] += v[b] + x;
    v[d] = rotr32(v[d] ^ v[a], 16);
    v[c] += v[d];
    v[b] = rotr32(v[b] ^ v[c], 12);
    v[a] += v[b] + y;
    v[d] = rotr32(v[d] ^ v[a], 8);
    v[c] += v[d];
    v[b] = rotr32(v[b] ^ v[c], 7);
  };
  for (int r = 0; r < 7; ++r) {
    const uint8_t* s = kSchedule.w[r];
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  if (variant == Blake3Variant::doppler && (flags & kRoot))
    for (int i = 0; i < 8; ++i) out[i] = v[i];
  else
    for (int i = 0; i < 8; ++i) out[i] = v[i] ^ v[i + 8];
}

// Hashes `n` inputs of `blocks` whole blocks each, all with the same key, into n chaining values
// (out: n*8 words). Input i uses counter + i when `increment` (chunks), else counter (parents). The
// first block adds flags_start, the last flags_end. Never a root (the kernels always feed forward). Every
// kernel has this signature.
using HashManyFn = void (*)(const uint8_t* const* inputs, size_t n, size_t blocks, const uint32_t key[8],
                            uint64_t counter, bool increment, uint8_t flags, uint8_t flags_start,
                            uint8_t flags_end, uint32_t* out, Blake3Variant variant);

void hash_many_portable(const uint8_t* const* inputs, size_t n, size_t blocks, const uint32_t key[8],
                        uint64_t counter, bool increment, uint8_t flags, uint8_t flags_start,
                        uint8_t flags_end, uint32_t* out, Blake3Variant variant);
#if defined(__x86_64__) && defined(__GNUC__)
#define BS_BLAKE3_X86 1
void hash_many_sse41(const uint8_t* const*, size_t, size_t, const uint32_t*, uint64_t, bool, uint8_t, uint8_t,
                     uint8_t, uint32_t*, Blake3Variant);
void hash_many_avx2(const uint8_t* const*, size_t, size_t, const uint32_t*, uint64_t, bool, uint8_t, uint8_t,
                    uint8_t, uint32_t*, Blake3Variant);
void hash_many_avx512(const uint8_t* const*, size_t, size_t, const uint32_t*, uint64_t, bool, uint8_t,
                      uint8_t, uint8_t, uint32_t*, Blake3Variant);
#endif

}  // namespace bs::blake3_detail
