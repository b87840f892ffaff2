// blueshift bench: prefill and decode throughput, TTFT, submits/token and bandwidth against the peak
// this GPU streams (measured before the model loads by the built-in streaming-read kernel), and the
// floor that peak puts under a token.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/bench_parallel.h"
#include "cli/command.h"
#include "cli/generate_common.h"
#include "kernels_glsl/params.h"
#include "runtime/model/persistent.h"

namespace {

struct Args {
  std::string model;
  int32_t prompt_tokens = 512, gen_tokens = 128, reps = 5, ctx = 0;
  std::string precision = "f16";
  bool json = false, load_only = false, profile = false, deterministic = false;
  int32_t parallel = 0;  // --parallel N: cli/bench_parallel.cpp
  bs::generate::SamplingOptions sampling;  // greedy unless set: the sampler's cost is part of a token
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5))];
}

// The streaming-read peak of this GPU, measured on a fresh device before the model loads (nothing
// else resident, nothing else in flight). A single cold median once came out at 54% of the usual
// figure on an H100 (1673 vs 3116 GB/s) and made pct_of_peak 130%: so the kernel first runs warm-up
// passes (clocks up, pipeline compiled), then reads several sizes, each several times, and the peak
// is the best run. Sizes stay well above a last-level cache (50 MiB on an H100) so no run is served
// from it; on small devices they shrink with the binding limit.
struct Peak {
  double gb_s = 0;
  nlohmann::ordered_json by_size = nlohmann::ordered_json::object();  // MiB -> best GB/s
  int runs = 0;
};

Peak measure_peak(bs::gpu::Device& dev) {
  bs::gpu::KernelCache kc(dev);
  uint64_t max_bytes = std::min<uint64_t>(dev.maxBindingRange(), 1ull << 30);
  max_bytes = std::min<uint64_t>(max_bytes, dev.adapter().device_local_bytes / 8) & ~uint64_t(4095);
  // A CPU "GPU" (lavapipe) streams well under 1 GB/s here: 32 MiB keeps the probe to about a second.
  if (dev.adapter().type == "cpu") max_bytes = std::min<uint64_t>(max_bytes, 32ull << 20);
  auto src = dev.createBuffer({max_bytes, bs::gpu::BufferUsage::storage, "peak probe"});
  auto out = dev.createBuffer({1 << 16, bs::gpu::BufferUsage::storage, "peak partials"});
  {
    auto enc = dev.createCommandEncoder("probe init");  // never time on zeros
    enc.fillBuffer(src, 0, max_bytes, 0x3f812345u);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
  }
  const auto& p = kc.get("stream_read", {{0, 256}});
  bs::gpu::QuerySet qs(dev, 2);
  auto time_read = [&](uint64_t bytes) {  // GB/s of one dispatch over the first `bytes`
    bs::gpu::BindGroupEntry e[] = {{0, &src, 0, bytes}, {1, &out}};
    auto bg = dev.createBindGroup(p, 0, e);
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
    return t[1] > t[0] ? double(bytes) / double(t[1] - t[0]) : 0.0;
  };
  // Warm-up: at least 4 passes and 50 ms (~125 passes of 1 GiB on an H100), so a GPU that idled has
  // raised its clocks.
  auto w0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4 || std::chrono::steady_clock::now() - w0 < std::chrono::milliseconds(50); ++i) {
    time_read(max_bytes);
    if (i >= 256) break;  // bounded whatever the clock says
  }
  Peak peak;
  for (uint64_t bytes : {max_bytes / 4, max_bytes / 2, max_bytes}) {
    bytes &= ~uint64_t(4095);
    double best = 0;
    for (int r = 0; r < 5; ++r, ++peak.runs) best = std::max(best, time_read(bytes));
    peak.by_size[std::to_string(bytes >> 20)] = best;
    peak.gb_s = std::max(peak.gb_s, best);
  }
  return peak;
}

