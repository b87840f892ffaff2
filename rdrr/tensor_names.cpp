#include "rdrr/tensor_names.h"

#include <algorithm>
#include <charconv>
#include <span>

#include "rdrr/moe_tensors.h"
#include "runtime/base/error.h"

namespace bs {

namespace {

// Which layout a row applies to: Gemma's sandwich layers name their norms differently, and
// `post_attention_layernorm` means the FFN input norm in Llama/Qwen but the attention output norm in
// Gemma 2/3. q/k norms and q/k/v biases exist only where the config has them; Phi-3 fuses q/k/v and
// gate/up into one matrix each, which the converter splits by rows (fused_parts).
enum Only { any, plain, sandwich, qk_norm, qkv_bias, fused, linear, gemma4, ple, dense, moe, out_bias, sinks, router_bias };

struct NameRow {
  const char* hf;        // after the text-model prefix; "{}" is the layer index
  const char* internal;  // "{}" is the layer index
  Only only;
};

constexpr NameRow kNames[] = {
    {"embed_tokens.weight", "embed", Only::any},
    {"norm.weight", "output_norm", Only::any},
    {"layers.{}.input_layernorm.weight", "blk.{}.attn_norm", Only::any},
    {"layers.{}.self_attn.q_proj.weight", "blk.{}.attn_q", Only::any},
    {"layers.{}.self_attn.k_proj.weight", "blk.{}.attn_k", Only::any},
    {"layers.{}.self_attn.v_proj.weight", "blk.{}.attn_v", Only::any},
    {"layers.{}.self_attn.q_proj.bias", "blk.{}.attn_q_bias", Only::qkv_bias},
    {"layers.{}.self_attn.k_proj.bias", "blk.{}.attn_k_bias", Only::qkv_bias},
    {"layers.{}.self_attn.v_proj.bias", "blk.{}.attn_v_bias", Only::qkv_bias},
    {"layers.{}.self_attn.q_norm.weight", "blk.{}.attn_q_norm", Only::qk_norm},
    {"layers.{}.self_attn.k_norm.weight", "blk.{}.attn_k_norm", Only::qk_norm},
    {"layers.{}.self_attn.o_proj.weight", "blk.{}.attn_out", Only::any},
    {"layers.{}.post_attention_layernorm.weight", "blk.{}.ffn_norm", Only::plain},
    {"layers.{}.post_attention_layernorm.weight", "blk.{}.attn_post_norm", Only::sandwich},
    {"layers.{}.pre_feedforward_layernorm.weight", "blk.{}.ffn_norm", Only::sandwich},
    {"layers.{}.post_feedforward_layernorm.weight", "blk.{}.ffn_post_norm", Only::sandwich},
    {"layers.{}.mlp.gate_proj.weight", "blk.{}.ffn_gate", Only::dense},
    {"layers.{}.mlp.up_proj.weight", "blk.{}.ffn_up", Only::dense},
    {"layers.{}.mlp.down_proj.weight", "blk.{}.ffn_down", Only::dense},
    // Mixture of experts: the router (Mixtral's block_sparse_moe.gate, Qwen3-MoE's mlp.gate, GPT-OSS's
    // mlp.router), and the stacked experts under the names blueshift writes them (moe_tensors.h makes them
    // from the checkpoint's per-expert or fused tensors); GPT-OSS's o_proj bias and attention sinks.
    {"layers.{}.block_sparse_moe.gate.weight", "blk.{}.ffn_router", Only::moe},
    {"layers.{}.mlp.gate.weight", "blk.{}.ffn_router", Only::moe},
    {"layers.{}.mlp.router.weight", "blk.{}.ffn_router", Only::moe},
    {"layers.{}.mlp.router.bias", "blk.{}.ffn_router_bias", Only::router_bias},
    // (DOPPLER's names and layout. GPT-OSS's checkpoints use the same names for transposed, interleaved
    // tensors: an HF checkpoint's experts never reach this table, moe_tensors.h reads them.)
    {"layers.{}.mlp.experts.gate_up_proj", "blk.{}.ffn_gate_up_exps", Only::moe},
    {"layers.{}.mlp.experts.down_proj", "blk.{}.ffn_down_exps", Only::moe},
    {"layers.{}.mlp.experts.gate_up_proj_bias", "blk.{}.ffn_gate_up_exps_bias", Only::router_bias},
    {"layers.{}.mlp.experts.down_proj_bias", "blk.{}.ffn_down_exps_bias", Only::router_bias},
    {"layers.{}.self_attn.o_proj.bias", "blk.{}.attn_out_bias", Only::out_bias},
    {"layers.{}.self_attn.sinks", "blk.{}.attn_sinks", Only::sinks},
    {"layers.{}.self_attn.qkv_proj.weight", "blk.{}.attn_qkv", Only::fused},
    {"layers.{}.mlp.gate_up_proj.weight", "blk.{}.ffn_gate_up", Only::fused},
    // Qwen 3.5 / 3.6 Gated DeltaNet layers (Qwen3_5GatedDeltaNet)
    {"layers.{}.linear_attn.in_proj_qkv.weight", "blk.{}.linear_qkv", Only::linear},
    {"layers.{}.linear_attn.in_proj_z.weight", "blk.{}.linear_z", Only::linear},
    {"layers.{}.linear_attn.in_proj_b.weight", "blk.{}.linear_b", Only::linear},
    {"layers.{}.linear_attn.in_proj_a.weight", "blk.{}.linear_a", Only::linear},
    {"layers.{}.linear_attn.conv1d.weight", "blk.{}.linear_conv", Only::linear},
    {"layers.{}.linear_attn.A_log", "blk.{}.linear_a_log", Only::linear},
    {"layers.{}.linear_attn.dt_bias", "blk.{}.linear_dt_bias", Only::linear},
    {"layers.{}.linear_attn.norm.weight", "blk.{}.linear_norm", Only::linear},
    {"layers.{}.linear_attn.out_proj.weight", "blk.{}.linear_out", Only::linear},
    // Gemma 4: the residual's per-layer multiplier, and per-layer inputs (E variants)
    {"layers.{}.layer_scalar", "blk.{}.layer_scalar", Only::gemma4},
    {"embed_tokens_per_layer.weight", "ple_embed", Only::ple},
    {"per_layer_model_projection.weight", "ple_proj", Only::ple},
    {"per_layer_projection_norm.weight", "ple_proj_norm", Only::ple},
    {"layers.{}.per_layer_input_gate.weight", "blk.{}.ple_gate", Only::ple},
    {"layers.{}.per_layer_projection.weight", "blk.{}.ple_out", Only::ple},
    {"layers.{}.post_per_layer_input_norm.weight", "blk.{}.ple_post_norm", Only::ple},
};
// LFM2 (Lfm2ForCausalLM) names every tensor its own way; its table replaces the one above. The final
// norm is `embedding_norm` (applied after the last layer, before the head, despite its name).
constexpr NameRow kLfm2Names[] = {
    {"embed_tokens.weight", "embed", Only::any},
    {"embedding_norm.weight", "output_norm", Only::any},
    {"layers.{}.operator_norm.weight", "blk.{}.attn_norm", Only::any},
    {"layers.{}.conv.in_proj.weight", "blk.{}.conv_in", Only::any},
    {"layers.{}.conv.conv.weight", "blk.{}.conv_kernel", Only::any},
    {"layers.{}.conv.out_proj.weight", "blk.{}.conv_out", Only::any},
    {"layers.{}.self_attn.q_proj.weight", "blk.{}.attn_q", Only::any},
    {"layers.{}.self_attn.k_proj.weight", "blk.{}.attn_k", Only::any},
    {"layers.{}.self_attn.v_proj.weight", "blk.{}.attn_v", Only::any},
    {"layers.{}.self_attn.q_layernorm.weight", "blk.{}.attn_q_norm", Only::any},
    {"layers.{}.self_attn.k_layernorm.weight", "blk.{}.attn_k_norm", Only::any},
    {"layers.{}.self_attn.out_proj.weight", "blk.{}.attn_out", Only::any},
    {"layers.{}.ffn_norm.weight", "blk.{}.ffn_norm", Only::any},
    {"layers.{}.feed_forward.w1.weight", "blk.{}.ffn_gate", Only::any},
    {"layers.{}.feed_forward.w3.weight", "blk.{}.ffn_up", Only::any},
    {"layers.{}.feed_forward.w2.weight", "blk.{}.ffn_down", Only::any},
};
constexpr const char* kLmHead = "lm_head.weight";

std::span<const NameRow> name_table(bool lfm2) {
  return lfm2 ? std::span<const NameRow>(kLfm2Names) : std::span<const NameRow>(kNames);
}

// Matches `s` against `pattern` with one optional "{}" standing for a decimal layer index.
// Returns the index (or 0 without "{}"), or -1 on no match.
int64_t match(std::string_view pattern, std::string_view s) {
  size_t at = pattern.find("{}");
  if (at == std::string_view::npos) return pattern == s ? 0 : -1;
  std::string_view pre = pattern.substr(0, at), post = pattern.substr(at + 2);
  if (s.size() <= pre.size() + post.size() || s.substr(0, pre.size()) != pre ||
      s.substr(s.size() - post.size()) != post)
    return -1;
  std::string_view num = s.substr(pre.size(), s.size() - pre.size() - post.size());
  if (num.size() > 6 || (num.size() > 1 && num[0] == '0')) return -1;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || p != num.data() + num.size()) return -1;
  return v;
}

std::string fill(std::string_view pattern, int64_t layer) {
  std::string s(pattern);
  size_t at = s.find("{}");
  if (at != std::string::npos) s.replace(at, 2, std::to_string(layer));
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

}  // namespace

TensorNames::TensorNames(std::string model_type, bool multimodal)
    : model_type_(std::move(model_type)), multimodal_(multimodal),
      sandwich_(model_type_ == "gemma3_text" || model_type_ == "gemma2" || model_type_ == "gemma4_text"),
      fused_(model_type_ == "phi3"), lfm2_(model_type_ == "lfm2"), linear_(model_type_ == "qwen3_5_text"),
      gemma4_(model_type_ == "gemma4_text"), ple_(gemma4_),
      moe_(model_type_ == "mixtral" || model_type_ == "qwen3_moe" || model_type_ == "gpt_oss"),
      out_bias_(model_type_ == "gpt_oss"), sinks_(out_bias_), router_bias_(out_bias_) {}

TensorNames::TensorNames(const ModelConfig& c)
    : model_type_(c.arch), any_prefix_(true), sandwich_(c.sandwich_norm), qk_norm_(c.qk_norm),
      qkv_bias_(c.qkv_bias), lm_head_(!c.tied_embeddings),
      lfm2_(std::count(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::short_conv) > 0),
      linear_(std::count(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::linear_attention) > 0),
      gemma4_(c.layer_scalar), ple_(c.ple_dim > 0), moe_(c.moe()), out_bias_(c.attn_out_bias),
      sinks_(c.attn_sinks), router_bias_(c.moe_router_bias) {}

bool TensorNames::allowed(int only) const {
  switch (only) {
    case Only::plain: return !sandwich_;
    case Only::sandwich: return sandwich_;
    case Only::qk_norm: return qk_norm_;
    case Only::qkv_bias: return qkv_bias_;
    case Only::fused: return fused_;
    case Only::linear: return linear_;
    case Only::gemma4: return gemma4_;
    case Only::ple: return ple_;
    case Only::dense: return !moe_;
    case Only::moe: return moe_;
    case Only::out_bias: return out_bias_;
    case Only::sinks: return sinks_;
    case Only::router_bias: return router_bias_;
    default: return true;
  }
}

TensorNames::Result TensorNames::to_internal(std::string_view hf) const {
  // Text-model prefixes: text-only checkpoints use "model."; multimodal Gemma 3 uses
  // "language_model.model." (transformers 4) or "model.language_model." (transformers 5). DOPPLER keeps
  // whichever its source had, and none at all for sentence-transformers checkpoints (Qwen3-Embedding).
  static constexpr std::string_view kText[] = {"model."};
  static constexpr std::string_view kMulti[] = {"model.language_model.", "language_model.model."};
  static constexpr std::string_view kAny[] = {"model.language_model.", "language_model.model.", "model.", ""};
  if (any_prefix_) {
    // Multimodal Gemma 4 manifests carry their vision and audio towers: not part of the text model.
    for (auto p : {"model.vision_tower.", "model.audio_tower.", "model.embed_vision.", "model.embed_audio."})
      if (starts_with(hf, p)) return {Kind::skipped, {}};
    for (auto head : {kLmHead, "language_model.lm_head.weight", "model.language_model.lm_head.weight"})
      if (hf == head) return lm_head_ ? Result{Kind::mapped, "output"} : Result{Kind::unknown, {}};
  } else if (multimodal_) {
    for (auto p : {"vision_tower.", "model.vision_tower.", "multi_modal_projector.", "model.multi_modal_projector.",
                   "model.visual.", "mtp."})  // Qwen 3.5: its vision tower and multi-token-prediction head
      if (starts_with(hf, p)) return {Kind::skipped, {}};
    if (hf == kLmHead || hf == "language_model.lm_head.weight") return {Kind::mapped, "output"};
  } else if (hf == kLmHead) {
    return {Kind::mapped, "output"};
  }
  if (ends_with(hf, ".rotary_emb.inv_freq")) return {Kind::skipped, {}};
  // Qwen 3.5 checkpoints (DOPPLER keeps them whole): the vision tower and the multi-token-prediction head.
  if (any_prefix_ && linear_ && (starts_with(hf, "model.visual.") || starts_with(hf, "mtp."))) return {Kind::skipped, {}};
  std::string_view rest;
  bool found = false;
  auto prefixes = any_prefix_   ? std::span<const std::string_view>(kAny)
                  : multimodal_ ? std::span<const std::string_view>(kMulti)
                                : std::span<const std::string_view>(kText);
  for (auto p : prefixes)
    if (starts_with(hf, p)) {
      rest = hf.substr(p.size());
      found = true;
      break;
    }
  if (!found) return {Kind::unknown, {}};
  if (moe_ && !any_prefix_ && is_expert_source(model_type_, rest)) return {Kind::expert_part, {}};
  for (auto& row : name_table(lfm2_)) {
    if (!allowed(row.only)) continue;
    int64_t layer = match(row.hf, rest);
    if (layer >= 0) return {Kind::mapped, fill(row.internal, layer)};
  }
  return {Kind::unknown, {}};
}

std::string TensorNames::to_hf(std::string_view internal) const {
  if (internal == "output") return kLmHead;
  for (auto& row : name_table(lfm2_)) {
    if (!allowed(row.only)) continue;
    int64_t layer = match(row.internal, internal);
    if (layer >= 0) return "model." + fill(row.hf, layer);
  }
  fail("no HF name for internal tensor '{}'", internal);
}

std::vector<FusedPart> fused_parts(const ModelConfig& c, std::string_view internal) {
  int32_t l = tensor_layer(internal);
  if (l < 0) return {};
  std::string_view n = internal.substr(internal.find('.', 4) + 1);
  std::string b = "blk." + std::to_string(l) + ".";
  const int64_t q = c.q_dim(), kv = c.kv_dim(), ffn = c.ffn_dim;
  // Phi3Attention slices qkv_proj's output as [q | k | v]; Phi3MLP chunks gate_up_proj's as [gate | up].
  if (n == "attn_qkv") return {{b + "attn_q", 0, q}, {b + "attn_k", q, kv}, {b + "attn_v", q + kv, kv}};
  if (n == "ffn_gate_up") return {{b + "ffn_gate", 0, ffn}, {b + "ffn_up", ffn, ffn}};
  return {};
}

std::vector<std::string> expected_tensors(const ModelConfig& c) {
  std::vector<std::string> v{"embed"};
  if (c.ple_dim > 0)
    for (auto n : {"ple_embed", "ple_proj", "ple_proj_norm"}) v.push_back(n);
  for (int32_t l = 0; l < c.n_layers; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    v.push_back(b + "attn_norm");
    if (c.kind(l) == LayerKind::short_conv) {  // LFM2: the conv block, then the FFN
      for (auto n : {"conv_in", "conv_kernel", "conv_out", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"}) v.push_back(b + n);
      continue;
    }
    if (c.kind(l) == LayerKind::linear_attention) {  // Qwen 3.5: the Gated DeltaNet block, then the FFN
      for (auto n : {"linear_qkv", "linear_z", "linear_b", "linear_a", "linear_conv", "linear_a_log", "linear_dt_bias",
                     "linear_norm", "linear_out", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"})
        v.push_back(b + n);
      continue;
    }
    // Gemma 4: no v projection where v is k's; no k/v at all on KV-shared layers.
    v.push_back(b + "attn_q");
    if (c.computes_kv(l)) v.push_back(b + "attn_k");
    if (c.computes_kv(l) && c.has_v_proj(l)) v.push_back(b + "attn_v");
    if (c.qkv_bias)
      for (auto n : {"attn_q_bias", "attn_k_bias", "attn_v_bias"}) v.push_back(b + n);
    if (c.qk_norm) {
      v.push_back(b + "attn_q_norm");
      if (c.computes_kv(l)) v.push_back(b + "attn_k_norm");
    }
    v.push_back(b + "attn_out");
    if (c.sandwich_norm) v.push_back(b + "attn_post_norm");
    if (c.attn_out_bias) v.push_back(b + "attn_out_bias");
    if (c.attn_sinks) v.push_back(b + "attn_sinks");
    if (c.moe()) {
      v.push_back(b + "ffn_norm");
      for (auto n : moe_layer_tensors(c)) v.push_back(b + n);
    } else {
      for (auto n : {"ffn_norm", "ffn_gate", "ffn_up", "ffn_down"}) v.push_back(b + n);
    }
    if (c.sandwich_norm) v.push_back(b + "ffn_post_norm");
    if (c.ple_dim > 0)
      for (auto n : {"ple_gate", "ple_out", "ple_post_norm"}) v.push_back(b + n);
    if (c.layer_scalar) v.push_back(b + "layer_scalar");
  }
  v.push_back("output_norm");
  if (!c.tied_embeddings) v.push_back("output");
  return v;
}

int32_t tensor_layer(std::string_view internal) {
  int64_t l = match("blk.{}.", internal.substr(0, internal.find('.', 4) + 1));
  return l < 0 ? -1 : int32_t(l);
}

std::vector<int64_t> expected_shape(const ModelConfig& c, std::string_view internal) {
  if (internal == "embed" || internal == "output") return {c.vocab, c.dim};
  if (internal == "output_norm") return {c.dim};
  const int64_t P = c.ple_dim, LP = int64_t(c.n_layers) * c.ple_dim;
  if (internal == "ple_embed") return {c.ple_vocab, LP};
  if (internal == "ple_proj") return {LP, c.dim};
  if (internal == "ple_proj_norm") return {P};
  const int32_t l = tensor_layer(internal);
  if (l < 0 || l >= c.n_layers) fail("unknown internal tensor '{}'", internal);
  std::string_view n = internal.substr(internal.find('.', 4) + 1);
  const int64_t dim = c.dim, q = c.q_dim_of(l), kv = c.kv_dim_of(l), ffn = c.ffn_dim_of(l), hd = c.head_dim_of(l);
  const int64_t lqkv = c.linear_qkv_dim(), lout = c.linear_out_dim(), lh = c.linear_v_heads;
  struct Row { std::string_view name; std::vector<int64_t> shape; };
  const Row rows[] = {
      {"attn_norm", {dim}},      {"attn_q", {c.attn_output_gate ? 2 * q : q, dim}},       {"attn_k", {kv, dim}},       {"attn_v", {kv, dim}},
      {"attn_q_bias", {q}},      {"attn_k_bias", {kv}},      {"attn_v_bias", {kv}},       {"attn_q_norm", {hd}},
      {"attn_k_norm", {hd}}, {"attn_out", {dim, q}}, {"attn_post_norm", {dim}},   {"ffn_norm", {dim}},
      {"ffn_gate", {ffn, dim}},  {"ffn_up", {ffn, dim}},     {"ffn_down", {dim, ffn}},    {"ffn_post_norm", {dim}},
      {"attn_qkv", {q + 2 * kv, dim}}, {"ffn_gate_up", {2 * ffn, dim}},
      {"conv_in", {3 * dim, dim}}, {"conv_kernel", {dim, 1, c.conv_kernel}}, {"conv_out", {dim, dim}},
      {"linear_qkv", {lqkv, dim}}, {"linear_z", {lout, dim}}, {"linear_b", {lh, dim}}, {"linear_a", {lh, dim}},
      {"linear_conv", {lqkv, 1, c.linear_conv}}, {"linear_a_log", {lh}}, {"linear_dt_bias", {lh}},
      {"linear_norm", {c.linear_v_dim}}, {"linear_out", {dim, lout}},
      {"layer_scalar", {1}},     {"ple_gate", {P, dim}},     {"ple_out", {dim, P}},       {"ple_post_norm", {dim}},
      {"attn_out_bias", {dim}},  {"attn_sinks", {c.n_heads}},
  };
  if (auto s = moe_tensor_shape(c, n)) return *s;
  for (auto& r : rows)
    if (r.name == n) return r.shape;
  fail("unknown internal tensor '{}'", internal);
}

std::string tensor_role(std::string_view internal) {
  if (internal == "embed" || internal == "ple_embed") return "embedding";
  if (internal == "output") return "lm_head";
  if (ends_with(internal, ".layer_scalar")) return "other";
  if (ends_with(internal, "norm")) return "norm";
  if (ends_with(internal, "_bias")) return "bias";
  if (ends_with(internal, "_exps")) return "expert";  // DOPPLER's role for [experts, rows, cols] tensors
  if (ends_with(internal, ".ffn_router")) return "router";
  return "matmul";
}

std::string tensor_group(std::string_view internal) {
  if (internal == "embed" || internal.starts_with("ple_")) return "embed";
  int32_t l = tensor_layer(internal);
  return l >= 0 ? "layer." + std::to_string(l) : "head";
}

}  // namespace bs
