// bs_micro: the two numbers later performance work stands on, measured with timestamp queries.
//   1. cost per dispatch in one command buffer: N tiny dispatches, without and with a barrier between;
//   2. bandwidth of a streaming-read kernel over a large buffer, against the copy ceiling
//      (and a vkCmdCopyBuffer of the same buffer, read + write bytes).
// Usage: bs_micro [--dispatches 10000] [--mib 1024] [--reps 20] [--json]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "kernels_glsl/params.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/kernel_cache.h"

using namespace bs::gpu;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `record` (which records into enc) `reps` times; returns per-rep GPU ms between two timestamps.
template <class F>
static std::vector<double> time_gpu(Device& dev, int reps, F&& record) {
  QuerySet qs(dev, 2);
  std::vector<double> ms;
  for (int r = 0; r < reps + 2; ++r) {  // two warm-up reps
    auto enc = dev.createCommandEncoder("bench");
    enc.resetQueries(qs, 0, 2);
    enc.barrier();
    enc.writeTimestamp(qs, 0);
    record(enc);
    enc.barrier();
    enc.writeTimestamp(qs, 1);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
    auto t = qs.resolve_ns(0, 2);
    if (r >= 2) ms.push_back((t[1] - t[0]) * 1e-6);
  }
  return ms;
}

