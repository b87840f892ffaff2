// bs_micro: the two numbers later performance work stands on, measured with timestamp queries.
//   1. cost per dispatch in one command buffer: N tiny dispatches, without and with a barrier between;
//   2. bandwidth of a streaming-read kernel over a large buffer, against the copy ceiling
//      (and a vkCmdCopyBuffer of the same buffer, read + write bytes).
// With --rows, instead: the persistent decode kernel's Q4_K loads without their math (stream_rows.comp) over a sweep
// of workgroup widths, workgroups a multiprocessor, parts a lane a step, PIPE and HEADER, each as GB/s of the Q4_K
// matrix read, beside the streaming read over the same bytes.
// Usage: bs_micro [--dispatches 10000] [--mib 1024] [--reps 20] [--json]
//        bs_micro --rows [--rows-m 131072] [--rows-k 4096] [--rows-copies 1] [--rows-prefetch-mib 0]
//                 [--rows-wg 256,384,512,640,768,1024] [--rows-per-sm 1,2] [--rows-parts 1,2,4] [--rows-pipe 0,1]
//                 [--rows-header 0,1] [--reps 10] [--json]
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

// GB/s of stream_read (256 invocations a workgroup, `groups` workgroups) over `range` bytes of src, each workgroup's
// fold written to sink: the median of `reps` timed runs. With copies > 1, one dispatch a copy (at offsets 0, stride,
// 2 stride, ...), a barrier between each two, and GB/s over all of them.
static double stream_read_gbs(Device& dev, KernelCache& kc, const Buffer& src, uint64_t range, const Buffer& sink,
                              uint32_t groups, int reps, uint32_t copies = 1, uint64_t stride = 0) {
  const auto& stream = kc.get("stream_read", {{0, 256}});
  std::vector<BindGroup> bgs;
  for (uint32_t c = 0; c < copies; ++c) {
    BindGroupEntry se[] = {{0, &src, c * stride, range}, {1, &sink}};
    bgs.push_back(dev.createBindGroup(stream, 0, se));
  }
  auto ms = time_gpu(dev, reps, [&](CommandEncoder& enc) {
    for (uint32_t c = 0; c < copies; ++c) {
      if (c > 0) enc.barrier();
      auto pass = enc.beginComputePass();
      pass.setPipeline(stream);
      pass.setBindGroup(0, bgs[c]);
      pass.setPushConstants(bs::kparams::StreamParams{uint32_t(range / 16), 1});
      pass.dispatchWorkgroups(groups);
    }
  });
  return double(range) * copies / (median(ms) * 1e-3) / 1e9;
}

struct RowsSweep {
  uint32_t m, k, copies, prefetch_mib;
  std::vector<uint32_t> wg, per_sm, parts, pipe, header;
};

