// blueshift synth --config CONFIG.json OUT_DIR [--seed S] [--dtype bf16|f16]: a random-weight HF
// checkpoint for tests and benchmarks.
// blueshift synth --like MANIFEST.json OUT_DIR [--seed S] [--force] [--json]: a random-weight RDRR
// bundle at the exact shape of a DOPPLER manifest (rdrr/synth_like.h).
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "rdrr/synth.h"
#include "rdrr/synth_like.h"
#include "runtime/base/error.h"
#include "runtime/base/progress.h"
#include "runtime/tokenizer/trainer.h"
#include "rdrr/hf_config.h"

namespace {

struct Args {
  std::string config, like, out, dtype = "bf16", tokenizer;
  uint64_t seed = 0;
  int threads = 0;
  bool force = false, json = false, dry_run = false, keep_partial = false;
};

void run_like(const Args& a) {
  bs::SynthLikeOptions o;
  o.seed = a.seed;
  o.threads = a.threads;
  o.force = a.force;
  o.keep_partial = a.keep_partial;
  o.dry_run = a.dry_run;
  bs::ProgressBar bar("synth", 0);
  o.progress = [&bar](uint64_t done, uint64_t total) {
    bar.set_total(total);
    bar.update(done);
  };
  bs::SynthLikeResult r = bs::synth_like(a.like, a.out, o);
  bar.finish();
  if (a.dry_run && !a.json) {
    std::printf("%s: would write %llu shards, %llu tensors, %.1f MB (%s, %llu block Merkle roots)\n", a.like.c_str(),
                (unsigned long long)r.shards, (unsigned long long)r.tensors, double(r.bytes) / 1e6,
                r.hash_algorithm.c_str(), (unsigned long long)r.merkle_roots);
    return;
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"out", a.out},          {"like", a.like},
                                {"seed", a.seed},        {"shards", r.shards},
                                {"tensors", r.tensors},  {"bytes", r.bytes},
                                {"hashAlgorithm", r.hash_algorithm}, {"merkleRoots", r.merkle_roots},
                                {"tokenizer", r.tokenizer}, {"seconds", r.seconds}, {"dryRun", a.dry_run}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%s: %llu shards, %llu tensors, %.1f MB like %s (%s%s%s) in %.2f s (%.0f MB/s)\n", a.out.c_str(),
              (unsigned long long)r.shards, (unsigned long long)r.tensors, double(r.bytes) / 1e6, a.like.c_str(),
              r.hash_algorithm.c_str(), r.merkle_roots ? ", block Merkle roots" : "",
              r.tokenizer ? ", tokenizer copied" : "", r.seconds, double(r.bytes) / 1e6 / r.seconds);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* config = app.add_option("--config", a->config, "HF config.json of a supported architecture");
  auto* like = app.add_option("--like", a->like,
                              "a DOPPLER manifest.json (or its directory): write an RDRR bundle of random weights with "
                              "its exact tensors, shards and metadata, hashes recomputed");
  config->excludes(like);
  app.add_option("OUT_DIR", a->out, "directory to write the checkpoint (or, with --like, the RDRR bundle) into")
      ->required();
  app.add_option("--seed", a->seed, "random seed")->capture_default_str();
  app.add_option("--dtype", a->dtype, "bf16 | f16")->capture_default_str();
  app.add_option("--tokenizer", a->tokenizer,
                 "tokenizer.json to include (its tokenizer_config.json too, if beside it), or 'builtin' for a "
                 "byte-level BPE blueshift trains on its own corpus, sized to the config's vocabulary");
  app.add_option("--threads", a->threads, "worker threads (0 = all cores)");
  app.add_flag("--force", a->force, "with --like: replace OUT_DIR if it exists");
  app.add_flag("--keep-partial", a->keep_partial,
               "with --like: report .OUT_DIR.partial-* directories left by an interrupted run instead of removing them");
  app.add_flag("--json", a->json, "with --like: print a JSON summary");
  app.add_flag("--dry-run", a->dry_run, "with --like: check the manifest (every tensor's dtype, layout, size and place) "
               "and say what would be written; write nothing");
  app.callback([a, config, like, &app] {
    if (like->count()) {
      if (app.count("--dtype") || app.count("--tokenizer"))
        bs::fail_kind(bs::ErrorKind::usage, "--dtype and --tokenizer do not apply to --like (it keeps the manifest's)");
      return run_like(*a);
    }
    if (!config->count()) bs::fail_kind(bs::ErrorKind::usage, "synth: --config or --like is required");
    if (a->force || a->json || a->dry_run || a->keep_partial)
      bs::fail_kind(bs::ErrorKind::usage, "--force, --json, --dry-run and --keep-partial apply to --like only");
    bs::SynthOptions o;
    o.seed = a->seed;
    if (a->dtype == "bf16") o.dtype = bs::DType::BF16;
    else if (a->dtype == "f16") o.dtype = bs::DType::F16;
    else bs::fail_kind(bs::ErrorKind::usage, "--dtype: expected bf16 or f16, got '{}'", a->dtype);
    o.threads = a->threads;
    bool builtin = a->tokenizer == "builtin";
    o.tokenizer = builtin ? "" : a->tokenizer;
    bs::ProgressBar bar("synth", 0);
    o.progress = [&bar](uint64_t done, uint64_t total) {
      bar.set_total(total);
      bar.update(done);
    };
    auto t0 = std::chrono::steady_clock::now();
    uint64_t bytes = bs::synth_checkpoint(a->config, a->out, o);
    bar.finish();
    if (builtin) {
      int vocab = bs::read_json_file(a->config).value("vocab_size", 0);
      if (const auto& tc = bs::read_json_file(a->config); tc.contains("text_config")) vocab = tc["text_config"].value("vocab_size", vocab);
      bs::tok::write_builtin_tokenizer(a->out, vocab);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %.1f MB of %s weights in %.2f s (%.0f MB/s)\n", a->out.c_str(), double(bytes) / 1e6,
                a->dtype.c_str(), s, double(bytes) / 1e6 / s);
  });
}

bs::cli::Command synth_cmd{"synth",
                           "Write a random-weight HF checkpoint for a config, or an RDRR bundle like a DOPPLER "
                           "manifest (tests, benchmarks)",
                           setup};

}  // namespace
