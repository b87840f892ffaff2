// The GGUF import's metadata reader (Meta) and its mixture-of-experts families: llama.cpp's llama with
// experts (Mixtral), qwen3moe and gpt-oss.
//
// llama.cpp stores the experts of a layer stacked, ne [cols, rows, experts] (HF [experts, rows, cols]):
// ffn_gate_exps, ffn_up_exps and ffn_down_exps, or (its converter's fused option) ffn_gate_up_exps with each
// expert's gate rows before its up rows, which is blueshift's ffn_gate_up_exps exactly. Rows are quantized
// one by one, so joining gate and up per expert moves whole rows of bytes and keeps every block as it is.
// GPT-OSS's MXFP4 experts are GGML's block_mxfp4 (E8M0 scale byte, then 16 bytes, element j in the low nibble
// of byte j and j + 16 in the high one), which is blueshift's MXFP4 block byte for byte: GGML decodes codes
// through doubled e2m1 values {0, 1, 2, 3, 4, 6, 8, 12} times 2^(e - 128), blueshift through {0, .5, .., 6}
// times 2^(e - 127): the same products, so the bytes are copied unchanged.
#include <algorithm>

#include "rdrr/gguf_import_arch.h"
#include "runtime/base/error.h"

namespace bs::gguf_import {

using nlohmann::json;

uint64_t Meta::uint(const std::string& key, std::optional<uint64_t> fallback) const {
  const gguf::Value* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    fail("{}: metadata '{}' is missing (needed for a {} model)", label, key, arch);
  }
  std::optional<int64_t> i = v->as_int();
  std::optional<uint64_t> u = v->as_uint();
  if (u && v->type != gguf::ValueType::boolean) return *u;
  if (i && *i >= 0) return uint64_t(*i);
  fail("{}: metadata '{}': expected a non-negative integer, got {}", label, key, describe(*v));
}

double Meta::number(const std::string& key, std::optional<double> fallback) const {
  const gguf::Value* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    fail("{}: metadata '{}' is missing (needed for a {} model)", label, key, arch);
  }
  if (auto f = v->as_float()) return *f;
  if (auto i = v->as_int()) return double(*i);
  fail("{}: metadata '{}': expected a number, got {}", label, key, describe(*v));
}

std::string Meta::describe(const gguf::Value& v) {
  if (auto s = v.as_string()) return "the string '" + s->substr(0, 40) + "'";
  if (v.type == gguf::ValueType::array) return "an array";
  if (v.type == gguf::ValueType::boolean) return "a boolean";
  if (auto f = v.as_float()) return std::to_string(*f);
  if (auto i = v.as_int()) return std::to_string(*i);
  return "another type";
}

int64_t positive(uint64_t v, const std::string& key, const std::string& label) {
  if (v == 0 || v > (1u << 30)) fail("{}: metadata '{}': expected 1 .. 2^30, got {}", label, key, v);
  return int64_t(v);
}

void moe_config(const Meta& m, const std::string& model_type, json& c) {
  const std::string a = m.arch + ".";
  const uint64_t experts = m.uint(a + "expert_count"), used = m.uint(a + "expert_used_count");
  // The router and grouping kernels keep up to 256 experts' logits and 8 choices per token.
  if (experts < 1 || experts > 256)
    fail("{}: metadata '{}expert_count': expected 1 .. 256 experts, got {}", m.label, a, experts);
  if (used < 1 || used > std::min<uint64_t>(experts, 8))
    fail("{}: metadata '{}expert_used_count': expected 1 .. {} (min(expert_count, 8)), got {}", m.label, a,
         std::min<uint64_t>(experts, 8), used);
  if (uint64_t shared = m.uint(a + "expert_shared_count", 0); shared != 0)
    fail("{}: metadata '{}expert_shared_count': {} shared experts are not supported (expected 0)", m.label, a,
         shared);
  // llama.cpp's gating: 1 softmax (Mixtral, Qwen3-MoE: softmax, then the top k), 3 softmax_weight (GPT-OSS:
  // the top k logits, then their softmax); its architectures fix it where the file does not say.
  const uint64_t gating = model_type == "gpt_oss" ? 3 : 1;
  if (uint64_t g = m.uint(a + "expert_gating_func", gating); g != gating)
    fail("{}: metadata '{}expert_gating_func': expected {} ({}) for a {} model, got {}", m.label, a, gating,
         gating == 3 ? "softmax of the top k" : "softmax", m.arch, g);
  c["num_experts_per_tok"] = used;
  if (model_type == "qwen3_moe") {
    c["num_experts"] = experts;
    c["moe_intermediate_size"] =
        positive(m.uint(a + "expert_feed_forward_length"), a + "expert_feed_forward_length", m.label);
    // llama.cpp's qwen3moe renormalizes the chosen weights (HF norm_topk_prob, true in every Qwen3-MoE).
    const gguf::Value* norm = m.find(a + "expert_weights_norm");
    c["norm_topk_prob"] = norm ? m.uint(a + "expert_weights_norm") != 0 : true;
    return;
  }
  c["num_local_experts"] = experts;
  if (m.find(a + "expert_feed_forward_length"))  // the experts' width (HF intermediate_size)
    c["intermediate_size"] =
        positive(m.uint(a + "expert_feed_forward_length"), a + "expert_feed_forward_length", m.label);
  if (model_type == "mixtral") {
    c["sliding_window"] = nullptr;  // llama.cpp's llama attends over the whole context
    return;
  }
  // GPT-OSS: q/k/v and o biases, attention sinks; llama.cpp slides on even layers (its swa pattern 2) and
  // clamps the SwiGLU at 7 with alpha 1.702 (LLM_FFN_SWIGLU_OAI_MOE), none of which the file holds.
  c["attention_bias"] = true;
  c["sliding_window"] =
      positive(m.uint(a + "attention.sliding_window"), a + "attention.sliding_window", m.label);
  json types = json::array();
  for (int64_t l = 0; l < c["num_hidden_layers"].get<int64_t>(); ++l)
    types.push_back(l % 2 == 0 ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  c["swiglu_limit"] = 7.0;
}

std::string_view moe_leaf(std::string_view arch, std::string_view leaf) {
  // GPT-OSS's norm before the experts is llama.cpp's post_attention_norm (HF post_attention_layernorm).
  if (arch == "gpt-oss" && leaf == "post_attention_norm.weight") return "ffn_norm";
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"ffn_gate_inp.weight", "ffn_router"},           {"ffn_gate_inp.bias", "ffn_router_bias"},
      {"ffn_gate_up_exps.weight", "ffn_gate_up_exps"}, {"ffn_gate_up_exps.bias", "ffn_gate_up_exps_bias"},
      {"ffn_gate_exps.weight", "ffn_gate_exps"},       {"ffn_gate_exps.bias", "ffn_gate_exps_bias"},
      {"ffn_up_exps.weight", "ffn_up_exps"},           {"ffn_up_exps.bias", "ffn_up_exps_bias"},
      {"ffn_down_exps.weight", "ffn_down_exps"},       {"ffn_down_exps.bias", "ffn_down_exps_bias"},
      {"attn_output.bias", "attn_out_bias"},           {"attn_sinks.weight", "attn_sinks"},
  };
  for (auto [g, i] : kNames)
    if (leaf == g) return i;
  return {};
}

}  // namespace bs::gguf_import
