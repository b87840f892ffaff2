// blueshift convert HF_DIR OUT_DIR --quant f16|q8_0|q4_k_m|mxfp4 [--hash sha256|blake3]: safetensors checkpoint ->
// RDRR. blueshift convert MODEL.gguf OUT_DIR: llama.cpp's GGUF -> RDRR, tensors keeping their types
// (gguf_import.h).
#include <cstdio>

#include "cli/command.h"
#include "rdrr/convert.h"
#include "rdrr/gguf_import.h"
#include "runtime/base/error.h"
#include "runtime/base/progress.h"

namespace {

struct Args {
  std::string hf_dir, out_dir, quant = "q4_k_m", hash = "sha256";
  double shard_mib = 64, min_saving_pct = 5;
  int zstd_level = 3;
  bool no_compress = false, force = false, json = false, keep_partial = false;
  int threads = 0;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option(
         "HF_DIR", a->hf_dir,
         "Hugging Face checkpoint directory (config.json + safetensors), or a GGUF file (llama.cpp's)")
      ->required();
  app.add_option("OUT_DIR", a->out_dir, "RDRR model directory to create")->required();
  app.add_option("--quant", a->quant,
                 "f16 | q8_0 | q4_k_m | mxfp4 (MoE experts MXFP4, the rest F16; not for a GGUF: its tensors keep their types)")
      ->capture_default_str();
  app.add_option("--shard-size", a->shard_mib, "raw shard size in MiB")->capture_default_str();
  app.add_option("--zstd-level", a->zstd_level, "zstd level (1 fastest .. 19)")->capture_default_str();
  app.add_flag("--no-compress", a->no_compress, "write plain shard_XXXXX.bin files (DOPPLER style)");
  app.add_option(
         "--zstd-min-saving", a->min_saving_pct,
         "write a shard plain where zstd saves less than this % of it (0: plain only where zstd grows it)")
      ->capture_default_str();
  app.add_option("--hash", a->hash, "shard hash written to the manifest's hashAlgorithm: sha256 | blake3")
      ->capture_default_str();
  app.add_option("--threads", a->threads, "worker threads (0 = all cores)")->capture_default_str();
  app.add_flag("--force", a->force, "replace OUT_DIR if it exists");
  app.add_flag(
      "--keep-partial", a->keep_partial,
      "report .OUT_DIR.partial-* directories left by an interrupted convert instead of removing them");
  app.add_flag("--json", a->json, "print a JSON summary");
  app.callback([a, &app] {
    bs::ConvertOptions o;
    const bool gguf = bs::is_gguf_file(a->hf_dir);
    if (gguf && app.count("--quant"))
      bs::fail_kind(bs::ErrorKind::usage,
                    "--quant does not apply to a GGUF input: its tensors keep their types");
    o.quant = bs::parse_quant_mode(a->quant);
    if (!(a->shard_mib > 0) || a->shard_mib > 4096)
      bs::fail_kind(bs::ErrorKind::usage, "--shard-size: expected (0, 4096] MiB, got {}", a->shard_mib);
    o.shards.shard_size = uint64_t(a->shard_mib * 1048576.0) / 256 * 256;
    o.shards.zstd_level = a->zstd_level;
    o.shards.compress = !a->no_compress;
    if (!(a->min_saving_pct >= 0 && a->min_saving_pct < 100))
      bs::fail_kind(bs::ErrorKind::usage, "--zstd-min-saving: expected [0, 100) %, got {}",
                    a->min_saving_pct);
    o.shards.min_saving = a->min_saving_pct / 100.0;
    auto hash = bs::parse_hash_algorithm(a->hash);
    if (!hash) bs::fail_kind(bs::ErrorKind::usage, "--hash: expected sha256 or blake3, got '{}'", a->hash);
    o.shards.hash = *hash;
    o.threads = a->threads;
    o.shards.threads = a->threads;
    o.force = a->force;
    o.keep_partial = a->keep_partial;
    bs::ProgressBar bar("convert", 0);
    o.progress = [&bar](uint64_t done, uint64_t total) {
      bar.set_total(total);
      bar.update(done);
    };
    bs::ConvertResult r =
        gguf ? bs::import_gguf(a->hf_dir, a->out_dir, o) : bs::convert_model(a->hf_dir, a->out_dir, o);
    bar.finish();
    uint64_t stored = 0;
    for (auto& s : r.manifest.shards) stored += s.file_size();
    double mbs = double(r.source_bytes) / 1e6 / r.seconds;
    if (a->json) {
      std::printf(
          "{\"out\": \"%s\", \"quantization\": \"%s\", \"tensors\": %zu, \"shards\": %zu, \"source_bytes\": "
          "%llu, "
          "\"raw_bytes\": %llu, \"stored_bytes\": %llu, \"hash_algorithm\": \"%s\", \"seconds\": %.3f, "
          "\"mb_per_s\": %.1f}\n",
          a->out_dir.c_str(), r.manifest.quantization.c_str(), r.manifest.tensors.size(),
          r.manifest.shards.size(), (unsigned long long)r.source_bytes,
          (unsigned long long)r.manifest.total_size, (unsigned long long)stored,
          r.manifest.hash_algorithm.c_str(), r.seconds, mbs);
    } else {
      std::printf(
          "%s: %zu tensors, %s, %zu shards, %.1f MB raw, %.1f MB on disk; %.1f MB of checkpoint in %.2f s "
          "(%.1f MB/s)\n",
          a->out_dir.c_str(), r.manifest.tensors.size(), r.manifest.quantization.c_str(),
          r.manifest.shards.size(), double(r.manifest.total_size) / 1e6, double(stored) / 1e6,
          double(r.source_bytes) / 1e6, r.seconds, mbs);
    }
  });
}

bs::cli::Command convert_cmd{
    "convert", "Convert a Hugging Face safetensors checkpoint, or a GGUF file, to an RDRR model", setup};

}  // namespace
