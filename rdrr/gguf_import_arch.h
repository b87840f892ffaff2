// Internal to the GGUF import (gguf_import.cpp and the family files beside it): reading llama.cpp's metadata
// keys with checks, and the config.json keys each family's GGUF stands for.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "rdrr/gguf.h"

namespace bs::gguf_import {

// The metadata of one file, read with the checks an import needs: a missing key, or one of another type,
// fails naming the file, the key and expected vs actual.
struct Meta {
  const gguf::Header& h;
  const std::string& label;
  std::string arch;  // general.architecture

  const gguf::Value* find(const std::string& key) const { return h.find(key); }
  uint64_t uint(const std::string& key, std::optional<uint64_t> fallback = std::nullopt) const;
  double number(const std::string& key, std::optional<double> fallback = std::nullopt) const;
  static std::string describe(const gguf::Value& v);
};

// Sizes GGUF stores as u32 that config.json wants as positive ints: 1 .. 2^30.
int64_t positive(uint64_t v, const std::string& key, const std::string& label);

// Mixture of experts (llama.cpp's llama with expert_count > 0 for Mixtral, qwen3moe, gpt-oss): puts the
// experts' config.json keys into `c` from {arch}.expert_count, .expert_used_count,
// .expert_feed_forward_length, .expert_gating_func, .expert_weights_norm, and for gpt-oss the sliding
// pattern, biases and the clamped SwiGLU llama.cpp takes from the architecture.
void moe_config(const Meta& m, const std::string& model_type, nlohmann::json& c);

// blueshift's internal leaf (after "blk.N.") for llama.cpp's per-layer MoE tensor `leaf` (after "blk.N."),
// empty when it is none. gate and up experts stored apart (llama.cpp's default) map to the pseudo leaves
// ffn_gate_exps / ffn_up_exps (and *_bias), which the plan joins into blueshift's ffn_gate_up_exps.
std::string_view moe_leaf(std::string_view arch, std::string_view leaf);

}  // namespace bs::gguf_import
