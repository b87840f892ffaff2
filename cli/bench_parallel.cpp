#include "cli/bench_parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "cli/generate_common.h"
#include "runtime/base/error.h"
#include "runtime/serve/batch.h"

namespace bs::cli {

using Clock = std::chrono::steady_clock;

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_bench_parallel(const BenchParallelArgs& a) {
  if (a.parallel < 2) fail_kind(ErrorKind::usage, "--parallel: expected at least 2 (plain `bench` is batch 1), got {}", a.parallel);
  auto t0 = Clock::now();
  auto source = model::open_model(a.model);
  gpu::Device device;
  model::ModelOptions mo;
  mo.max_ctx = a.ctx > 0 ? a.ctx : a.prompt_tokens + a.gen_tokens + 8;
  mo.max_batch = std::max(512, a.parallel);
  mo.logits_rows = mo.kv_slots = a.parallel;
  mo.kv_f32 = mo.f32_prefill_matmul = parse_precision(a.precision);
  model::Model model(device, source, mo);
  double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  serve::BatchDecoder bd(model, a.parallel);
  const int32_t N = a.parallel;

  std::mt19937 rng(1234);
  generate::GenerateOptions opts;
  opts.max_tokens = a.gen_tokens;
  opts.ignore_eos = true;
  opts.sampling = a.sampling;
  std::vector<double> aggregate, prefill_ms, step_ms;
  int64_t batches_last = 0;
  for (int r = -1; r < a.reps; ++r) {  // r = -1: warm-up
    // Every sequence its own random prompt (no shared prefix), prefilled one after another.
    auto p0 = Clock::now();
    for (int32_t s = 0; s < N; ++s) {
      std::vector<int32_t> prompt(size_t(a.prompt_tokens));
      for (auto& t : prompt) t = int32_t(rng() % uint32_t(model.config().vocab));
      bd.start(s, prompt, 0, opts);
    }
    double pms = std::chrono::duration<double, std::milli>(Clock::now() - p0).count();
    std::vector<int32_t> sink;
    int64_t first = 0;
    for (int32_t s = 0; s < N; ++s) bd.take(s, sink);
    first = int64_t(sink.size());
    auto d0 = Clock::now();
    int64_t batches = 0;
    for (;;) {
      bool all = true;
      for (int32_t s = 0; s < N; ++s) all = bd.take(s, sink) && all;
      if (all) break;
      bd.wait(bd.submit(bd.steps_per_batch()));
      ++batches;
    }
    double sec = std::chrono::duration<double>(Clock::now() - d0).count();
    if (int64_t(sink.size()) != int64_t(N) * a.gen_tokens)
      fail_kind(ErrorKind::internal, "bench --parallel: {} tokens, expected {}", sink.size(), int64_t(N) * a.gen_tokens);
    if (r < 0) continue;
    aggregate.push_back(double(int64_t(sink.size()) - first) / sec);
    prefill_ms.push_back(pms);
    step_ms.push_back(sec * 1e3 / double(batches * bd.steps_per_batch()));
    batches_last = batches;
  }
  std::map<std::string, double> by_kernel;
  if (a.profile) by_kernel = bd.profile_step();
  double agg = median(aggregate);
  nlohmann::ordered_json j = {{"model", a.model}, {"quant", source.quant}, {"device", device.adapter().name},
                              {"parallel", N}, {"prompt_tokens", a.prompt_tokens}, {"gen_tokens", a.gen_tokens},
                              {"reps", a.reps}, {"aggregate_decode_tok_s", agg}, {"per_stream_decode_tok_s", agg / N},
                              {"ms_per_step", median(step_ms)}, {"steps_per_batch", bd.steps_per_batch()},
                              {"dispatches_per_step", bd.dispatches_per_step()}, {"barriers_per_step", bd.barriers_per_step()},
                              {"batches", batches_last}, {"submits_per_token", double(batches_last) / double(N * (a.gen_tokens - 1))},
                              {"prefill_all_ms", median(prefill_ms)}, {"load_s", load_s},
                              {"vram_bytes", device.allocatedBytes()}};
  if (a.profile) {
    double total = 0;
    for (auto& [k, ms] : by_kernel) total += ms;
    j["profile_step_ms"] = total;
    j["profile_ms_by_kernel"] = by_kernel;
  }
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%s (%s) on %s, %d sequences together\n", a.model.c_str(), source.quant.c_str(), device.adapter().name.c_str(), N);
    std::printf("  decode %d tokens each: %.1f tok/s aggregate, %.1f tok/s per sequence (%.3f ms per step, %.0f "
                "dispatches and %.0f barriers a step)\n",
                a.gen_tokens, agg, agg / N, j["ms_per_step"].get<double>(), bd.dispatches_per_step(), bd.barriers_per_step());
    std::printf("  prefill of %d x %d tokens: %.1f ms; VRAM %.2f GiB, load %.2f s\n", N, a.prompt_tokens,
                j["prefill_all_ms"].get<double>(), device.allocatedBytes() / 1073741824.0, load_s);
    if (a.profile) {
      std::printf("  one step profiled: %.3f GPU ms\n", j["profile_step_ms"].get<double>());
      for (auto& [k, ms] : by_kernel) std::printf("    %-32s %8.3f ms\n", k.c_str(), ms);
    }
  }
}

}  // namespace bs::cli
