// Options shared by `generate`, `chat` and `bench`: sampling flags, and loading a model with its
// tokenizer for generation.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/generate/session.h"
#include "runtime/model/model.h"
#include "runtime/tokenizer/tokenizer.h"

namespace bs::cli {

// --temperature, --top-k, --top-p, --min-p, --repeat-penalty, --seed.
void add_sampling_options(CLI::App& app, generate::SamplingOptions& s);

// The sampling options plus --max-tokens, --ignore-eos, --ctx, --precision and --deterministic (generate, chat).
struct SamplingFlags {
  generate::GenerateOptions opts;
  int32_t ctx = 0;
  std::string precision = "f16";  // --precision f16|f32
  bool deterministic = false;     // --deterministic (ModelOptions::deterministic)
  void add_to(CLI::App& app);
};

struct LoadedModel {
  std::unique_ptr<gpu::Device> device;
  std::unique_ptr<model::Model> model;
  std::optional<tok::Tokenizer> tokenizer;  // absent when the model directory has none
  double load_s = 0;
  std::string quant;
};

// Opens the model (RDRR or HF dir), builds it on the GPU for generation (logits of one row, prefill
// chunks of `max_batch`), and loads its tokenizer when present.
// With the WGSL kernel set (`--kernels wgsl`, decode-path kernels only) the prompt goes through the
// decode path one token per forward (still one submit), whatever max_batch says.
// `before_load` runs on the new device before any weight is uploaded (bench measures its peak
// there); its time is not part of load_s.
// `deterministic`: ModelOptions::deterministic (`--deterministic`).
LoadedModel load_for_generation(const std::string& dir, int32_t ctx, int32_t max_batch = 256,
                                gpu::KernelSource kernels = gpu::KernelSource::glsl,
                                const std::function<void(gpu::Device&)>& before_load = {}, bool f32 = false,
                                bool deterministic = false);

// --precision VALUE: "f16" (default) or "f32" (ModelOptions::kv_f32 and f32_prefill_matmul); anything else is
// a usage error naming the value.
bool parse_precision(const std::string& v);
// Adds --precision to a command (generate, chat, bench, logits).
void add_precision_option(CLI::App& app, std::string& v);
// Adds --deterministic to a command (generate, chat, bench, serve).
void add_deterministic_flag(CLI::App& app, bool& v);

}  // namespace bs::cli