// --rows: stream_rows.comp over an m x k Q4_K-shaped matrix (k / 256 blocks of 144 bytes a row) for every setting
// of the sweep, and stream_read over the same bytes. With copies > 1 the matrix is held that many times and each timed
// run sweeps them in turn, a barrier between: a matrix of one phase's size, read from memory each time (copies x its
// bytes beyond L2), with each dispatch's ramp and last round counted as the phases' are. prefetch_mib > 0 (with copies
// > 1): right after each copy's dispatch, with no barrier between, stream_read (a workgroup a multiprocessor) reads the
// first prefetch_mib MiB of the next copy, so that the next dispatch may find its first rounds' rows in L2: what
// reading a phase's first bytes ahead, beside the phase before, would buy. Returns the exit code.
static int rows_sweep(Device& dev, KernelCache& kc, nlohmann::json& out, bool json, int reps, const RowsSweep& sw) {
  if (sw.m % 2 != 0 || sw.k % 256 != 0) {
    std::fprintf(stderr, "bs_micro: --rows-m must be even (got %u) and --rows-k a multiple of 256 (got %u)\n", sw.m,
                 sw.k);
    return 2;
  }
  const uint32_t nb = sw.k / 256, sg = std::max(1u, dev.subgroupSize());
  const uint64_t bytes = uint64_t(sw.m) * nb * 144;
  if (bytes > (dev.maxBindingRange() & ~uint64_t(15))) {
    std::fprintf(stderr, "bs_micro: the matrix's %llu bytes exceed the device's binding range (%llu): lower --rows-m\n",
                 (unsigned long long)bytes, (unsigned long long)dev.maxBindingRange());
    return 2;
  }
  const uint32_t sms = dev.adapter().sm_count ? dev.adapter().sm_count : 1;
  const uint64_t stride = (bytes + 255) & ~uint64_t(255);
  auto w = dev.createBuffer({stride * sw.copies, BufferUsage::storage, "rows"});
  {
    auto enc = dev.createCommandEncoder("init");
    enc.fillBuffer(w, 0, stride * sw.copies, 0x3f800123u);
    auto cb = enc.finish();
    dev.queue().wait(dev.queue().submit(cb));
  }
  const uint32_t max_groups = sms * *std::max_element(sw.per_sm.begin(), sw.per_sm.end());
  const uint32_t max_wg = *std::max_element(sw.wg.begin(), sw.wg.end());
  auto sink = dev.createBuffer({uint64_t(max_groups) * max_wg * 4 + 4096, BufferUsage::storage, "sink"});
  auto psink = dev.createBuffer({uint64_t(sms) * 4 + 4096, BufferUsage::storage, "prefetch sink"});
  const uint64_t pbytes =
      sw.copies > 1 ? std::min<uint64_t>(uint64_t(sw.prefetch_mib) << 20, bytes) & ~uint64_t(15) : 0;
  const auto& stream = kc.get("stream_read", {{0, 256}});
  std::vector<BindGroup> pbgs;  // copy c's: the first pbytes of copy c + 1
  for (uint32_t c = 0; pbytes > 0 && c < sw.copies; ++c) {
    BindGroupEntry pe[] = {{0, &w, ((c + 1) % sw.copies) * stride, pbytes}, {1, &psink}};
    pbgs.push_back(dev.createBindGroup(stream, 0, pe));
  }

  // bytes: whole blocks of 144
  const double stream_gbs = stream_read_gbs(dev, kc, w, bytes, sink, sms * 16, reps, sw.copies, stride);
  out["rows_copies"] = sw.copies;
  out["rows_prefetch_bytes"] = pbytes;
  out["rows_m"] = sw.m;
  out["rows_k"] = sw.k;
  out["rows_bytes"] = bytes;
  out["sm_count"] = sms;
  out["stream_read_gb_s"] = stream_gbs;
  if (!json)
    std::printf("device %s, %u SMs; %u x %u Q4_K rows (%.1f MB), %u cop%s; stream_read over them %.0f GB/s\n"
                "   wg per_sm parts pipe header      ms     GB/s  %% of stream_read\n",
                dev.adapter().name.c_str(), sms, sw.m, sw.k, bytes / 1e6, sw.copies, sw.copies == 1 ? "y" : "ies",
                stream_gbs);
  nlohmann::json runs = nlohmann::json::array();
  for (uint32_t wg : sw.wg)
    for (uint32_t per_sm : sw.per_sm)
      for (uint32_t parts : sw.parts)
        for (uint32_t pipe : sw.pipe)
          for (uint32_t header : sw.header) {
            if (wg % sg != 0 || wg > dev.adapter().max_workgroup_invocations || parts < 1 || parts > 4) continue;
            const uint32_t groups = sms * per_sm;
            const auto& p = kc.get("stream_rows", {{0, wg}, {1, parts}, {2, pipe ? 1u : 0u}, {3, header ? 1u : 0u}});
            std::vector<BindGroup> rbgs;
            for (uint32_t c = 0; c < sw.copies; ++c) {
              BindGroupEntry re[] = {{0, &w, c * stride, bytes}, {1, &sink}};
              rbgs.push_back(dev.createBindGroup(p, 0, re));
            }
            auto ms = median(time_gpu(dev, reps, [&](CommandEncoder& enc) {
              for (uint32_t c = 0; c < sw.copies; ++c) {
                if (c > 0) enc.barrier();
                auto pass = enc.beginComputePass();
                pass.setPipeline(p);
                pass.setBindGroup(0, rbgs[c]);
                pass.setPushConstants(bs::kparams::StreamParams{sw.m, nb});
                pass.dispatchWorkgroups(groups);
                if (pbytes > 0) {
                  pass.setPipeline(stream);
                  pass.setBindGroup(0, pbgs[c]);
                  pass.setPushConstants(bs::kparams::StreamParams{uint32_t(pbytes / 16), 1});
                  pass.dispatchWorkgroups(sms);
                }
              }
            }));
            const double gbs = double(bytes) * sw.copies / (ms * 1e-3) / 1e9;
            runs.push_back({{"wg", wg}, {"per_sm", per_sm}, {"parts", parts}, {"pipe", pipe}, {"header", header},
                            {"ms", ms}, {"gb_s", gbs}});
            if (!json)
              std::printf("%5u %6u %5u %4u %6u %7.3f %8.0f %6.1f%%\n", wg, per_sm, parts, pipe, header, ms, gbs,
                          100.0 * gbs / stream_gbs);
          }
  out["rows_sweep"] = runs;
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return 0;
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
  bool rows = false;
  uint32_t rows_m = 131072, rows_k = 4096, rows_copies = 1, rows_prefetch_mib = 0;
  std::vector<uint32_t> rows_wg = {256, 384, 512, 640, 768, 1024}, rows_per_sm = {1, 2}, rows_parts = {1, 2, 4},
                        rows_pipe = {0, 1}, rows_header = {0, 1};
  app.add_flag("--rows", rows, "the Q4_K matvec-shaped read sweep (stream_rows.comp) instead of the sections above");
  app.add_option("--rows-m", rows_m, "--rows: matrix rows (even)")->check(CLI::Range(2u, 1u << 24));
  app.add_option("--rows-k", rows_k, "--rows: matrix columns (a multiple of 256)")->check(CLI::Range(256u, 1u << 20));
  app.add_option("--rows-copies", rows_copies,
                 "--rows: copies of the matrix, swept in turn with a barrier between (one phase's size, from memory)")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--rows-prefetch-mib", rows_prefetch_mib,
                 "--rows with --rows-copies > 1: stream_read the next copy's first MiB beside each copy's dispatch")
      ->check(CLI::Range(0u, 4096u));
  app.add_option("--rows-wg", rows_wg, "--rows: workgroup widths (multiples of the subgroup size)")->delimiter(',');
  app.add_option("--rows-per-sm", rows_per_sm, "--rows: workgroups a multiprocessor (times the SM count)")
      ->delimiter(',');
  app.add_option("--rows-parts", rows_parts, "--rows: Q4_K parts a lane a step (1-4)")->delimiter(',');
  app.add_option("--rows-pipe", rows_pipe, "--rows: PIPE values (0, 1)")->delimiter(',');
  app.add_option("--rows-header", rows_header, "--rows: HEADER values (0, 1)")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  Device dev(-1, 0);
  KernelCache kc(dev);
  nlohmann::json out;
  out["device"] = dev.adapter().name;
  out["driver"] = dev.adapter().driver;
  if (rows) return rows_sweep(dev, kc, out, json, reps,
                              {rows_m, rows_k, rows_copies, rows_prefetch_mib, rows_wg, rows_per_sm, rows_parts,
                               rows_pipe, rows_header});

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
  uint64_t range = std::min<uint64_t>(bytes, dev.maxBindingRange() & ~uint64_t(15));
  double read_gbs = stream_read_gbs(dev, kc, src, range, partial, 132 * 16, reps);
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
