// blueshift synth --config CONFIG.json OUT_DIR [--seed S] [--dtype bf16|f16]: a random-weight HF
// checkpoint for tests and benchmarks.
#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "rdrr/synth.h"
#include "runtime/base/error.h"
#include "runtime/base/progress.h"
#include "runtime/tokenizer/trainer.h"
#include "rdrr/hf_config.h"

namespace {

struct Args {
  std::string config, out, dtype = "bf16", tokenizer;
  uint64_t seed = 0;
  int threads = 0;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--config", a->config, "HF config.json of a supported architecture")->required();
  app.add_option("OUT_DIR", a->out, "directory to write the checkpoint into")->required();
  app.add_option("--seed", a->seed, "random seed")->capture_default_str();
  app.add_option("--dtype", a->dtype, "bf16 | f16")->capture_default_str();
  app.add_option("--tokenizer", a->tokenizer,
                 "tokenizer.json to include (its tokenizer_config.json too, if beside it), or 'builtin' for a "
                 "byte-level BPE blueshift trains on its own corpus, sized to the config's vocabulary");
  app.add_option("--threads", a->threads, "worker threads (0 = all cores)");
  app.callback([a] {
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

bs::cli::Command synth_cmd{"synth", "Write a random-weight HF checkpoint for a config (tests, benchmarks)", setup};

}  // namespace
