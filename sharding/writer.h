// Packs tensors into shards of a fixed raw size, compresses each with zstd (or writes it plain, as
// DOPPLER does, and wherever zstd would save too little to pay for itself), and hashes raw and stored
// bytes. A finished shard is compressed, hashed and written on a background thread while the next one
// fills, so memory stays at about two shards.
#pragma once
#include <cstdint>
#include <filesystem>
#include <future>
#include <span>
#include <vector>

#include "rdrr/manifest.h"
#include "sharding/hash.h"

namespace bs {

struct ShardWriterOptions {
  uint64_t shard_size = 64ull << 20;  // raw bytes per shard
  int zstd_level = 3;
  bool compress = true;               // false: DOPPLER-style plain shard_XXXXX.bin
  // A compressed shard costs its reader a zstd decode and a second SHA-256 pass (stored and raw bytes).
  // Quantized weights are near random: zstd saves 1-2% of a Q4_K shard, and loading it plain is 2x
  // faster. A shard whose frame saves less than this fraction of its raw size is written plain (at 0:
  // only a shard whose frame is larger than the raw bytes).
  double min_saving = 0.05;
  int threads = 0;                    // zstd worker threads; 0 = hardware_concurrency
  uint32_t align = 256;               // tensor start alignment within a shard
  HashAlgorithm hash = HashAlgorithm::sha256;  // of raw and stored bytes (the manifest's hashAlgorithm)
};

class ShardWriter {
 public:
  ShardWriter(std::filesystem::path dir, ShardWriterOptions options);
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Places a tensor of `size` bytes and returns where it will lie. A tensor that does not fit in the
  // current shard but fits in an empty one starts a new shard; a larger one spans shards from here.
  // Its bytes then follow through write(), exactly `size` of them.
  std::vector<TensorSpan> begin_tensor(uint64_t size);
  void write(std::span<const std::byte> bytes);

  // Flushes the last shard and returns every shard's record.
  std::vector<ShardInfo> finish();

 private:
  void flush();
  void collect();

  std::filesystem::path dir_;
  ShardWriterOptions opt_;
  std::vector<std::byte> buf_;  // the shard being filled
  uint64_t fill_ = 0;
  uint64_t pending_ = 0;        // bytes of the current tensor still to come
  uint64_t offset_ = 0;         // global offset of the current shard
  std::vector<ShardInfo> shards_;
  std::future<ShardInfo> in_flight_;
};

}  // namespace bs
