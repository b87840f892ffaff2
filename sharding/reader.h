// Loading an RDRR model's tensors: every shard is read, checked against the manifest (size and hash of
// the stored file, zstd frame size, size and hash of the raw bytes; the hash is the manifest's
// hashAlgorithm, SHA-256 or BLAKE3, where "blake3" also admits DOPPLER's variant) and decompressed on
// worker threads, while the calling thread receives the tensors of earlier shards. Loading is always
// verified; nothing reaches the sink from a shard that failed a check.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "rdrr/manifest.h"
#include "sharding/hash.h"

namespace bs {

// Where load_tensors' calling thread spent its time: waiting for the workers' shards (reading, hash checks, zstd), or
// in the sink (the model's upload). Whichever dominates bounds the load.
struct LoadStats {
  size_t shards = 0;
  uint64_t raw_bytes = 0;
  double seconds = 0, shard_wait_s = 0, sink_s = 0;
};

struct LoadOptions {
  int threads = 0;  // 0 = hardware_concurrency
  std::function<void(uint64_t done, uint64_t total)> progress;  // raw bytes, on the calling thread
  // The shard hash check to use, for the manifest's hashAlgorithm; it tells afterwards which BLAKE3
  // the hashes matched, and carries that knowledge from one call to the next. Null: a fresh one.
  ShardHashCheck* hash_check = nullptr;
  // Tensors in several spans that in_parts(t) accepts (asked once a tensor, at its first span to arrive) are not
  // assembled: part_sink(t, at, bytes) gets each span, at its offset in the tensor, as its shard is delivered.
  std::function<bool(const TensorEntry&)> in_parts;
  std::function<void(const TensorEntry&, uint64_t at, std::span<const std::byte>)> part_sink;
  LoadStats* stats = nullptr;  // filled at the end where given (BLUESHIFT_LOAD_STATS=1 also prints them)
};

// Verifies (hashes of stored and raw bytes) and decompresses shards in parallel on a thread pool,
// and calls sink(tensor, bytes) on the CALLING thread for every tensor, in manifest order of shards
// (by offset within a shard), while later shards are still being verified/decompressed. At most
// `threads` shards are in flight (plus the one being delivered), so host memory stays bounded by a few
// shards whatever the model size; a tensor in several spans (in any shard order) is assembled in one
// buffer of its size and delivered with the shard holding its last span (or goes in spans to options.part_sink).
// Any mismatch throws bs::Error(ErrorKind::integrity) naming the shard. The bytes passed to the sink
// are valid only during the call.
void load_tensors(const Manifest& manifest, const std::filesystem::path& dir, const LoadOptions& options,
                  const std::function<void(const TensorEntry&, std::span<const std::byte>)>& sink);

// Reads shard `s` of manifest `m` (which names the hash) in `dir` and returns its verified raw bytes;
// throws bs::Error(integrity) naming the file, the check and expected vs actual.
std::vector<std::byte> read_verified_shard(const Manifest& m, const ShardInfo& s, const std::filesystem::path& dir);

// What `blueshift verify` reports for one bad shard.
struct ShardProblem {
  uint32_t index = 0;
  std::string filename;
  std::string check;      // missing | size | hash | storedHash | zstd | rawSize
  std::string expected;
  std::string actual;
  std::string message;    // one line naming the file, the check, expected vs actual
};

// Checks every shard (all of them, in parallel, collecting every problem rather than stopping at the
// first). With `decompress`, compressed shards are also decoded and their raw size and hash checked.
std::vector<ShardProblem> verify_shards(const Manifest& manifest, const std::filesystem::path& dir,
                                        const LoadOptions& options, bool decompress = true);

}  // namespace bs
