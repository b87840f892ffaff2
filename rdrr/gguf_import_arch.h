// Internal to the GGUF import (gguf_import.cpp and the family files beside it): reading llama.cpp's metadata
// keys with checks, and the config.json keys each family's GGUF stands for.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rdrr/gguf.h"
#include "rdrr/gguf_dequant.h"
#include "rdrr/gguf_import.h"
#include "runtime/model/config.h"

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

// blueshift's internal name of llama.cpp's tensor `name` in a file of architecture `arch`
// (gguf_import_fields.cpp); empty when it is none (or its layer index is not a plain decimal below n_layers).
std::string internal_name(std::string_view name, uint64_t n_layers, std::string_view arch);
// Whether `name` is a tensor of a block in [n_layers, n_blocks): Qwen 3.5's multi-token-prediction blocks.
bool mtp_block(std::string_view name, int64_t n_layers, int64_t n_blocks);
// A per-layer count array (LFM2's head_count_kv): n_layers integers, the non-zero ones all equal.
std::vector<int64_t> per_layer_counts(const gguf::Value& v, uint64_t n_layers, const std::string& key,
                                      const std::string& label);
// Phi-3 128k's LongRoPE factor tensors and keys as HF's rope_scaling in `c`; false when the file has none.
bool read_longrope(const Meta& m, const gguf::Header& h, std::span<const std::byte> file, nlohmann::json& c,
                   int64_t head_dim);

// A tensor's bytes as stored (gguf_import_bytes.cpp): rows converted to F32 / F16 where the type changes, the
// converter's transforms undone. Returns `in` itself when nothing changes (no copy of the mapped file).
std::span<const std::byte> stored_bytes(const GgufImportPlan::Tensor& t, std::span<const std::byte> in,
                                        int32_t head_dim, std::vector<std::byte>& out,
                                        std::vector<std::byte>& dequantized, gguf::ConversionLoss& loss);

// Mixture of experts (llama.cpp's llama with expert_count > 0 for Mixtral, qwen3moe, gpt-oss): puts the
// experts' config.json keys into `c` from {arch}.expert_count, .expert_used_count,
// .expert_feed_forward_length, .expert_gating_func, .expert_weights_norm, and for gpt-oss the sliding
// pattern, biases and the clamped SwiGLU llama.cpp takes from the architecture.
void moe_config(const Meta& m, const std::string& model_type, nlohmann::json& c);

// blueshift's internal leaf (after "blk.N.") for llama.cpp's per-layer MoE tensor `leaf` (after "blk.N."),
// empty when it is none. gate and up experts stored apart (llama.cpp's default) map to the pseudo leaves
// ffn_gate_exps / ffn_up_exps (and *_bias), which the plan joins into blueshift's ffn_gate_up_exps.
std::string_view moe_leaf(std::string_view arch, std::string_view leaf);

// Qwen 3.5 (llama.cpp's qwen35, gguf_import_qwen35.cpp): the Gated DeltaNet keys ({arch}.ssm.*, layer kinds,
// partial rotary) as config.json's.
void qwen35_config(const Meta& m, int64_t n_layers, int64_t head_dim, nlohmann::json& c);
// blueshift's leaf for a qwen35 GGUF leaf of a DeltaNet layer (and its pre-FFN norm); empty when none.
std::string_view qwen35_leaf(std::string_view leaf);
// Where llama.cpp reordered the v heads (fewer k heads than v heads): order[i] = the file's row (or, with
// `columns`, the file's column group of `group` columns) that holds stored row (group) i. Empty: as it is.
std::vector<int64_t> qwen35_v_order(const ModelConfig& c, std::string_view leaf, int64_t& group,
                                    bool& columns);
// HF's A_log from llama.cpp's ssm_a = -exp(A_log) (see gguf_import_qwen35.cpp for the rounding).
float a_log_of(float a);

// Gemma 2 / 3 (gguf_import_gemma.cpp): what llama.cpp takes from the architecture (activation, attention
// scale, sliding pattern, softcaps, local RoPE base).
void gemma_config(const Meta& m, nlohmann::json& c);
// Gemma 4: per-layer sizes, layer kinds, KV sharing, per-layer inputs, proportional RoPE (from
// rope_freqs.weight, read from `file`; taken as full rotation for a header-only check), v from k where full
// layers lack attn_v.
void gemma4_config(const Meta& m, std::span<const std::byte> file, nlohmann::json& c);
// blueshift's name for a gemma4 GGUF name (top-level, or a layer's leaf after "blk.N.") of its own; empty:
// none.
std::string_view gemma4_name(std::string_view name);

}  // namespace bs::gguf_import
