// bs_prefill_profile: where one prefill forward spends its GPU time, per kernel class and per label
// (timestamps around every dispatch; the marks add a barrier each, so the total exceeds a plain run).
//
//   bs_prefill_profile MODEL_DIR [--tokens 512] [--reps 5] [--warm 0] [--json]
//   bs_prefill_profile MODEL_DIR --record N [--tokens 512] [--json]
// --record N: the host's side instead. Records the forward N times without submitting (median ms per forward,
// us per dispatch), then times the per-dispatch calls alone, each N x 100 times: KernelCache::get,
// Device::createBindGroup (descriptor set allocation and update), and a recorded dispatch (setPipeline,
// setBindGroup, setPushConstants, dispatchWorkgroups with the hazard tracker). Recording the prefill took
// ~6 us a dispatch on the H100 lease's host (2026-11-28-h100-session12.md): this says which call it is.
// --warm N records N plain forwards ahead of each profiled one in the same submit, so that a short
// forward (a 1B's) is profiled at the clocks a busy GPU runs at, not at an idle one's.
// Prints the median over reps of each label's ms (labels read "matmul q4k 8192x2048", "attention", ...),
// and the sum per first word. BLUESHIFT_NO_COOPMAT=1 profiles the scalar matmul instead.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "kernels_glsl/params.h"
#include "runtime/base/error.h"
#include "runtime/gpu/gpu.h"
#include "runtime/model/model.h"

