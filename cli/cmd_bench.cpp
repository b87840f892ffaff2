// blueshift bench: prefill and decode throughput, TTFT, submits/token and bandwidth against the peak
// this GPU streams (measured at start by the built-in streaming-read kernel).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/command.h"
#include "cli/generate_common.h"
#include "kernels_glsl/params.h"

namespace {

struct Args {
  std::string model;
  int32_t prompt_tokens = 512, gen_tokens = 128, reps = 5, ctx = 0;
  bool json = false;
  bs::generate::SamplingOptions sampling;  // greedy unless set: the sampler's cost is part of a token
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5))];
}

// Streams `bytes` with the stream_read kernel; returns GB/s (median of 5).
double measure_peak(bs::gpu::Device& dev, bs::gpu::KernelCache& kc) {
  uint64_t bytes = std::min<uint64_t>(dev.maxBindingRange() & ~uint64_t(15), 1ull << 30);
  bytes = std::min<uint64_t>(bytes, dev.adapter().device_local_bytes / 8) & ~uint64_t(15);
  auto src = dev.createBuffer({bytes, bs::gpu::BufferUsage::storage, "peak probe"});
  auto out = dev.createBuffer({1 << 16, bs::gpu::BufferUsage::storage, "peak partials"});
  {
    auto enc = dev.createCommandEncoder("probe init");
    enc.fillBuffer(src, 0, bytes, 0x3f812345u);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
  }
  const auto& p = kc.get("stream_read", {{0, 256}});
  bs::gpu::BindGroupEntry e[] = {{0, &src}, {1, &out}};
  auto bg = dev.createBindGroup(p, 0, e);
  bs::gpu::QuerySet qs(dev, 2);
  std::vector<double> gbs;
  for (int r = 0; r < 7; ++r) {
    auto enc = dev.createCommandEncoder("probe");
    enc.resetQueries(qs, 0, 2);
    enc.barrier();
    enc.writeTimestamp(qs, 0);
    auto pass = enc.beginComputePass();
    pass.setPipeline(p);
    pass.setBindGroup(0, bg);
    pass.setPushConstants(bs::kparams::StreamParams{uint32_t(bytes / 16), 1});
    pass.dispatchWorkgroups(std::min<uint32_t>(16384, uint32_t(bytes / 16 / 256) + 1));
    enc.barrier();
    enc.writeTimestamp(qs, 1);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
    auto t = qs.resolve_ns(0, 2);
    if (r >= 2) gbs.push_back(double(bytes) / (t[1] - t[0]));
  }
  return percentile(gbs, 0.5);
}

