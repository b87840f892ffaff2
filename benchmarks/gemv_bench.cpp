// bs_gemv_bench: the weight kernels in isolation, timed with GPU timestamps.
//
// For each weight dtype (f16, q8_0, q4k, q6k) and matrix shape [m, k], it fills weights with random
// bytes (no kernel branches on values, so timing does not depend on them), then for every
// (workgroup size, rows per workgroup) pair:
//   isolated: each dispatch between two barriers and two timestamps; the median of --reps;
//   stream:   --reps dispatches back to back with no dependency between them (as Q, K and V are),
//             total time / reps.
// Dispatches rotate over enough copies of the weights to exceed the L2 cache (H100: 50 MB), so
// the figures are DRAM bandwidth, not cache. GB/s counts weight + x + y bytes. A streaming-read probe
// (stream_read) gives the device's measured peak next to the nominal --peak.
//
// --matmul M times the prefill kernels instead (M tokens): µs and TFLOP/s of the scalar matmul and,
// where the device has cooperative matrices, of the tensor-core matmul_cm in each tile shape.
//
// --multi N times serve's batched decode products instead (N sequences): the multi-row matvecs (W decoded
// once for up to 16 rows; --rows is their ROWS): lanes across k (matvec_<dtype>_multi) and across rows of W
// (_multi_lanes, slices of a subgroup's lanes; --wg sizes below 2 slices are left out), beside the batched
// matvec (a workgroup per sequence and row group, BATCH_FIRST): µs, GB/s of the weights once, f32 TFLOP/s;
// and where the device has cooperative matrices the tensor-core kernel (matmul_rows_cm_<dtype>, N <= 32, X in
// f16; --wg / 32 subgroups split k) and, on shapes with more rows than columns (the FFN's gate / up), its
// gated form (two matrices: GB/s and TFLOP/s count both), at k steps of 128 (rowscm_k128) and with 32 rows a
// workgroup (rowscm_r32). --only rowscm,rowscm_k128,rowscm_r32,rowscm_gated,multi,... limits the kernels
// timed.
//
//   bs_gemv_bench [--json] [--reps 50] [--rounds 1] [--dtype q4k,...] [--shape 2048x2048,...] [--wg 64,128]
//   [--rows 1,2,4]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "kernels_glsl/params.h"
#include "runtime/base/dtype.h"
#include "runtime/base/error.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/kernel_cache.h"
#include "runtime/model/model.h"

