// blueshift verify MODEL_DIR [--json]: re-hash every shard against the manifest. Exit 0 when all match;
// otherwise every bad shard is named with expected vs actual, and the exit code is 4 (integrity).
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "runtime/base/error.h"
#include "runtime/base/progress.h"
#include "sharding/reader.h"

namespace {

struct Args {
  std::string dir;
  bool json = false, quick = false, loader = false;
  int threads = 0;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("MODEL_DIR", a->dir, "RDRR model directory")->required();
  app.add_flag("--json", a->json, "print the result as JSON");
  app.add_flag("--quick", a->quick, "check stored files only (size and storedHash); do not decompress");
  app.add_option("--threads", a->threads, "worker threads (0 = all cores)");
  app.add_flag("--loader", a->loader,
               "check through the model loader (verify + decompress + deliver every tensor, stop at the first "
               "error) and report its throughput");
  app.callback([a] {
    bs::Manifest m = bs::read_manifest(a->dir);
    if (a->loader) {
      bs::ProgressBar bar("load", m.total_size);
      bs::LoadOptions o;
      o.threads = a->threads;
      o.progress = [&bar](uint64_t done, uint64_t) { bar.update(done); };
      uint64_t tensors = 0, checksum = 0;
      auto t0 = std::chrono::steady_clock::now();
      bs::load_tensors(m, a->dir, o, [&](const bs::TensorEntry&, std::span<const std::byte> b) {
        ++tensors;
        if (!b.empty()) checksum += uint64_t(b[0]) + uint64_t(b[b.size() - 1]);  // touch the bytes
      });
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      bar.finish();
      std::printf("%s: OK via loader, %llu tensors, %.1f MB raw in %.2f s (%.2f GB/s)\n", a->dir.c_str(),
                  (unsigned long long)tensors, double(m.total_size) / 1e6, s, double(m.total_size) / 1e9 / s);
      (void)checksum;
      return;
    }
    bs::ProgressBar bar("verify", m.total_size);
    bs::LoadOptions o;
    o.threads = a->threads;
    o.progress = [&bar](uint64_t done, uint64_t) { bar.update(done); };
    auto problems = bs::verify_shards(m, a->dir, o, !a->quick);
    bar.finish();
    if (a->json) {
      nlohmann::ordered_json j;
      j["ok"] = problems.empty();
      j["shards"] = m.shards.size();
      j["bytes"] = m.total_size;
      auto& bad = j["problems"] = nlohmann::ordered_json::array();
      for (auto& p : problems)
        bad.push_back({{"index", p.index}, {"file", p.filename}, {"check", p.check}, {"expected", p.expected},
                       {"actual", p.actual}, {"message", p.message}});
      std::printf("%s\n", j.dump(2).c_str());
    } else if (problems.empty()) {
      std::printf("%s: OK, %zu shards, %.1f MB verified (sha256%s)\n", a->dir.c_str(), m.shards.size(),
                  double(m.total_size) / 1e6, a->quick ? ", stored files only" : "");
    } else {
      for (auto& p : problems) std::fprintf(stderr, "BAD %s\n", p.message.c_str());
      std::fprintf(stderr, "%s: %zu of %zu shards failed verification\n", a->dir.c_str(), problems.size(),
                   m.shards.size());
    }
    if (!problems.empty()) bs::cli::set_exit_code(int(bs::ErrorKind::integrity));
  });
}

bs::cli::Command verify_cmd{"verify", "Re-hash every shard of an RDRR model against its manifest", setup};

}  // namespace