namespace {

using namespace bs;

struct Options {
  std::string model;
  uint32_t tokens = 512;
  uint32_t reps = 5;
  uint32_t warm = 0;
  uint32_t record = 0;
  bool json = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// --record: host time of recording, per forward and per call class (above).
int record_only(const Options& o, gpu::Device& dev, model::Model& m) {
  std::vector<double> forward_ms;
  uint64_t dispatches = 0;
  for (uint32_t r = 0; r <= o.record; ++r) {  // r = 0: warm-up (pipelines compiled)
    model::Recording rec;
    auto enc = dev.createCommandEncoder("record only");
    auto t0 = Clock::now();
    m.record_forward(enc, int32_t(o.tokens), rec);
    double us = us_since(t0);
    dispatches = enc.dispatchCount();
    if (r > 0) forward_ms.push_back(us / 1000);
    auto cb = enc.finish();  // never submitted
  }
  // The calls alone, on a small kernel with three bindings.
  const uint32_t n = o.record * 100;
  const auto& p = m.kernels().get("matvec_f16", {{0, 32}, {1, 1}});
  auto a = dev.createBuffer({1 << 16, gpu::BufferUsage::storage, "a"}), b = dev.createBuffer({1 << 16, gpu::BufferUsage::storage, "b"}),
       c = dev.createBuffer({1 << 16, gpu::BufferUsage::storage, "c"});
  auto t0 = Clock::now();
  for (uint32_t i = 0; i < n; ++i) (void)m.kernels().get("matvec_f16", {{0, 32}, {1, 1}});
  double get_us = us_since(t0) / n;
  std::vector<gpu::BindGroup> groups;
  groups.reserve(n);
  gpu::BindGroupEntry e[] = {{0, &a}, {1, &b}, {2, &c}};
  t0 = Clock::now();
  for (uint32_t i = 0; i < n; ++i) groups.push_back(dev.createBindGroup(p, 0, e, "record only"));
  double group_us = us_since(t0) / n;
  auto enc = dev.createCommandEncoder("record only");
  auto pass = enc.beginComputePass();
  t0 = Clock::now();
  for (uint32_t i = 0; i < n; ++i) {
    pass.setPipeline(p);
    pass.setBindGroup(0, groups[i]);
    pass.setPushConstants(kparams::MatvecParams{64, 64, 1, 0});
    pass.dispatchWorkgroups(1);
  }
  double dispatch_us = us_since(t0) / n;
  auto cb = enc.finish();
  const double fwd = median(forward_ms);
  if (o.json) {
    nlohmann::json j{{"device", dev.adapter().name}, {"tokens", o.tokens}, {"record_ms_per_forward", fwd},
                     {"dispatches_per_forward", dispatches}, {"us_per_dispatch", fwd * 1000 / double(std::max<uint64_t>(dispatches, 1))},
                     {"us_kernel_get", get_us}, {"us_create_bind_group", group_us}, {"us_recorded_dispatch", dispatch_us}};
    fmt::print("{}\n", j.dump(1));
    return 0;
  }
  fmt::print("{} ({}), recording a prefill of {} tokens: {:.3f} ms a forward (median of {}), {} dispatches, {:.2f} us each\n",
             dev.adapter().name, dev.adapter().driver, o.tokens, fwd, o.record, dispatches,
             fwd * 1000 / double(std::max<uint64_t>(dispatches, 1)));
  fmt::print("  KernelCache::get         {:>8.3f} us\n  Device::createBindGroup  {:>8.3f} us\n  a recorded dispatch      {:>8.3f} us\n",
             get_us, group_us, dispatch_us);
  return 0;
}

int run(const Options& o) {
  auto source = model::open_model(o.model);
  gpu::Device dev;
  model::ModelOptions mo;
  mo.max_ctx = int32_t(o.tokens) + 8;
  mo.max_batch = int32_t(o.tokens);
  model::Model m(dev, source, mo);
  if (o.record) return record_only(o, dev, m);
  std::mt19937 rng(1234);
  std::vector<int32_t> toks(o.tokens);
  for (auto& t : toks) t = int32_t(rng() % uint32_t(m.config().vocab));

  std::map<std::string, std::vector<double>> by_label;
  for (uint32_t r = 0; r <= o.reps; ++r) {  // r = 0: warm-up
    gpu::Profiler prof(dev, 8192);
    model::Recording rec;
    auto enc = dev.createCommandEncoder("prefill profile");
    uint32_t st[2] = {0, 0};
    enc.writeBuffer(m.state(), 0, st, sizeof st);
    enc.writeBuffer(m.tokens(), 0, toks.data(), toks.size() * 4);
    for (uint32_t w = 0; w < o.warm; ++w) {
      model::Recording warm;
      m.record_forward(enc, int32_t(o.tokens), warm);
      enc.barrier();
    }
    prof.begin(enc);
    m.record_forward(enc, int32_t(o.tokens), rec, &prof);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
    prof.collect();
    if (r == 0) continue;
    for (const auto& [label, ms] : prof.ms_by_label()) by_label[label].push_back(ms);
  }
  std::map<std::string, double> label_ms, kind_ms;
  double total = 0;
  for (const auto& [label, v] : by_label) {
    label_ms[label] = median(v);
    kind_ms[label.substr(0, label.find(' '))] += label_ms[label];
    total += label_ms[label];
  }
  if (o.json) {
    nlohmann::json j{{"device", dev.adapter().name}, {"tokens", o.tokens}, {"total_ms", total},
                     {"ms_by_kernel", kind_ms}, {"ms_by_label", label_ms}};
    fmt::print("{}\n", j.dump(1));
    return 0;
  }
  fmt::print("{} ({}), prefill of {} tokens, profiled: {:.3f} ms\n", dev.adapter().name, dev.adapter().driver,
             o.tokens, total);
  for (const auto& [k, ms] : kind_ms) fmt::print("  {:<20} {:>8.3f} ms\n", k, ms);
  for (const auto& [l, ms] : label_ms) fmt::print("    {:<36} {:>8.3f} ms\n", l, ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Profiles one prefill forward per kernel with GPU timestamps"};
  app.add_option("model", o.model, "model directory (RDRR or HF)")->required();
  app.add_option("--tokens", o.tokens, "prompt rows in the forward")->check(CLI::Range(2u, 8192u));
  app.add_option("--reps", o.reps, "profiled forwards (median)")->check(CLI::Range(1u, 1000u));
  app.add_option("--warm", o.warm, "plain forwards before each profiled one, in its submit")->check(CLI::Range(0u, 1000u));
  app.add_option("--record", o.record, "host time instead: record the forward N times, no submit; then the calls alone")
      ->check(CLI::Range(1u, 10000u));
  app.add_flag("--json", o.json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const bs::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return int(e.kind());
  }
}