namespace {

using namespace bs;
using kparams::MatvecParams;

struct Options {
  bool json = false;
  uint32_t reps = 50;
  uint32_t rounds = 1;
  double peak_gb_s = 3000;
  uint32_t matmul_tokens = 0;
  uint32_t multi_tokens = 0;  // --multi N
  std::vector<std::string> only;  // --only: the --multi kernels to time (empty: all)
  bool rows_emulated = false;  // --rows-emulated: matmul_rows_emu_* for rowscm (any device; plumbing checks)
  std::string cm_spv_dir;  // --cm-spv: tensor-core matmul builds from outside the registry, for tuning
  std::string mv_spv_dir;  // --mv-spv: matvec builds from outside the registry (A/B of a kernel change)
  std::vector<std::string> dtypes{"f16", "q8_0", "q4k", "q6k"};
  // Llama-3.2-1B (2048 hidden, 8192 FFN, 128256 vocab), Llama-3.1-8B (4096 hidden, 14336 FFN).
  std::vector<std::string> shapes{"2048x2048",   "8192x2048",  "2048x8192",
                                  "128256x2048", "4096x14336", "14336x4096"};
  std::vector<uint32_t> wgs{32, 64, 128, 256};
  std::vector<uint32_t> rows{1, 2, 4, 8};
};

DType dtype_of(const std::string& s) {
  if (s == "f16") return DType::F16;
  if (s == "q8_0") return DType::Q8_0;
  if (s == "q4k") return DType::Q4_K;
  if (s == "q6k") return DType::Q6_K;
  fail_kind(ErrorKind::usage, "--dtype: unknown weight type '{}' (expected f16, q8_0, q4k, q6k)", s);
}

std::pair<uint32_t, uint32_t> parse_shape(const std::string& s) {
  unsigned m = 0, k = 0;
  if (std::sscanf(s.c_str(), "%ux%u", &m, &k) != 2 || !m || !k)
    fail_kind(ErrorKind::usage, "--shape: '{}' is not MxK (e.g. 2048x8192)", s);
  return {m, k};
}

// The words of a SPIR-V file (--cm-spv, --mv-spv builds).
std::vector<uint32_t> read_spirv(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// A device-local buffer of `bytes` random bytes, uploaded in chunks through one random block.
gpu::Buffer random_buffer(gpu::Device& dev, uint64_t bytes, const std::vector<uint8_t>& block,
                          const char* label) {
  auto b = dev.createBuffer({(bytes + 15) / 16 * 16, gpu::BufferUsage::storage, label});
  for (uint64_t o = 0; o < b.size(); o += block.size())
    dev.queue().writeBuffer(b, o, block.data(), std::min<uint64_t>(block.size(), b.size() - o));
  return b;
}

struct Timing {
  double isolated_us, stream_us;
};

// Times `reps` dispatches of `pipe`, dispatch r using bind group r % groups.size().
template <class Params>
Timing time_dispatches(gpu::Device& dev, const gpu::ComputePipeline& pipe,
                       const std::vector<gpu::BindGroup>& groups, const Params& params, uint32_t gx,
                       uint32_t gy, uint32_t reps) {
  gpu::QuerySet qs(dev, 2 * reps + 2);
  auto record = [&](bool timed) {
    auto enc = dev.createCommandEncoder("gemv_bench");
    if (timed) enc.resetQueries(qs, 0, qs.count());
    auto pass = enc.beginComputePass();
    pass.setPipeline(pipe);
    pass.setPushConstants(params);
    for (uint32_t r = 0; r < reps; ++r) {  // isolated
      enc.barrier();
      if (timed) enc.writeTimestamp(qs, 2 * r);
      pass.setBindGroup(0, groups[r % groups.size()]);
      pass.dispatchWorkgroups(gx, gy);
      enc.barrier();
      if (timed) enc.writeTimestamp(qs, 2 * r + 1);
    }
    if (timed) enc.writeTimestamp(qs, 2 * reps);
    for (uint32_t r = 0; r < reps; ++r) {  // stream
      pass.setBindGroup(0, groups[r % groups.size()]);
      pass.dispatchWorkgroups(gx, gy);
    }
    enc.barrier();
    if (timed) enc.writeTimestamp(qs, 2 * reps + 1);
    return enc.finish();
  };
  auto warm = record(false);
  dev.queue().wait(dev.queue().submit(warm));
  auto cb = record(true);
  dev.queue().wait(dev.queue().submit(cb));
  auto ns = qs.resolve_ns(0, qs.count());
  std::vector<double> iso(reps);
  for (uint32_t r = 0; r < reps; ++r) iso[r] = (ns[2 * r + 1] - ns[2 * r]) * 1e-3;
  return {median(iso), (ns[2 * reps + 1] - ns[2 * reps]) * 1e-3 / reps};
}

// GB/s of the streaming-read probe over a 1 GiB buffer (or the largest binding the device allows).
double measured_peak(gpu::Device& dev, gpu::KernelCache& kc, const std::vector<uint8_t>& block) {
  uint64_t bytes = std::min<uint64_t>(1ull << 30, dev.maxBindingRange() / 16 * 16);
  auto src = random_buffer(dev, bytes, block, "stream src");
  auto dst = dev.createBuffer({4096 * 4, gpu::BufferUsage::storage, "stream dst"});
  const auto& p = kc.get("stream_read", {{0, 256}});
  gpu::BindGroupEntry e[] = {{0, &src}, {1, &dst}};
  std::vector<gpu::BindGroup> g;
  g.push_back(dev.createBindGroup(p, 0, e));
  Timing t = time_dispatches(dev, p, g, kparams::StreamParams{uint32_t(bytes / 16), 1}, 4096, 1, 10);
  return double(bytes) / (t.isolated_us * 1e3);
}

nlohmann::json run_shape(gpu::Device& dev, gpu::KernelCache& kc, const Options& o, DType t,
                         const std::string& dname, uint32_t m, uint32_t k,
                         const std::vector<uint8_t>& block) {
  auto rb = row_bytes(t, k);
  if (!rb) return {{"dtype", dname}, {"m", m}, {"k", k}, {"skipped", "k is not a whole number of blocks"}};
  uint64_t wbytes = gpu_row_bytes(t, k) * m;  // as the GPU holds them (Q6_K blocks padded: dtype.h)
  if (wbytes > dev.maxBindingRange())
    return {{"dtype", dname},
            {"m", m},
            {"k", k},
            {"skipped", "weights exceed one storage binding on this device"}};
  bool mm = o.matmul_tokens > 0, mt = o.multi_tokens > 0;
  uint32_t tokens = mm ? o.matmul_tokens : mt ? o.multi_tokens : 1;
  // Enough copies that the rotation does not fit the L2 cache.
  uint32_t copies = uint32_t(std::clamp<uint64_t>((256ull << 20) / wbytes + 1, 1, 16));
  std::vector<gpu::Buffer> ws, ys;
  for (uint32_t c = 0; c < copies; ++c) ws.push_back(random_buffer(dev, wbytes, block, "weights"));
  auto x = random_buffer(dev, uint64_t(tokens) * k * 4, block, "x");
  // Random bytes as f32 x can be NaN; timing does not care, but keep x finite for sanity.
  dev.queue().writeBuffer(x, 0, std::vector<float>(size_t(tokens) * k, 0.5f).data(),
                          uint64_t(tokens) * k * 4);
  for (uint32_t r = 0; r < o.reps; ++r)
    ys.push_back(dev.createBuffer({uint64_t(tokens) * m * 4, gpu::BufferUsage::storage, "y"}));
  double bytes = double(wbytes) + 4.0 * tokens * (k + m);
  MatvecParams params{m, k, tokens, 0};

  std::deque<gpu::ShaderModule> spv_modules;
  std::deque<gpu::ComputePipeline> spv_pipes;
  // Every configuration is registered first, then timed in --rounds interleaved passes keeping each
  // one's best median: clocks and neighbours drift over a run, and one pass over a long list of
  // configurations showed the same kernel 4x apart.
  // form: the plain binding set (W, x f32, y), or the tensor-core row kernel's (X in f16 slabs; gated: a
  // second matrix at binding 4 and y in f16).
  // q8x: matvec_q4k_i8's binding set (x quantized, int_dot.glsl; timing does not depend on its values).
  enum class Form { plain, rows_cm, rows_cm_gated, q8x };
  struct Trial {
    const gpu::ComputePipeline* p;
    uint32_t gx, gy;
    nlohmann::json cfg;
    Form form = Form::plain;
  };
  std::vector<Trial> trials;
  auto wanted = [&](const std::string& kernel) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), kernel) != o.only.end();
  };
  auto try_config = [&](const gpu::ComputePipeline& p, uint32_t gx, uint32_t gy, nlohmann::json cfg,
                        Form form = Form::plain) {
    if (!mt || wanted(cfg["kernel"])) trials.push_back({&p, gx, gy, std::move(cfg), form});
  };
  // The tensor-core row kernel's X: f16 0.5 in 16-row slabs; its gated output: f16.
  const uint64_t slab = (uint64_t(tokens) + 15) / 16 * 16;
  gpu::Buffer xq = random_buffer(dev, uint64_t(tokens) * ((k + 255) / 256) * 640, block, "x q8");
  gpu::Buffer x16 = dev.createBuffer({slab * k * 2, gpu::BufferUsage::storage, "x f16"});
  dev.queue().writeBuffer(x16, 0, std::vector<uint16_t>(slab * k, 0x3800).data(), slab * k * 2);
  if (mm) {
    try_config(kc.get("matmul_" + dname), (m + 63) / 64, (tokens + 63) / 64, {{"kernel", "matmul"}, {"tile", "64x64"}});
    // The tensor-core kernel in each tile variants.cmake declares, where the device has it; "planned"
    // marks the one the model records for this shape (plan_prefill_matmul).
    std::string planned = model::plan_prefill_matmul(kc, t, m, k, tokens).kernel;
    for (const model::CoopmatTile& c : model::coopmat_tiles()) {
      std::string name = "matmul_cm_" + dname + c.suffix;
      if (kc.has(name) && k % c.bk == 0)
        try_config(kc.get(name), (m + c.bn - 1) / c.bn, (tokens + c.bm - 1) / c.bm,
                   {{"kernel", "matmul_cm"}, {"tile", c.label()}, {"planned", name == planned}});
    }
    // Tuning builds: DIR/<dtype>.<label>-<BM>x<BN>.spv (the tile sets the dispatch; a label ending in _tx: built
    // with CM_TOKENS_X, token tiles along x).
    if (!o.cm_spv_dir.empty() && kc.has("matmul_cm_" + dname))
      for (const auto& f : std::filesystem::directory_iterator(o.cm_spv_dir)) {
        std::string name = f.path().stem().string();
        unsigned bm = 0, bn = 0;
        size_t dash = name.rfind('-');
        if (!name.starts_with(dname + ".") || f.path().extension() != ".spv" || dash == std::string::npos ||
            std::sscanf(name.c_str() + dash + 1, "%ux%u", &bm, &bn) != 2 || !bm || !bn)
          continue;
        auto& mod = spv_modules.emplace_back(dev.createShaderModule(read_spirv(f.path()), name));
        auto& pipe = spv_pipes.emplace_back(dev.createComputePipeline({&mod, {}, 0, name}));
        const std::string label = name.substr(dname.size() + 1, dash - dname.size() - 1);
        const uint32_t gx = (m + bn - 1) / bn, gy = (tokens + bm - 1) / bm;
        if (label.ends_with("_tx"))  // built with CM_TOKENS_X: token tiles along x
          try_config(pipe, gy, gx, {{"kernel", label}, {"tile", fmt::format("{}x{}", bm, bn)}});
        else
          try_config(pipe, gx, gy, {{"kernel", label}, {"tile", fmt::format("{}x{}", bm, bn)}});
      }
  } else if (mt) {
    // The host's choice of NB (forward_batch.cpp): the next power of 2 of N up to 16; shapes whose
    // reduction would not fit the device's shared memory are left out.
    uint32_t nb = 1;
    while (nb < tokens && nb < 16) nb *= 2;
    for (uint32_t wg : o.wgs)
      for (uint32_t rows : o.rows) {
        if (((uint64_t(nb) * rows + nb) | 1) * (wg + 1) * 4 <= dev.adapter().max_shared_memory)
          try_config(kc.get("matvec_" + dname + "_multi", {{0, wg}, {1, rows}, {2, nb}}), (m + rows - 1) / rows,
                     (tokens + nb - 1) / nb, {{"kernel", "multi"}, {"wg", wg}, {"rows", rows}});
        if ((m + rows - 1) / rows <= 65535)
          try_config(kc.get("matvec_" + dname, {{0, wg}, {1, rows}, {2, 1}}), tokens, (m + rows - 1) / rows,
                     {{"kernel", "batched"}, {"wg", wg}, {"rows", rows}});
        struct RowsForm {
          bool gated;
          uint32_t bk;
          int r32;
          const char* name;
        };
        for (RowsForm f : {RowsForm{false, 64, 0, "rowscm"}, RowsForm{false, 128, 0, "rowscm_k128"},
                           RowsForm{false, 64, 1, "rowscm_r32"}, RowsForm{true, 64, 0, "rowscm_gated"}}) {
          // Once per wg; gated on FFN shapes only (more rows than columns, not a head).
          if ((f.gated && (m <= k || m > 65536)) || rows != o.rows.front() || wg % 32 != 0) continue;
          model::RowsCmPlan rp =
              model::plan_rows_cm(kc, t, m, k, tokens, f.gated, dev.adapter().max_shared_memory, wg / 32,
                                  o.rows_emulated, f.bk, f.r32);
          if (!rp.kernel.empty() && rp.workgroup == wg && rp.bk == f.bk &&
              (rp.rows_per_group == 32) == (f.r32 > 0))
            try_config(kc.get(rp.kernel, {{0, wg}}), rp.groups_x, 1,
                       {{"kernel", f.name}, {"wg", wg}, {"rows", rp.rows_per_group}},
                       f.gated ? Form::rows_cm_gated : Form::rows_cm);
        }
        const uint32_t lr = dev.subgroupSize() >= 8 && dev.subgroupSize() <= 64 ? dev.subgroupSize() : 32;
        if (wg >= 2 * lr && wg % lr == 0 && uint64_t(wg - lr) * nb * rows * 4 + 4 <= dev.adapter().max_shared_memory)
          try_config(kc.get("matvec_" + dname + "_multi_lanes", {{0, wg}, {1, rows}, {2, nb}, {3, lr}}),
                     (m + lr * rows - 1) / (lr * rows), (tokens + nb - 1) / nb, {{"kernel", "lanes"}, {"wg", wg}, {"rows", rows}});
      }
  } else {
    for (uint32_t wg : o.wgs)
      for (uint32_t rows : o.rows) {
        try_config(kc.get("matvec_" + dname, {{0, wg}, {1, rows}}), (m + rows - 1) / rows, 1,
                   {{"kernel", "registry"}, {"wg", wg}, {"rows", rows}});
        // Q4_K on integer dot products (x pre-quantized; the quantize_x_q8 dispatch is not counted), with the
        // high nibbles in place (i8mx, mixed signedness), and the single-level form (a speed bound: x to ~1/254 of its half's largest value, not for use).
        for (const char* v : {"i8", "i8mx", "i8_1level"})
          if (t == DType::Q4_K && kc.has(std::string("matvec_q4k_") + v))
            try_config(kc.get(std::string("matvec_q4k_") + v, {{0, wg}, {1, rows}}), (m + rows - 1) / rows, 1,
                       {{"kernel", v}, {"wg", wg}, {"rows", rows}}, Form::q8x);
      }
    // DIR/<dtype>.<label>.spv: the same sweep on each outside build (same bindings and constants).
    if (!o.mv_spv_dir.empty())
      for (const auto& f : std::filesystem::directory_iterator(o.mv_spv_dir)) {
        std::string name = f.path().stem().string();
        if (!name.starts_with(dname + ".") || f.path().extension() != ".spv") continue;
        auto& mod = spv_modules.emplace_back(dev.createShaderModule(read_spirv(f.path()), name));
        for (uint32_t wg : o.wgs)
          for (uint32_t rows : o.rows) {
            auto& pipe = spv_pipes.emplace_back(dev.createComputePipeline({&mod, {{0, wg}, {1, rows}}, 0, name}));
            try_config(pipe, (m + rows - 1) / rows, 1, {{"kernel", name.substr(dname.size() + 1)}, {"wg", wg}, {"rows", rows}});
          }
      }
  }
  for (uint32_t round = 0; round < o.rounds; ++round) {
    for (auto& tr : trials) {
      std::vector<gpu::BindGroup> groups;
      for (uint32_t r = 0; r < o.reps; ++r) {
        std::vector<gpu::BindGroupEntry> e = {{0, &ws[r % copies]}, {1, &x}, {2, &ys[r]}};
        if (tr.form == Form::rows_cm || tr.form == Form::rows_cm_gated) e[1] = {1, &x16};
        if (tr.form == Form::q8x) e[1] = {1, &xq};
        if (tr.form == Form::rows_cm_gated)
          e.push_back({4, &ws[(r + 1) % copies]});  // y in f16: half of ys[r]
        groups.push_back(dev.createBindGroup(*tr.p, 0, e));
      }
      const bool gated = tr.form == Form::rows_cm_gated;
      Timing tm = gated ? time_dispatches(dev, *tr.p, groups,
                                          kparams::MatvecNormParams{m, k, tokens, 0, 0.0f, 0.0f, 0, 0}, tr.gx,
                                          tr.gy, o.reps)
                        : time_dispatches(dev, *tr.p, groups, params, tr.gx, tr.gy, o.reps);
      auto& cfg = tr.cfg;
      if (round > 0 && cfg["median_us"].get<double>() <= tm.isolated_us) continue;
      cfg["median_us"] = tm.isolated_us;
      cfg["stream_us"] = tm.stream_us;
      if (mm) {
        cfg["tflop_s"] = 2.0 * tokens * m * k / (tm.isolated_us * 1e6);
      } else {
        const double b = gated ? bytes + double(wbytes) : bytes, matrices = gated ? 2.0 : 1.0;
        cfg["gb_s"] = b / (tm.isolated_us * 1e3);
        cfg["stream_gb_s"] = b / (tm.stream_us * 1e3);
        cfg["pct_of_peak"] = 100.0 * b / (tm.isolated_us * 1e3) / o.peak_gb_s;
        if (mt) cfg["tflop_s"] = matrices * 2.0 * tokens * m * k / (tm.isolated_us * 1e6);
      }
    }
  }
  nlohmann::json configs = nlohmann::json::array();
  nlohmann::json best;
  for (const auto& tr : trials) {
    if (best.is_null() || tr.cfg["median_us"].get<double>() < best["median_us"].get<double>()) best = tr.cfg;
    configs.push_back(tr.cfg);
  }
  return {{"dtype", dname},         {"m", m},           {"k", k},       {"tokens", tokens},
          {"weight_bytes", wbytes}, {"copies", copies}, {"best", best}, {"configs", configs}};
}

