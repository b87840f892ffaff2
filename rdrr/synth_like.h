// `blueshift synth --like MANIFEST.json OUT_DIR`: an RDRR bundle with random weights at the exact shape
// of a real DOPPLER manifest, so any model of DOPPLER's zoo can be loaded, verified, run and benchmarked
// without its weights.
//
// The output manifest is the input's, key for key, with only the hashes recomputed: each shard's `hash`
// (and its `blake3` duplicate, where present) with the manifest's hashAlgorithm, and the per-tensor
// `integrityExtensions.blockMerkle` roots. Shards keep their names and sizes (plain shard_XXXXX.bin, as
// DOPPLER writes them); bytes no tensor covers are zero. Values are valid for each dtype and layout
// (see rdrr/synth_like_gen.h); a dtype or layout it cannot produce fails naming the tensor.
//
// Deterministic from the seed and independent of the thread count; memory is one shard per thread.
// Written into a temporary directory beside OUT_DIR and renamed into place at the end.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace bs {

struct SynthLikeOptions {
  uint64_t seed = 0;
  int threads = 0;     // 0 = hardware_concurrency
  bool force = false;  // replace an existing OUT_DIR
  bool keep_partial = false;  // report stale .OUT_DIR.partial-* siblings instead of removing them
  bool dry_run = false;  // check the manifest and return what would be written; write nothing
  std::function<void(uint64_t done, uint64_t total)> progress;  // bytes of shards written
};

struct SynthLikeResult {
  uint64_t shards = 0, tensors = 0, bytes = 0;  // bytes: sum of the shard sizes
  std::string hash_algorithm;                   // "sha256" | "blake3"
  uint64_t merkle_roots = 0;                    // blockMerkle roots recomputed
  bool tokenizer = false;                       // tokenizer.json copied from beside the manifest
  double seconds = 0;
};

SynthLikeResult synth_like(const std::filesystem::path& manifest, const std::filesystem::path& out_dir,
                           const SynthLikeOptions& options);

}  // namespace bs