// Where the load's time went (Model::load_breakdown): waiting for shards and in the sink (RDRR only; null from a
// Hugging Face directory), and the sink's writes into staging memory and waits for the GPU.
nlohmann::ordered_json load_breakdown_json(const bs::model::Model& m) {
  const auto& b = m.load_breakdown();
  auto src = [&](double v) { return b.source.known ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  return {{"shard_wait_s", src(b.source.shard_wait_s)}, {"sink_s", src(b.source.sink_s)},
          {"staging_write_s", b.staging_write_s}, {"gpu_wait_s", b.gpu_wait_s}};
}

// --load-only: the load (open, verify, decompress, upload, repack) timed alone, for A/B runs of the
// loader (BLUESHIFT_HOST_REPACK=1 against the GPU repack, say) without a forward pass.
void run_load_only(const Args& a) {
  auto lm = bs::cli::load_for_generation(a.model, a.ctx > 0 ? a.ctx : 64, 512, bs::gpu::KernelSource::glsl, nullptr);
  auto& dev = *lm.device;
  nlohmann::ordered_json j = {{"model", a.model}, {"quant", lm.quant}, {"device", dev.adapter().name},
                              {"load_s", lm.load_s}, {"load_breakdown", load_breakdown_json(*lm.model)},
                              {"weight_bytes", lm.model->weight_bytes()}, {"vram_bytes", dev.allocatedBytes()}};
  if (a.json) std::printf("%s\n", j.dump(2).c_str());
  else
    std::printf("%s (%s) on %s: load %.2f s, weights %.2f GiB, VRAM %.2f GiB\n", a.model.c_str(), lm.quant.c_str(),
                dev.adapter().name.c_str(), lm.load_s, lm.model->weight_bytes() / 1073741824.0,
                dev.allocatedBytes() / 1073741824.0);
}

void run(const Args& a) {
  if (a.load_only) return run_load_only(a);
  if (a.parallel > 0)
    return bs::cli::run_bench_parallel({a.model, a.precision, a.parallel, a.prompt_tokens, a.gen_tokens, a.reps, a.ctx,
                                        a.sampling, a.json, a.profile});
  Peak pk;
  auto lm = bs::cli::load_for_generation(a.model, a.ctx > 0 ? a.ctx : a.prompt_tokens + a.gen_tokens + 8, 512,
                                         bs::gpu::KernelSource::glsl, [&](bs::gpu::Device& d) { pk = measure_peak(d); },
                                         bs::cli::parse_precision(a.precision), a.deterministic);
  auto& model = *lm.model;
  auto& dev = *lm.device;
  const auto& c = model.config();
  bool tty = isatty(2) && !a.json;
  const double peak = pk.gb_s;

  std::mt19937 rng(1234);
  std::vector<int32_t> prompt(a.prompt_tokens);
  for (auto& t : prompt) t = int32_t(rng() % uint32_t(c.vocab));
  bs::generate::GenerateOptions opts;
  opts.max_tokens = a.gen_tokens;
  opts.ignore_eos = true;
  opts.sampling = a.sampling;
  bs::generate::Session session(model);

  std::vector<double> prefill_tok_s, decode_tok_s, ttft, per_token, arrivals_last, prefill_record, prefill_gpu, prefill_submit;
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
    prefill_record.push_back(last.prefill_record_ms);
    prefill_gpu.push_back(last.prefill_gpu_ms);
    prefill_submit.push_back(last.prefill_first_submit_ms);
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
  // Lookup tables are gathered, one row per token: an untied embedding, and Gemma 4's per-layer embedding
  // (ple_embed, [ple_vocab, layers x ple_dim]: 4.7 GB in F16 for the E2B, of which a token reads one 17.9 KB row).
  auto gathered = [&](const char* name, int64_t rows) {
    if (const auto* e = model.find(name)) weights -= e->buffer.size() - e->buffer.size() / uint64_t(rows);
  };
  if (!c.tied_embeddings) gathered("embed", c.vocab);
  if (c.ple_dim > 0) gathered("ple_embed", c.ple_vocab), gathered("ple_embed_scales", c.ple_vocab);
  // MoE: a token reads its n_experts_used experts of each [experts, rows, cols] tensor (and their bias rows),
  // k distinct ones; the others' bytes stay put.
  if (c.moe())
    for (int32_t l = 0; l < c.n_layers; ++l)
      for (const char* s : {"ffn_gate_up_exps", "ffn_down_exps", "ffn_gate_up_exps_bias", "ffn_down_exps_bias"})
        if (const auto* e = model.find(fmt::format("blk.{}.{}", l, s)))
          weights -= e->buffer.size() - e->buffer.size() / uint64_t(c.n_experts) * uint64_t(c.n_experts_used);
  // Attention layers read their KV cache (per layer: its own width, a sliding window's positions at most);
  // the others (LFM2's short convs, Qwen 3.5's Gated DeltaNet) read and write a fixed-size state of their
  // own in full every token.
  const uint64_t kv_read = uint64_t(model.kv_read_bytes(a.prompt_tokens + a.gen_tokens / 2.0));
  const uint64_t state_rw = 2 * model.state_bytes();
  const double bytes_per_token = double(weights + kv_read + state_rw);
  double achieved = bytes_per_token * tok_s / 1e9;
  // Achieved above the measured peak means one of the two measurements is wrong (the peak probe ran
  // slow, or the byte count misses reuse from cache): it is reported as such, never as > 100%.
  const bool over_peak = achieved > peak;  // also when no peak was measured (peak 0)
  const double pct = over_peak ? 100.0 : 100.0 * achieved / peak;
  std::string peak_error;
  if (peak <= 0)
    peak_error = "no streaming peak measured (the probe's timestamps read 0)";
  else if (over_peak)
    peak_error = fmt::format("measurement error: achieved {:.1f} GB/s exceeds the measured streaming peak {:.1f} GB/s",
                             achieved, peak);
  // A token can't take less than its bytes at the peak (0 when there is no peak).
  const double floor_ms = peak > 0 ? bytes_per_token / (peak * 1e9) * 1e3 : 0.0;
  // The decode step's path: the persistent kernel's plan, or why each step runs phase by phase.
  nlohmann::ordered_json decode_kernel = {{"persistent", false}, {"why", model.persistent_why()}};
  if (const auto* pk = model.persistent())
    decode_kernel = {{"persistent", true}, {"kernel", pk->kernel()}, {"grid", pk->grid()},
                     {"workgroup", pk->workgroup()}, {"staging_floats", pk->staging_floats()},
                     {"down_passes", pk->down_passes()}, {"norm_slots", pk->norm_slots()},
                     {"head_norm", pk->head_norm()}};
  // Where the decode loop replays its long-context recording (attention by kv head), or null where it has none.
  const int32_t long_from = model.long_context_from();
  decode_kernel["long_context_from"] =
      long_from < INT32_MAX ? nlohmann::ordered_json(long_from) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json j = {
      {"model", a.model}, {"quant", lm.quant}, {"device", dev.adapter().name}, {"driver", dev.adapter().driver},
      {"prompt_tokens", a.prompt_tokens}, {"gen_tokens", a.gen_tokens}, {"reps", a.reps},
      {"deterministic", a.deterministic},
      {"sampling", {{"temperature", a.sampling.temperature}, {"top_k", a.sampling.top_k}, {"top_p", a.sampling.top_p},
                    {"min_p", a.sampling.min_p}, {"repeat_penalty", a.sampling.repeat_penalty}, {"seed", a.sampling.seed}}},
      {"prefill_tok_s", percentile(prefill_tok_s, 0.5)}, {"decode_tok_s", tok_s},
      {"ttft_ms", percentile(ttft, 0.5)},
      {"prefill_record_ms", percentile(prefill_record, 0.5)}, {"prefill_gpu_ms", percentile(prefill_gpu, 0.5)},
      {"prefill_first_submit_ms", percentile(prefill_submit, 0.5)},
      {"decode_ms_per_token_p50", percentile(per_token, 0.5)}, {"decode_ms_per_token_p95", percentile(per_token, 0.95)},
      {"submits_per_token", double(last.decode_submits) / std::max(1, last.generated)},
      {"readback_bytes_per_token", 4.0 + 8.0 / 16.0},
      {"dispatches_per_token", last.dispatches_per_step}, {"barriers_per_token", last.barriers_per_step},
      {"decode_kernel", decode_kernel},
      {"weight_bytes_per_token", weights}, {"kv_bytes_per_token", kv_read}, {"state_bytes_per_token", state_rw},
      {"active_experts", c.moe() ? nlohmann::ordered_json({{"used", c.n_experts_used}, {"of", c.n_experts}})
                                 : nlohmann::ordered_json(nullptr)},
      {"achieved_gb_s", achieved}, {"peak_gb_s", peak}, {"pct_of_peak", pct},
      {"peak_error", peak_error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(peak_error)},
      {"peak_gb_s_by_mib", pk.by_size}, {"peak_runs", pk.runs},
      {"floor_ms_per_token", floor_ms}, {"floor_tok_s", floor_ms > 0 ? 1e3 / floor_ms : 0.0},
      {"gpu_ms_by_kernel", by_kernel}, {"gpu_ms_by_dispatch", by_label}, {"vram_bytes", dev.allocatedBytes()},
      {"weight_bytes", model.weight_bytes()}, {"kv_cache_bytes", model.kv_bytes()}, {"load_s", lm.load_s},
      {"load_breakdown", load_breakdown_json(model)}, {"token_arrival_ms", arrivals_last}};
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s (%s) on %s\n", a.model.c_str(), lm.quant.c_str(), dev.adapter().name.c_str());
    std::printf("  prefill %d tokens: %.0f tok/s, TTFT %.1f ms (recording %.2f ms, GPU %.2f ms)\n", a.prompt_tokens,
                j["prefill_tok_s"].get<double>(), j["ttft_ms"].get<double>(), j["prefill_record_ms"].get<double>(),
                j["prefill_gpu_ms"].get<double>());
    std::printf("  decode %d tokens: %.1f tok/s (p50 %.3f ms/token, p95 %.3f)\n", a.gen_tokens, tok_s,
                j["decode_ms_per_token_p50"].get<double>(), j["decode_ms_per_token_p95"].get<double>());
    std::printf("  %.1f GB/s of %.1f GB/s peak (%.1f%%); floor %.3f ms/token (%.0f tok/s)\n", achieved, peak, pct,
                floor_ms, floor_ms > 0 ? 1e3 / floor_ms : 0.0);
    if (over_peak) std::printf("  %s\n", peak_error.c_str());
    std::printf("  %.4f submits/token, %llu dispatches and %llu barriers/token\n", j["submits_per_token"].get<double>(),
                (unsigned long long)last.dispatches_per_step, (unsigned long long)last.barriers_per_step);
    if (const auto* pk = model.persistent())
      std::printf("  decode: %s, %u x %u invocations, every layer in one dispatch\n", pk->kernel().c_str(), pk->grid(),
                  pk->workgroup());
    else
      std::printf("  decode: phase by phase (%s)\n", model.persistent_why().c_str());
    if (long_from < INT32_MAX)
      std::printf("  decode from position %d: the long-context recording (attention by kv head)\n", long_from);
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
  bs::cli::add_precision_option(app, a->precision);
  bs::cli::add_deterministic_flag(app, a->deterministic);
  bs::cli::add_sampling_options(app, a->sampling);
  app.add_flag("--json", a->json, "print one JSON object");
  app.add_flag("--load-only", a->load_only,
               "only load the model and report the load time (BLUESHIFT_HOST_REPACK=1: DOPPLER's W4A16 and \"col\" "
               "Q4_K repacked on the host instead of the GPU)");
  app.add_option("--parallel", a->parallel, "N >= 2 sequences decoding together (serve's continuous batching): "
                 "aggregate and per-sequence decode tok/s");
  app.add_flag("--profile", a->profile, "with --parallel: GPU time by kernel of one batched step (timestamps per dispatch)");
  app.callback([a] { run(*a); });
}};

}  // namespace