void run(const Args& a) {
  auto lm = bs::cli::load_for_generation(a.model, a.ctx > 0 ? a.ctx : a.prompt_tokens + a.gen_tokens + 8, 512);
  auto& model = *lm.model;
  auto& dev = *lm.device;
  const auto& c = model.config();
  bool tty = isatty(2) && !a.json;
  double peak = measure_peak(dev, model.kernels());

  std::mt19937 rng(1234);
  std::vector<int32_t> prompt(a.prompt_tokens);
  for (auto& t : prompt) t = int32_t(rng() % uint32_t(c.vocab));
  bs::generate::GenerateOptions opts;
  opts.max_tokens = a.gen_tokens;
  opts.ignore_eos = true;
  opts.sampling = a.sampling;
  bs::generate::Session session(model);

  std::vector<double> prefill_tok_s, decode_tok_s, ttft, per_token, arrivals_last;
  bs::generate::GenerateStats last;
  for (int r = -1; r < a.reps; ++r) {  // r = -1: warm-up
    if (tty) std::fprintf(stderr, "\rbench %s [%d/%d]", a.model.c_str(), r + 1, a.reps);
    session.reset();
    std::vector<double> arrivals;
    last = session.generate(prompt, opts, [&](int32_t, double t) { arrivals.push_back(t); return true; });
    if (r < 0) continue;
    arrivals_last = arrivals;
    prefill_tok_s.push_back(a.prompt_tokens / (last.prefill_ms / 1000.0));
    decode_tok_s.push_back(last.decode_tok_s());
    ttft.push_back(last.ttft_ms);
    // Tokens reach the host a batch (16 decode steps) at a time: a token's time is its arrival group's
    // interval over the group's size (tokens arriving within 0.05 ms form a group). arrivals[0] is the
    // token sampled in the prefill submit.
    for (size_t i = 1; i < arrivals.size();) {
      size_t j = i;
      while (j + 1 < arrivals.size() && arrivals[j + 1] - arrivals[i] < 0.05) ++j;
      per_token.push_back((arrivals[j] - arrivals[i - 1]) / double(j - i + 1));
      i = j + 1;
    }
  }
  if (tty) std::fprintf(stderr, "\r\033[K");

  // Per-kernel GPU time of one decode step, sampler included (profiled separately: marks add barriers).
  std::map<std::string, double> by_kernel, by_label = session.profile_step(a.prompt_tokens, opts);
  for (const auto& [label, ms] : by_label) by_kernel[label.substr(0, label.find(' '))] += ms;

  double tok_s = percentile(decode_tok_s, 0.5);
  uint64_t weights = model.weight_bytes();
  if (!c.tied_embeddings) {
    if (auto* e = model.find("embed")) weights -= e->buffer.size() - e->buffer.size() / uint64_t(c.vocab);
  }
  double avg_ctx = a.prompt_tokens + a.gen_tokens / 2.0;
  uint64_t kv_read = uint64_t(2.0 * c.n_layers * c.kv_dim() * 2 * avg_ctx);
  double achieved = double(weights + kv_read) * tok_s / 1e9;
  nlohmann::ordered_json j = {
      {"model", a.model}, {"quant", lm.quant}, {"device", dev.adapter().name}, {"driver", dev.adapter().driver},
      {"prompt_tokens", a.prompt_tokens}, {"gen_tokens", a.gen_tokens}, {"reps", a.reps},
      {"sampling", {{"temperature", a.sampling.temperature}, {"top_k", a.sampling.top_k}, {"top_p", a.sampling.top_p},
                    {"min_p", a.sampling.min_p}, {"repeat_penalty", a.sampling.repeat_penalty}, {"seed", a.sampling.seed}}},
      {"prefill_tok_s", percentile(prefill_tok_s, 0.5)}, {"decode_tok_s", tok_s},
      {"ttft_ms", percentile(ttft, 0.5)},
      {"decode_ms_per_token_p50", percentile(per_token, 0.5)}, {"decode_ms_per_token_p95", percentile(per_token, 0.95)},
      {"submits_per_token", double(last.decode_submits) / std::max(1, last.generated)},
      {"readback_bytes_per_token", 4.0 + 8.0 / 16.0},
      {"dispatches_per_token", last.dispatches_per_step}, {"barriers_per_token", last.barriers_per_step},
      {"weight_bytes_per_token", weights}, {"kv_bytes_per_token", kv_read},
      {"achieved_gb_s", achieved}, {"peak_gb_s", peak}, {"pct_of_peak", 100.0 * achieved / peak},
      {"gpu_ms_by_kernel", by_kernel}, {"gpu_ms_by_dispatch", by_label}, {"vram_bytes", dev.allocatedBytes()},
      {"weight_bytes", model.weight_bytes()}, {"kv_cache_bytes", model.kv_bytes()}, {"load_s", lm.load_s},
      {"token_arrival_ms", arrivals_last}};
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s (%s) on %s\n", a.model.c_str(), lm.quant.c_str(), dev.adapter().name.c_str());
    std::printf("  prefill %d tokens: %.0f tok/s, TTFT %.1f ms\n", a.prompt_tokens, j["prefill_tok_s"].get<double>(),
                j["ttft_ms"].get<double>());
    std::printf("  decode %d tokens: %.1f tok/s (p50 %.3f ms/token, p95 %.3f)\n", a.gen_tokens, tok_s,
                j["decode_ms_per_token_p50"].get<double>(), j["decode_ms_per_token_p95"].get<double>());
    std::printf("  %.1f GB/s of %.0f GB/s peak (%.1f%%); %.4f submits/token, %llu dispatches and %llu barriers/token\n",
                achieved, peak, 100.0 * achieved / peak, j["submits_per_token"].get<double>(),
                (unsigned long long)last.dispatches_per_step, (unsigned long long)last.barriers_per_step);
    std::printf("  VRAM %.2f GiB, load %.2f s\n", dev.allocatedBytes() / 1073741824.0, lm.load_s);
  }
}

bs::cli::Command bench_cmd{"bench", "Benchmark prefill and decode throughput", [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "RDRR model directory (or Hugging Face checkpoint)")->required();
  app.add_option("--prompt-tokens", a->prompt_tokens, "prompt length (default 512)");
  app.add_option("--gen-tokens", a->gen_tokens, "tokens to generate (default 128)");
  app.add_option("--reps", a->reps, "timed repetitions; medians are reported (default 5)");
  app.add_option("--ctx", a->ctx, "context length (default prompt + gen)");
  bs::cli::add_sampling_options(app, a->sampling);
  app.add_flag("--json", a->json, "print one JSON object");
  app.callback([a] { run(*a); });
}};

}  // namespace
