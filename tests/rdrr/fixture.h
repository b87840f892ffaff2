// Small synthetic models for the rdrr tests: a config, a random checkpoint from synth, an RDRR
// conversion with small shards so that every model has several shards and tensors crossing them.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "rdrr/convert.h"
#include "rdrr/synth.h"
#include "tests/rdrr/st_builder.h"

namespace bs::testing {


inline nlohmann::json tiny_config(const std::string& arch, int hidden = 128, int layers = 2, int vocab = 256) {
  nlohmann::json c = {{"model_type", arch},        {"hidden_size", hidden},     {"intermediate_size", 2 * hidden},
                      {"num_hidden_layers", layers}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                      {"head_dim", hidden / 4},    {"vocab_size", vocab},       {"max_position_embeddings", 512},
                      {"rms_norm_eps", 1e-6},      {"eos_token_id", 2},         {"bos_token_id", 1},
                      {"rope_theta", 10000.0},     {"tie_word_embeddings", arch == "gemma3_text"}};
  if (arch == "gemma3_text") {
    c["query_pre_attn_scalar"] = hidden / 4;
    c["sliding_window"] = 16;
    c["hidden_activation"] = "gelu_pytorch_tanh";
  } else {
    c["hidden_act"] = "silu";
  }
  return c;
}

// Writes DIR/hf (a synth checkpoint of `config`) and returns its path.
inline std::filesystem::path make_checkpoint(const std::filesystem::path& dir, const nlohmann::json& config,
                                             uint64_t seed = 7) {
  std::filesystem::create_directories(dir);
  write_file(dir / "config.json", config.dump());
  SynthOptions so;
  so.seed = seed;
  so.threads = 2;
  synth_checkpoint(dir / "config.json", dir / "hf", so);
  return dir / "hf";
}

inline ConvertResult convert_small(const std::filesystem::path& hf, const std::filesystem::path& out, QuantMode q,
                                   uint64_t shard_size = 32 << 10, bool compress = true, double min_saving = 0) {
  ConvertOptions o;
  o.quant = q;
  o.threads = 2;
  o.shards.shard_size = shard_size;
  o.shards.compress = compress;
  o.shards.zstd_level = 3;
  o.shards.min_saving = min_saving;  // 0: tests of the zstd path want every shard zstd shrinks compressed
  return convert_model(hf, out, o);
}

}  // namespace bs::testing
