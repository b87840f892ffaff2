#include "cli/generate_common.h"

#include <chrono>
#include <filesystem>

namespace bs::cli {

void add_sampling_options(CLI::App& app, generate::SamplingOptions& s) {
  app.add_option("--temperature", s.temperature, "0 = greedy (default)");
  app.add_option("--top-k", s.top_k, "keep the k most likely tokens (0 = off)");
  app.add_option("--top-p", s.top_p, "nucleus sampling mass (1 = off)");
  app.add_option("--min-p", s.min_p, "drop tokens below min-p x the top probability (0 = off)");
  app.add_option("--repeat-penalty", s.repeat_penalty, "HF-style repetition penalty (1 = off)");
  app.add_option("--seed", s.seed, "RNG seed (Philox, on the GPU)");
}

void SamplingFlags::add_to(CLI::App& app) {
  app.add_option("--max-tokens", opts.max_tokens, "tokens to generate (default 128)");
  add_sampling_options(app, opts.sampling);
  app.add_flag("--ignore-eos", opts.ignore_eos, "keep generating past end-of-sequence tokens");
  app.add_option("--ctx", ctx, "context (KV-cache) length; default min(model max, 4096)");
  add_precision_option(app, precision);
  add_deterministic_flag(app, deterministic);
}

bool parse_precision(const std::string& v) {
  if (v != "f16" && v != "f32") fail_kind(ErrorKind::usage, "--precision: expected f16 or f32, got \"{}\"", v);
  return v == "f32";
}

void add_precision_option(CLI::App& app, std::string& v) {
  app.add_option("--precision", v,
                 "f16 (default): f16 KV cache, f16 inputs to the tensor-core prefill matmuls; f32: f32 KV cache and "
                 "f32 prefill matmuls (twice the KV memory, slower prefill) for models whose attention amplifies "
                 "rounding, e.g. Gemma 4, and for parity checks against float32 references");
}

void add_deterministic_flag(CLI::App& app, bool& v) {
  app.add_flag("--deterministic", v,
               "decode bitwise the same from run to run: without the sums a GPU's float atomics add in any order (the "
               "persistent kernel's folded o projection), for 5-6% of q4_k_m decode speed (H200); by default two greedy "
               "runs may part after tens of tokens where logits nearly tie");
}

LoadedModel load_for_generation(const std::string& dir, int32_t ctx, int32_t max_batch, gpu::KernelSource kernels,
                                const std::function<void(gpu::Device&)>& before_load, bool f32, bool deterministic) {
  LoadedModel lm;
  auto t0 = std::chrono::steady_clock::now();
  auto source = model::open_model(dir);
  lm.quant = source.quant;
  lm.device = std::make_unique<gpu::Device>();
  if (before_load) {
    auto b0 = std::chrono::steady_clock::now();
    before_load(*lm.device);
    t0 += std::chrono::steady_clock::now() - b0;  // the hook's time is not loading
  }
  model::ModelOptions mo;
  mo.max_ctx = ctx;
  mo.max_batch = kernels == gpu::KernelSource::wgsl ? 1 : max_batch;
  mo.logits_rows = 1;
  mo.kernels = kernels;
  mo.kv_f32 = mo.f32_prefill_matmul = f32;
  mo.deterministic = deterministic;
  lm.model = std::make_unique<model::Model>(*lm.device, source, mo);
  lm.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json")) lm.tokenizer = tok::Tokenizer::from_dir(dir);
  return lm;
}

}  // namespace bs::cli
