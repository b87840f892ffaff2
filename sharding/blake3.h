// BLAKE3 (the default 32-byte hash mode), written from the BLAKE3 specification and checked against
// its official test vectors (tests/rdrr/test_blake3.cpp). DOPPLER's newer manifests hash shards with
// it; no Debian package provides it for C or C++.
//
// DOPPLER's "blake3" (its src/storage/blake3.js, in doppler-gpu up to at least 0.5.1) is not BLAKE3: its
// compression function starts state words 12..15 as IV[4..7] XOR (counter_lo, counter_hi, block_len,
// flags) instead of (counter_lo, counter_hi, block_len, flags), and its root output is the first 8 state
// words after the rounds, without the feed-forward XOR with words 8..15 (chaining values do XOR). Its
// manifests still say "blake3", so the reader accepts either (sharding/hash.h); blueshift writes spec.
// Both are the same code with a variant parameter (tests/rdrr/test_blake3.cpp has vectors of each).
//
// Speed: the chunks of a message are independent, so whole chunks are compressed 4, 8 or 16 at a
// time (one chunk per SIMD lane: SSE4.1, AVX2, AVX-512 kernels chosen at run time, a portable scalar
// one everywhere), the parent levels of the tree likewise, and a large input can be cut across threads.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace bs {

using Blake3Digest = std::array<uint8_t, 32>;

// spec: BLAKE3 as specified. doppler: DOPPLER's departure from it (above).
enum class Blake3Variant : uint8_t { spec, doppler };

// The hash of `data`. threads > 1 spreads the chunks of inputs of a few MiB or more over that many
// threads (the result does not depend on it).
Blake3Digest blake3(std::span<const std::byte> data, int threads = 1, Blake3Variant v = Blake3Variant::spec);
// DOPPLER's variant: blake3(data, threads, Blake3Variant::doppler).
Blake3Digest blake3_doppler(std::span<const std::byte> data, int threads = 1);

// Incremental hashing: update() with pieces of any size, then finalize(); equals blake3(all pieces).
class Blake3Hasher {
 public:
  explicit Blake3Hasher(Blake3Variant v = Blake3Variant::spec);
  void update(std::span<const std::byte> data);
  Blake3Digest finalize() const;

 private:
  void push_chunk_cv(const uint32_t cv[8]);

  std::array<uint32_t, 8> chunk_cv_;            // chaining value of the chunk in progress
  std::array<uint8_t, 64> block_{};             // its unfinished block
  uint32_t block_len_ = 0;                      // bytes in block_
  uint32_t blocks_done_ = 0;                    // compressed blocks of the chunk in progress
  uint64_t chunk_counter_ = 0;                  // index of the chunk in progress
  std::vector<std::array<uint32_t, 8>> stack_;  // chaining values of complete subtrees, largest first
  Blake3Variant variant_;
};

// The SIMD kernels, for tests and benchmarks: the fastest the CPU supports is used unless one is
// forced (process-wide; not for use while other threads hash).
enum class Blake3Kernel : uint8_t { portable, sse41, avx2, avx512 };
std::vector<Blake3Kernel> blake3_kernels_available();
Blake3Kernel blake3_kernel();
void blake3_force_kernel(Blake3Kernel k);  // must be one of blake3_kernels_available()
void blake3_reset_kernel();                // back to the best available
std::string_view blake3_kernel_name(Blake3Kernel k);

}  // namespace bs