int main(int argc, char** argv) {
  CLI::App app{"bs_micro: dispatch cost and streaming bandwidth"};
  uint32_t dispatches = 10000, mib = 1024;
  int reps = 20;
  bool json = false;
  app.add_option("--dispatches", dispatches, "tiny dispatches per command buffer");
  app.add_option("--mib", mib, "MiB streamed by the bandwidth kernel");
  app.add_option("--reps", reps, "timed repetitions (median reported)");
  app.add_flag("--json", json, "print JSON");
  CLI11_PARSE(app, argc, argv);

  Device dev(-1, 0);
  KernelCache kc(dev);
  nlohmann::json out;
  out["device"] = dev.adapter().name;
  out["driver"] = dev.adapter().driver;

  // 1. dispatch cost
  auto sink = dev.createBuffer({4096, BufferUsage::storage, "sink"});
  const auto& noop = kc.get("noop");
  // The compiler may drop noop's unused binding; bind it only when the pipeline still has it.
  BindGroupEntry e{0, &sink};
  std::optional<BindGroup> bg;
  if (noop.bindGroupCount() > 0) bg.emplace(dev.createBindGroup(noop, 0, std::span(&e, 1)));
  // Each variant: `dispatches` 1-workgroup dispatches; between them nothing, a full barrier (compute +
  // transfer -> compute + transfer + indirect), or a compute -> compute barrier; direct or indirect.
  auto args = dev.createBuffer({4096, BufferUsage::storage, "indirect args"});
  {
    uint32_t one[3] = {1, 1, 1};
    dev.queue().writeBuffer(args, 0, one, sizeof one);
  }
  struct Variant {
    const char* key;
    int barrier;  // 0 none, 1 full, 2 compute -> compute (+ indirect when indirect)
    bool indirect;
  };
  const Variant variants[] = {{"us_per_dispatch", 0, false},
                              {"us_per_dispatch_with_barrier", 1, false},
                              {"us_per_dispatch_with_compute_barrier", 2, false},
                              {"us_per_indirect_dispatch", 0, true},
                              {"us_per_indirect_dispatch_with_barrier", 1, true},
                              {"us_per_indirect_dispatch_with_compute_barrier", 2, true}};
  for (const auto& v : variants) {
    auto ms = time_gpu(dev, reps, [&](CommandEncoder& enc) {
      auto pass = enc.beginComputePass();
      pass.setPipeline(noop);
      if (bg) pass.setBindGroup(0, *bg);
      for (uint32_t i = 0; i < dispatches; ++i) {
        if (v.indirect) pass.dispatchWorkgroupsIndirect(args, 0);
        else pass.dispatchWorkgroups(1);
        if (v.barrier == 1) enc.barrier();
        if (v.barrier == 2)
          enc.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | (v.indirect ? VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT : 0));
      }
    });
    out[v.key] = median(ms) * 1e3 / dispatches;
  }

  // 1b. a grid-wide barrier inside one persistent dispatch (atomic arrival + spin), per round, for grids
  // of 1 and 2 workgroups per multiprocessor (132 on an H100); GPUs only (lavapipe gives no
  // forward-progress guarantee across workgroups).
  if (dev.adapter().type != "cpu") {
    auto counter = dev.createBuffer({256, BufferUsage::storage, "grid counter"});
    const auto& gs = kc.get("grid_sync", {{0, 256}});
    BindGroupEntry ge{0, &counter};
    auto gbg = dev.createBindGroup(gs, 0, std::span(&ge, 1));
    const uint32_t rounds = 2000;
    for (uint32_t groups : {132u, 264u}) {
      auto ms = time_gpu(dev, reps, [&](CommandEncoder& enc) {
        enc.fillBuffer(counter, 0, 256, 0);
        auto pass = enc.beginComputePass();
        pass.setPipeline(gs);
        pass.setBindGroup(0, gbg);
        pass.setPushConstants(bs::kparams::StreamParams{rounds, 0});
        pass.dispatchWorkgroups(groups);
      });
      out[fmt::format("us_per_grid_barrier_{}wg", groups)] = median(ms) * 1e3 / rounds;
    }
  }

  // 2. streaming read
  uint64_t bytes = uint64_t(mib) << 20;
  auto src = dev.createBuffer({bytes, BufferUsage::storage, "stream src"});
  auto dst = dev.createBuffer({bytes, BufferUsage::storage, "copy dst"});
  {
    auto enc = dev.createCommandEncoder("init");  // never time on zeros
    enc.fillBuffer(src, 0, bytes, 0x3f800123u);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
  }
  auto partial = dev.createBuffer({1 << 20, BufferUsage::storage, "partials"});
  uint32_t wg = 256, groups = 132 * 16;
  const auto& stream = kc.get("stream_read", {{0, wg}});
  uint64_t range = std::min<uint64_t>(bytes, dev.maxBindingRange() & ~uint64_t(15));
  BindGroupEntry se[] = {{0, &src, 0, range}, {1, &partial}};
  auto sbg = dev.createBindGroup(stream, 0, se);
  auto ms = time_gpu(dev, reps, [&](CommandEncoder& enc) {
    auto pass = enc.beginComputePass();
    pass.setPipeline(stream);
    pass.setBindGroup(0, sbg);
    pass.setPushConstants(bs::kparams::StreamParams{uint32_t(range / 16), 1});
    pass.dispatchWorkgroups(groups);
  });
  double read_gbs = double(range) / (median(ms) * 1e-3) / 1e9;
  auto cms = time_gpu(dev, reps, [&](CommandEncoder& enc) { enc.copyBufferToBuffer(src, 0, dst, 0, bytes); });
  double copy_gbs = 2.0 * double(bytes) / (median(cms) * 1e-3) / 1e9;
  out["stream_read_gb_s"] = read_gbs;
  out["stream_read_bytes"] = range;
  out["copy_gb_s_read_plus_write"] = copy_gbs;
  out["ceiling_gb_s"] = 3000.0;
  out["stream_read_pct_of_ceiling"] = 100.0 * read_gbs / 3000.0;
  out["reps"] = reps;

  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("device            %s\n", dev.adapter().name.c_str());
    for (const auto& [k, v] : out.items())
      if (k.rfind("us_per", 0) == 0) std::printf("%-46s %.3f us\n", k.c_str(), v.get<double>());
    std::printf("stream read       %.0f GB/s over %.0f MiB (%.1f%% of 3000 GB/s)\n", read_gbs, range / 1048576.0,
                100.0 * read_gbs / 3000.0);
    std::printf("buffer copy       %.0f GB/s (read + write)\n", copy_gbs);
  }
}
