// The GGUF import's tensor names (llama.cpp's -> blueshift's internal ones) and the fields of the families
// imported first: LFM2's per-layer KV head counts and Phi-3 128k's LongRoPE factor tensors.
#include <cstring>

#include "rdrr/gguf_import_arch.h"
#include "runtime/base/error.h"

namespace bs::gguf_import {

using nlohmann::json;

namespace {

// llama.cpp's per-layer tensor names (after "blk.N.") and blueshift's internal names.
constexpr std::pair<std::string_view, std::string_view> kLayerNames[] = {
    {"attn_norm.weight", "attn_norm"},
    {"attn_q.weight", "attn_q"},
    {"attn_k.weight", "attn_k"},
    {"attn_v.weight", "attn_v"},
    {"attn_q.bias", "attn_q_bias"},
    {"attn_k.bias", "attn_k_bias"},
    {"attn_v.bias", "attn_v_bias"},
    {"attn_q_norm.weight", "attn_q_norm"},
    {"attn_k_norm.weight", "attn_k_norm"},
    {"attn_output.weight", "attn_out"},
    {"ffn_norm.weight", "ffn_norm"},
    {"ffn_gate.weight", "ffn_gate"},
    {"ffn_up.weight", "ffn_up"},
    {"ffn_down.weight", "ffn_down"},
    // Gemma's sandwich norms (llama.cpp's ffn_norm is Gemma's pre_feedforward_layernorm).
    {"post_attention_norm.weight", "attn_post_norm"},
    {"post_ffw_norm.weight", "ffn_post_norm"},
    // LFM2's short convolution (HF conv.in_proj, conv.conv squeezed to 2-D, conv.out_proj).
    {"shortconv.in_proj.weight", "conv_in"},
    {"shortconv.conv.weight", "conv_kernel"},
    {"shortconv.out_proj.weight", "conv_out"},
};
constexpr std::pair<std::string_view, std::string_view> kTopNames[] = {
    {"token_embd.weight", "embed"}, {"output_norm.weight", "output_norm"}, {"output.weight", "output"}};

}  // namespace

bool mtp_block(std::string_view name, int64_t n_layers, int64_t n_blocks) {
  if (!name.starts_with("blk.")) return false;
  int64_t layer = 0;
  size_t i = 4;
  for (; i < name.size() && i < 14 && name[i] >= '0' && name[i] <= '9'; ++i)
    layer = layer * 10 + (name[i] - '0');
  return i > 4 && i < name.size() && name[i] == '.' && layer >= n_layers && layer < n_blocks;
}

std::string internal_name(std::string_view name, uint64_t n_layers, std::string_view arch) {
  if (arch == "gemma4")
    if (std::string_view g = gguf_import::gemma4_name(name); !g.empty()) return std::string(g);
  // LFM2's final norm (HF embedding_norm) is token_embd_norm in llama.cpp's files.
  if (arch == "lfm2" && name == "token_embd_norm.weight") return "output_norm";
  for (auto [g, i] : kTopNames)
    if (name == g) return std::string(i);
  if (!name.starts_with("blk.")) return {};
  size_t dot = name.find('.', 4);
  if (dot == std::string_view::npos || dot == 4 || dot > 4 + 9) return {};
  uint64_t layer = 0;
  for (char ch : name.substr(4, dot - 4)) {
    if (ch < '0' || ch > '9') return {};
    layer = layer * 10 + uint64_t(ch - '0');
  }
  if (layer >= n_layers || (name[4] == '0' && dot > 5)) return {};
  const std::string b = "blk." + std::to_string(layer) + ".";
  if (std::string_view g = arch == "gemma4" ? gguf_import::gemma4_name(name.substr(dot + 1)) : ""; !g.empty())
    return b + std::string(g);
  if (std::string_view q = arch == "qwen35" ? gguf_import::qwen35_leaf(name.substr(dot + 1)) : ""; !q.empty())
    return b + std::string(q);
  if (std::string_view moe = gguf_import::moe_leaf(arch, name.substr(dot + 1)); !moe.empty())
    return b + std::string(moe);
  if (arch == "phi3") {  // Phi-3 keeps HF's fused projections: qkv, and gate|up under llama.cpp's ffn_up name
    if (name.substr(dot + 1) == "attn_qkv.weight") return b + "attn_qkv";
    if (name.substr(dot + 1) == "ffn_up.weight") return b + "ffn_gate_up";
  }
  for (auto [g, i] : kLayerNames)
    if (name.substr(dot + 1) == g) return b + std::string(i);
  return {};
}

// A per-layer count array (LFM2's head_count_kv): n_layers integers, the non-zero ones all equal.
std::vector<int64_t> per_layer_counts(const gguf::Value& v, uint64_t n_layers, const std::string& key,
                                      const std::string& label) {
  std::vector<int64_t> out;
  if (const auto* i = std::get_if<std::vector<int64_t>>(&v.v)) out = *i;
  if (const auto* u = std::get_if<std::vector<uint64_t>>(&v.v))
    for (uint64_t x : *u) out.push_back(x > (1u << 30) ? -1 : int64_t(x));
  if (out.size() != n_layers)
    fail("{}: metadata '{}': expected {} integers (one per layer), got {}", label, key, n_layers,
         std::holds_alternative<std::vector<int64_t>>(v.v) ||
                 std::holds_alternative<std::vector<uint64_t>>(v.v)
             ? std::to_string(out.size())
             : "an array of another type");
  int64_t nonzero = 0;
  for (size_t l = 0; l < out.size(); ++l) {
    if (out[l] < 0 || out[l] > (1 << 30) || (nonzero && out[l] && out[l] != nonzero))
      fail("{}: metadata '{}[{}]': expected 0 or the other layers' count {}, got {}", label, key, l, nonzero,
           out[l]);
    if (out[l]) nonzero = out[l];
  }
  if (!nonzero) fail("{}: metadata '{}': every layer is 0 (no attention layer)", label, key);
  return out;
}

// Phi-3 128k's LongRoPE as llama.cpp's converter writes it: the long and short factors as F32 tensors
// rope_factors_long / rope_factors_short of head_dim/2 values, original_max_position_embeddings as
// rope.scaling.original_context_length and the attention factor as rope.scaling.attn_factor. Puts HF's
// rope_scaling into `c`; false when the file has neither tensor. With no `file` (a header-only check)
// the factors are taken as 1.
bool read_longrope(const Meta& m, const gguf::Header& h, std::span<const std::byte> file, json& c,
                   int64_t head_dim) {
  const std::string a = m.arch + ".";
  const gguf::TensorInfo* lf = h.tensor("rope_factors_long.weight");
  const gguf::TensorInfo* sf = h.tensor("rope_factors_short.weight");
  if (!lf && !sf) return false;
  if (m.arch != "phi3")
    fail("{}: tensor '{}' (LongRoPE factors): imported for phi3 only, not {}", m.label, (lf ? lf : sf)->name,
         m.arch);
  if (!lf || !sf)
    fail("{}: tensor '{}' is missing (LongRoPE has a long and a short factor tensor)", m.label,
         lf ? "rope_factors_short.weight" : "rope_factors_long.weight");
  json rs = {{"rope_type", "longrope"}};
  for (const gguf::TensorInfo* t : {lf, sf}) {
    if (t->type != gguf::GgmlType::F32 || t->ne.size() != 1 || t->ne[0] != uint64_t(head_dim / 2))
      fail("{}: tensor '{}': expected F32 ne [{}] (one factor per rotated pair), got type #{} ne {}", m.label,
           t->name, head_dim / 2, uint32_t(t->type), json(t->ne).dump());
    std::vector<double> f(size_t(head_dim / 2), 1.0);
    if (!file.empty()) {
      if (h.data_offset + t->offset + t->size > file.size())
        fail("{}: tensor '{}' lies past the file's end", m.label, t->name);
      for (size_t i = 0; i < f.size(); ++i) {
        float v;
        std::memcpy(&v, file.data() + h.data_offset + t->offset + 4 * i, 4);
        if (!(v > 0 && v < 1e30f))
          fail("{}: tensor '{}'[{}]: expected a positive finite factor, got {}", m.label, t->name, i, v);
        f[i] = v;
      }
    }
    rs[t == lf ? "long_factor" : "short_factor"] = f;
  }
  rs["original_max_position_embeddings"] = positive(m.uint(a + "rope.scaling.original_context_length"),
                                                    a + "rope.scaling.original_context_length", m.label);
  if (h.find(a + "rope.scaling.attn_factor")) {
    double af = m.number(a + "rope.scaling.attn_factor");
    if (!(af > 0 && af < 1e6))
      fail("{}: metadata '{}rope.scaling.attn_factor': expected a positive factor, got {}", m.label, a, af);
    rs["attention_factor"] = af;
  }
  c["rope_scaling"] = rs;
  return true;
}

}  // namespace bs::gguf_import