void print_row(const nlohmann::json& r, bool mm) {
  if (r.contains("skipped")) {
    fmt::print("{:<5} {:>6}x{:<6} skipped: {}\n", r["dtype"].get<std::string>(), r["m"].get<uint32_t>(),
               r["k"].get<uint32_t>(), r["skipped"].get<std::string>());
    return;
  }
  const auto& b = r["best"];
  if (mm) {  // every kernel and tile: the scalar baseline next to the tensor-core tiles
    for (const auto& c : r["configs"])
      fmt::print("{:<5} {:>6}x{:<6} M={:<5} {:<26} {:>7} {:>9.1f} us {:>7.2f} TFLOP/s   stream {:>9.1f} us{}{}\n",
                 r["dtype"].get<std::string>(), r["m"].get<uint32_t>(), r["k"].get<uint32_t>(),
                 r["tokens"].get<uint32_t>(), c["kernel"].get<std::string>(), c["tile"].get<std::string>(),
                 c["median_us"].get<double>(), c["tflop_s"].get<double>(), c["stream_us"].get<double>(),
                 c == b ? "  (best)" : "", c.value("planned", false) ? "  (planned)" : "");
  } else {  // the best configuration of each kernel (by isolated time), and the best back to back
    std::map<std::string, nlohmann::json> best_of, best_stream_of;
    for (const auto& c : r["configs"]) {
      auto& bi = best_of[c["kernel"]];
      if (bi.is_null() || c["median_us"].get<double>() < bi["median_us"].get<double>()) bi = c;
      auto& bs = best_stream_of[c["kernel"]];
      if (bs.is_null() || c["stream_us"].get<double>() < bs["stream_us"].get<double>()) bs = c;
    }
    for (const auto& [kernel, c] : best_of) {
      const auto& s = best_stream_of[kernel];
      fmt::print(
          "{:<5} {:>6}x{:<6} {:>8.1f} MB {:<12} wg={:<3} rows={:<2} {:>8.1f} us {:>7.0f} GB/s {:>5.1f}%   "
          "stream "
          "{:>8.1f} us {:>7.0f} GB/s (wg={} rows={})\n",
          r["dtype"].get<std::string>(), r["m"].get<uint32_t>(), r["k"].get<uint32_t>(),
          r["weight_bytes"].get<double>() / 1e6, kernel, c["wg"].get<uint32_t>(), c["rows"].get<uint32_t>(),
          c["median_us"].get<double>(), c["gb_s"].get<double>(), c["pct_of_peak"].get<double>(),
          s["stream_us"].get<double>(), s["stream_gb_s"].get<double>(), s["wg"].get<uint32_t>(),
          s["rows"].get<uint32_t>());
      if (c.contains("tflop_s"))
        fmt::print("      N={} sequences: {:.2f} TFLOP/s ({})\n", r["tokens"].get<uint32_t>(),
                   c["tflop_s"].get<double>(),
                   kernel.starts_with("rowscm") ? "f16 on tensor cores" : "f32 FMA");
    }
  }
}

