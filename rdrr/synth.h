// Random-weight Hugging Face checkpoints of any supported config, for tests and benchmarks: the
// project needs no downloaded weights. Deterministic from the seed (and independent of the thread
// count): every value comes from a counter-based hash of (seed, tensor, index).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>

#include "runtime/base/dtype.h"

namespace bs {

// splitmix64's finalizer: a bijection that scatters every input bit. The counter-based generator of
// synth and synth --like: value i of a stream is a pure function of (key, i), so any slice of a tensor
// can be generated on its own, by any thread.
inline uint64_t synth_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Approximately N(0, 1): the sum of four 16-bit uniforms (Irwin-Hall), centred and scaled.
inline float synth_gauss(uint64_t key, uint64_t i) {
  uint64_t h = synth_mix(key + i * 0x9e3779b97f4a7c15ull);
  float s = float(h & 0xffff) + float((h >> 16) & 0xffff) + float((h >> 32) & 0xffff) + float(h >> 48);
  return (s - 2.0f * 65535.0f) * (1.0f / (65536.0f * 0.57735027f));
}

struct SynthOptions {
  uint64_t seed = 0;
  DType dtype = DType::BF16;                   // BF16 or F16
  int threads = 0;                             // 0 = hardware_concurrency
  uint64_t max_file_bytes = 4ull << 30;        // larger checkpoints are split, with an index.json
  std::filesystem::path tokenizer;             // optional tokenizer.json to include
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// Writes OUT_DIR/{config.json, generation_config.json, model.safetensors | model-0000N-of-0000M.safetensors
// + model.safetensors.index.json} for the config in `config_path`. Matrices ~ N(0, 0.02) (0.05 below
// 512 hidden, as the shared tiny models), norm weights around 1 (around 0 for (1 + w) norms) with
// spread 0.1, biases N(0, 0.1): random enough that an offset bug changes the logits.
// Returns the bytes of tensor data written.
uint64_t synth_checkpoint(const std::filesystem::path& config_path, const std::filesystem::path& out_dir,
                          const SynthOptions& options);

}  // namespace bs
