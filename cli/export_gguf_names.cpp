// export-gguf's names and layouts (export_gguf_names.h).
#include "cli/export_gguf_names.h"

#include <cstring>

namespace bs::export_gguf {

namespace {

// llama.cpp's names of Gemma 4's own tensors (top-level, or a layer's leaf).
std::string gemma4_gguf_name(const std::string& prefix, const std::string& leaf) {
  for (auto [ours, theirs] : {std::pair{"ple_embed", "per_layer_token_embd.weight"},
                              {"ple_proj", "per_layer_model_proj.weight"},
                              {"ple_proj_norm", "per_layer_proj_norm.weight"},
                              {"layer_scalar", "layer_output_scale.weight"},
                              {"ple_gate", "inp_gate.weight"},
                              {"ple_out", "proj.weight"},
                              {"ple_post_norm", "post_norm.weight"},
                              {"attn_q_norm", "attn_q_norm.weight"},
                              {"attn_k_norm", "attn_k_norm.weight"},
                              {"attn_post_norm", "post_attention_norm.weight"},
                              {"ffn_post_norm", "post_ffw_norm.weight"}})
    if (leaf == ours) return prefix + theirs;
  return {};
}

// llama.cpp's names of Qwen 3.5's DeltaNet tensors and of its pre-FFN norm.
std::string qwen35_gguf_name(const std::string& prefix, const std::string& leaf) {
  for (auto [ours, theirs] : {std::pair{"linear_qkv", "attn_qkv.weight"},
                              {"linear_z", "attn_gate.weight"},
                              {"linear_b", "ssm_beta.weight"},
                              {"linear_a", "ssm_alpha.weight"},
                              {"linear_conv", "ssm_conv1d.weight"},
                              {"linear_a_log", "ssm_a"},
                              {"linear_dt_bias", "ssm_dt.bias"},
                              {"linear_norm", "ssm_norm.weight"},
                              {"linear_out", "ssm_out.weight"},
                              {"ffn_norm", "post_attention_norm.weight"},
                              {"attn_q_norm", "attn_q_norm.weight"},
                              {"attn_k_norm", "attn_k_norm.weight"}})
    if (leaf == ours) return prefix + theirs;
  return {};
}

}  // namespace

std::optional<VLayout> v_layout(const std::string& internal) {
  const std::string leaf = internal.substr(internal.rfind('.') + 1);
  if (leaf == "linear_qkv" || leaf == "linear_conv") return VLayout{true, true, false};
  if (leaf == "linear_z") return VLayout{false, true, false};
  if (leaf == "linear_out") return VLayout{false, true, true};
  if (leaf == "linear_a" || leaf == "linear_b" || leaf == "linear_a_log" || leaf == "linear_dt_bias")
    return VLayout{};
  return std::nullopt;
}

void tile_v_heads(std::span<const std::byte> in, std::vector<std::byte>& out, size_t rows, int64_t nk,
                  int64_t nv, int64_t lead, int64_t width, bool columns) {
  const int64_t r = nv / nk;
  out.assign(in.begin(), in.end());
  const size_t row = in.size() / rows;
  for (int64_t g = 0; g < nk; ++g)
    for (int64_t v = 0; v < r; ++v) {
      const size_t from = size_t(g * r + v), to = size_t(v * nk + g);
      if (columns) {
        const size_t unit = row / size_t(nv);
        for (size_t i = 0; i < rows; ++i)
          std::memcpy(out.data() + i * row + to * unit, in.data() + i * row + from * unit, unit);
      } else {
        const size_t span = size_t(width) * row;
        std::memcpy(out.data() + size_t(lead) * row + to * span, in.data() + size_t(lead) * row + from * span,
                    span);
      }
    }
}

std::vector<std::pair<std::string, int>> moe_gguf_names(const std::string& prefix, const std::string& leaf,
                                                        const Target& t) {
  if (t.arch == "gpt-oss" && leaf == "ffn_norm") return {{prefix + "post_attention_norm.weight", -1}};
  for (auto [ours, theirs] : {std::pair{"attn_q_bias", "attn_q.bias"},
                              {"attn_k_bias", "attn_k.bias"},
                              {"attn_v_bias", "attn_v.bias"},
                              {"attn_out_bias", "attn_output.bias"},
                              {"attn_sinks", "attn_sinks.weight"},
                              {"ffn_router", "ffn_gate_inp.weight"},
                              {"ffn_router_bias", "ffn_gate_inp.bias"},
                              {"ffn_down_exps", "ffn_down_exps.weight"},
                              {"ffn_down_exps_bias", "ffn_down_exps.bias"}})
    if (leaf == ours) return {{prefix + theirs, -1}};
  for (auto [ours, suffix] : {std::pair{"ffn_gate_up_exps", ".weight"}, {"ffn_gate_up_exps_bias", ".bias"}})
    if (leaf == ours) {
      if (t.fuse_gate_up) return {{prefix + "ffn_gate_up_exps" + suffix, -1}};
      return {{prefix + "ffn_gate_exps" + suffix, 0}, {prefix + "ffn_up_exps" + suffix, 1}};
    }
  return {};
}

std::string gguf_name(const std::string& internal, const Target& t) {
  if (internal == "embed") return "token_embd.weight";
  if (internal == "output_norm" && t.shortconv) return "token_embd_norm.weight";  // llama.cpp's LFM2 name
  if (internal == "output_norm" || internal == "output") return internal + ".weight";
  if (t.gemma4 && internal.starts_with("ple_")) return gemma4_gguf_name("", internal);
  if (internal.rfind("blk.", 0) != 0) return {};
  auto dot = internal.find('.', 4);
  std::string prefix = internal.substr(0, dot + 1), leaf = internal.substr(dot + 1);
  if (t.arch == "gpt-oss" && leaf == "ffn_norm") return prefix + "post_attention_norm.weight";
  if (t.arch == "qwen3moe" && (leaf == "attn_q_norm" || leaf == "attn_k_norm"))
    return prefix + leaf + ".weight";
  if (std::string n = t.qwen35 ? qwen35_gguf_name(prefix, leaf) : ""; !n.empty()) return n;
  if (std::string n = t.gemma4 ? gemma4_gguf_name(prefix, leaf) : ""; !n.empty()) return n;
  for (const char* n :
       {"attn_norm", "attn_q", "attn_k", "attn_v", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"})
    if (leaf == n) return prefix + leaf + ".weight";
  if (leaf == "attn_out") return prefix + "attn_output.weight";
  if (t.shortconv) {
    if (leaf == "attn_q_norm" || leaf == "attn_k_norm") return prefix + leaf + ".weight";
    if (leaf == "conv_in") return prefix + "shortconv.in_proj.weight";
    if (leaf == "conv_kernel") return prefix + "shortconv.conv.weight";
    if (leaf == "conv_out") return prefix + "shortconv.out_proj.weight";
  }
  if (t.norms_plus_one) {
    if (leaf == "attn_q_norm" || leaf == "attn_k_norm") return prefix + leaf + ".weight";
    if (leaf == "attn_post_norm") return prefix + "post_attention_norm.weight";
    if (leaf == "ffn_post_norm") return prefix + "post_ffw_norm.weight";
  }
  return {};
}

}  // namespace bs::export_gguf