int run(const Options& o) {
  gpu::Device dev;
  gpu::KernelCache kc(dev);
  std::vector<uint8_t> block(16u << 20);
  std::mt19937_64 rng(1234);
  for (size_t i = 0; i < block.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(block.data() + i, &v, 8);
  }
  double peak = measured_peak(dev, kc, block);
  bool mm = o.matmul_tokens > 0;
  if (!o.json)
    fmt::print("{} ({})\nstream_read: {:.0f} GB/s measured; percentages are of --peak {:.0f} GB/s; {} reps\n",
               dev.adapter().name, dev.adapter().driver, peak, o.peak_gb_s, o.reps);
  std::fflush(stdout);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& dn : o.dtypes) {
    DType t = dtype_of(dn);
    for (const auto& s : o.shapes) {
      auto [m, k] = parse_shape(s);
      auto r = run_shape(dev, kc, o, t, dn, m, k, block);
      if (!o.json) {
        print_row(r, mm);
        std::fflush(stdout);
      }
      results.push_back(std::move(r));
    }
  }
  if (o.json) {
    nlohmann::json out{{"device", dev.adapter().name},
                       {"driver", dev.adapter().driver},
                       {"mode", mm ? "matmul" : "matvec"},
                       {"reps", o.reps},
                       {"peak_gb_s", o.peak_gb_s},
                       {"measured_stream_gb_s", peak},
                       {"results", results}};
    fmt::print("{}\n", out.dump(1));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Times the weight kernels (matvec / matmul) for each dtype and shape with GPU timestamps"};
  app.add_flag("--json", o.json, "print one JSON object");
  app.add_option("--reps", o.reps, "dispatches timed per configuration")->check(CLI::Range(1u, 10000u));
  app.add_option("--rounds", o.rounds, "interleaved passes over the configurations (best of)")->check(CLI::Range(1u, 100u));
  app.add_option("--peak", o.peak_gb_s, "nominal bandwidth for the percentage column (GB/s)");
  app.add_option("--dtype", o.dtypes, "weight types: f16, q8_0, q4k, q6k")->delimiter(',');
  app.add_option("--shape", o.shapes, "matrix shapes MxK (rows x columns)")->delimiter(',');
  app.add_option("--wg", o.wgs, "workgroup sizes to try")->delimiter(',');
  app.add_option("--rows", o.rows, "rows per workgroup to try")->delimiter(',');
  app.add_option("--matmul", o.matmul_tokens, "time the prefill matmul with this many tokens instead");
  app.add_option("--multi", o.multi_tokens,
                 "time serve's batched decode products for this many sequences instead (multi-row vs batched matvec)");
  app.add_option("--only", o.only,
                 "with --multi: time only these kernels (rowscm, rowscm_k128, rowscm_r32, rowscm_gated, "
                 "multi, batched, lanes)")
      ->delimiter(',');
  app.add_flag("--rows-emulated", o.rows_emulated,
               "with --multi: time the rowscm kernels' emulation (matmul_rows_emu_*: any device, to check "
               "the plumbing)");
  app.add_option("--mv-spv", o.mv_spv_dir,
                 "also time DIR/<dtype>.<label>.spv (matvec builds from outside the registry, same sweep)");
  app.add_option("--cm-spv", o.cm_spv_dir,
                 "with --matmul: also time DIR/<dtype>.<label>-<BM>x<BN>.spv (tensor-core matmul builds for tuning)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const bs::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return int(e.kind());
  }
}
