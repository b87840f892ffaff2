// The GGUF import's Gemma families: what llama.cpp's gemma2 / gemma3 / gemma4 take from the architecture or
// store in their own keys, as the config.json keys transformers reads.
//
// Gemma 4 (llama.cpp's gemma4): its norms are stored as they are (no 1 + w: HF's Gemma 4 norms scale by w);
// per-layer sizes come as arrays (head_count_kv, feed_forward_length) or as the two kinds of layer
// (key_length for full layers, key_length_swa for sliding ones, sliding_window_pattern one flag per layer);
// attention.shared_kv_layers, embedding_length_per_layer_input, rope.freq_base / freq_base_swa. Its
// "proportional" RoPE on full layers is the rope_freqs tensor (head_dim/2 divisors: 1 for the rotated
// frequencies, 1e30 for the rest, which llama.cpp's NeoX rope then leaves unrotated): its count of 1s gives
// HF's partial_rotary_factor. A full layer without attn_v takes v from k (HF attention_k_eq_v).
#include <cmath>
#include <cstring>

#include "rdrr/gguf_import_arch.h"
#include "runtime/base/error.h"

namespace bs::gguf_import {

using nlohmann::json;

// What llama.cpp's Gemma 2 / 3 take from the architecture rather than the file (llama-model.cpp's
// load_hparams), as the config.json keys transformers reads: GELU (tanh), the attention scale
// 1/sqrt(head_dim) (1/sqrt(dim / heads) for the 27B, which it recognises by its layer count), the
// sliding pattern (Gemma 2: even layers slide; Gemma 3: five local to one global, local RoPE base
// 10000), Gemma 2's softcaps (50 / 30 where the file has no keys) and Gemma 3's none.
void gemma_config(const Meta& m, json& c) {
  const std::string a = m.arch + ".";
  const bool gemma2 = m.arch == "gemma2";
  const int64_t n_layers = c["num_hidden_layers"], dim = c["hidden_size"], heads = c["num_attention_heads"];
  c.erase("hidden_act");
  c["hidden_activation"] = "gelu_pytorch_tanh";
  c["query_pre_attn_scalar"] = n_layers == (gemma2 ? 46 : 62) ? dim / heads : c["head_dim"].get<int64_t>();
  if (gemma2) {
    for (auto [key, fallback] :
         {std::pair{"attn_logit_softcapping", 50.0}, {"final_logit_softcapping", 30.0}}) {
      double cap = m.number(a + key, fallback);
      if (!(cap > 0 && cap < 1e30))
        fail("{}: metadata '{}{}': expected a positive softcap (llama.cpp divides by it), got {}", m.label, a,
             key, cap);
      c[key] = cap;
    }
    c["sliding_window"] =
        positive(m.uint(a + "attention.sliding_window", 4096), a + "attention.sliding_window", m.label);
  } else {
    c["attn_logit_softcapping"] = nullptr;
    c["final_logit_softcapping"] = nullptr;
    c["sliding_window"] =
        positive(m.uint(a + "attention.sliding_window"), a + "attention.sliding_window", m.label);
    c["sliding_window_pattern"] = 6;
    c["rope_local_base_freq"] = 10000.0;
  }
}

namespace {

// A per-layer array of counts (or one count for every layer) as n_layers integers.
std::vector<int64_t> per_layer(const Meta& m, const std::string& key, int64_t n_layers) {
  const gguf::Value* v = m.find(key);
  if (!v) fail("{}: metadata '{}' is missing (needed for a {} model)", m.label, key, m.arch);
  std::vector<int64_t> out;
  if (v->type != gguf::ValueType::array) {
    out.assign(size_t(n_layers), positive(m.uint(key), key, m.label));
    return out;
  }
  if (const auto* i = std::get_if<std::vector<int64_t>>(&v->v)) out = *i;
  if (const auto* u = std::get_if<std::vector<uint64_t>>(&v->v))
    for (uint64_t x : *u) out.push_back(x > (1u << 30) ? -1 : int64_t(x));
  if (int64_t(out.size()) != n_layers)
    fail("{}: metadata '{}': expected {} integers (one per layer), got {}", m.label, key, n_layers,
         out.size());
  for (size_t l = 0; l < out.size(); ++l)
    if (out[l] < 1 || out[l] > (1 << 30))
      fail("{}: metadata '{}[{}]': expected 1 .. 2^30, got {}", m.label, key, l, out[l]);
  return out;
}

// The rotated share of a full layer's head from rope_freqs.weight (1 for each rotated frequency, then 1e30);
// 1 without the tensor, and for a header-only check (no file).
double proportional_factor(const Meta& m, std::span<const std::byte> file, int64_t head_dim) {
  const gguf::TensorInfo* t = m.h.tensor("rope_freqs.weight");
  if (!t) return 1.0;
  if (t->type != gguf::GgmlType::F32 || t->ne.size() != 1 || t->ne[0] != uint64_t(head_dim / 2))
    fail("{}: tensor 'rope_freqs.weight': expected F32 [{}] (key_length / 2), got ne {}", m.label,
         head_dim / 2, json(t->ne).dump());
  if (file.empty()) return 1.0;
  int64_t rotated = 0;
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    float f;
    std::memcpy(&f, file.data() + m.h.data_offset + t->offset + 4 * uint64_t(i), 4);
    const bool one = f == 1.0f, off = f >= 1e29f;
    if (!(one && rotated == i) && !off)
      fail(
          "{}: tensor 'rope_freqs.weight'[{}]: expected 1 (rotated, before any 1e30) or 1e30 (not rotated), "
          "got {}",
          m.label, i, f);
    if (one) ++rotated;
  }
  if (rotated == 0)
    fail("{}: tensor 'rope_freqs.weight': no frequency is rotated (every value 1e30)", m.label);
  return double(2 * rotated) / double(head_dim);
}

}  // namespace

void gemma4_config(const Meta& m, std::span<const std::byte> file, json& c) {
  const std::string a = m.arch + ".";
  const int64_t n_layers = c["num_hidden_layers"];
  if (uint64_t experts = m.uint(a + "expert_count", 0); experts || m.h.tensor("blk.0.ffn_gate_inp.weight"))
    fail("{}: metadata '{}expert_count' {}: Gemma 4's mixture of experts (26B-A4B) is not supported (dense Gemma 4 "
         "is)",
         m.label, a, experts);
  // Layer kinds: one flag per layer (true: sliding).
  const gguf::Value* pat = m.find(a + "attention.sliding_window_pattern");
  const auto* flags = pat ? std::get_if<std::vector<uint64_t>>(&pat->v) : nullptr;
  if (!pat)
    fail("{}: metadata '{}attention.sliding_window_pattern' is missing (needed for a gemma4 model)", m.label,
         a);
  if (!flags || int64_t(flags->size()) != n_layers)
    fail("{}: metadata '{}attention.sliding_window_pattern': expected {} booleans (one per layer), got {}",
         m.label, a, n_layers, flags ? std::to_string(flags->size()) : Meta::describe(*pat));
  json types = json::array();
  for (uint64_t f : *flags) types.push_back(f ? "sliding_attention" : "full_attention");
  c["layer_types"] = types;
  c["sliding_window"] =
      positive(m.uint(a + "attention.sliding_window"), a + "attention.sliding_window", m.label);
  // Head widths by kind; KV heads and FFN widths per layer, the first layer of each kind as the default and
  // the others in per_layer_config where they differ.
  const int64_t hd_full = c["head_dim"], hd_swa = positive(m.uint(a + "attention.key_length_swa"),
                                                           a + "attention.key_length_swa", m.label);
  if (uint64_t v = m.uint(a + "attention.value_length_swa", uint64_t(hd_swa)); v != uint64_t(hd_swa))
    fail("{}: metadata '{}attention.value_length_swa': expected {} (= key_length_swa), got {}", m.label, a,
         hd_swa, v);
  if (uint64_t rot = m.uint(a + "rope.dimension_count_swa", uint64_t(hd_swa)); rot != uint64_t(hd_swa))
    fail(
        "{}: metadata '{}rope.dimension_count_swa': expected {} (sliding layers rotate the whole head), got "
        "{}",
        m.label, a, hd_swa, rot);
  if (int64_t(c["num_attention_heads"]) * std::max(hd_full, hd_swa) > (1 << 30))
    fail("{}: metadata '{}attention.key_length_swa' {}: heads x key length is over 2^30", m.label, a, hd_swa);
  const std::vector<int64_t> kv = per_layer(m, a + "attention.head_count_kv", n_layers);
  const std::vector<int64_t> ffn = per_layer(m, a + "feed_forward_length", n_layers);
  auto first_of = [&](bool sliding) {
    for (int64_t l = 0; l < n_layers; ++l)
      if (bool((*flags)[size_t(l)]) == sliding) return l;
    return int64_t(-1);
  };
  const int64_t l_swa = first_of(true), l_full = first_of(false);
  c["head_dim"] = hd_swa;
  c["global_head_dim"] = hd_full;
  c["num_key_value_heads"] = kv[size_t(l_swa >= 0 ? l_swa : 0)];
  if (l_full >= 0) c["num_global_key_value_heads"] = kv[size_t(l_full)];
  c["intermediate_size"] = ffn[0];
  json plc = json::object();
  for (int64_t l = 0; l < n_layers; ++l) {
    const bool sliding = (*flags)[size_t(l)];
    json e = json::object();
    if (kv[size_t(l)] != kv[size_t(sliding ? l_swa : l_full)]) e["num_key_value_heads"] = kv[size_t(l)];
    if (ffn[size_t(l)] != ffn[0]) e["intermediate_size"] = ffn[size_t(l)];
    if (!e.empty()) plc[std::to_string(l)] = e;
  }
  if (!plc.empty()) c["per_layer_config"] = plc;
  const uint64_t shared = m.uint(a + "attention.shared_kv_layers", 0);
  if (shared >= uint64_t(n_layers))
    fail("{}: metadata '{}attention.shared_kv_layers': expected fewer than block_count {}, got {}", m.label,
         a, n_layers, shared);
  c["num_kv_shared_layers"] = shared;
  // v from k: full layers that compute K/V and have no attn_v (all or none of them).
  int with_v = 0, without_v = 0;
  for (int64_t l = 0; l < n_layers - int64_t(shared); ++l)
    if (!(*flags)[size_t(l)])
      (m.h.tensor("blk." + std::to_string(l) + ".attn_v.weight") ? with_v : without_v) += 1;
  if (with_v && without_v)
    fail("{}: tensor 'attn_v.weight': {} full-attention layers have one and {} not (v from k is all or none)",
         m.label, with_v, without_v);
  c["attention_k_eq_v"] = without_v > 0;
  // Per-layer inputs: the width per layer, the table's rows (llama.cpp indexes it by token like the
  // embedding).
  const uint64_t ple = m.uint(a + "embedding_length_per_layer_input", 0);
  c["hidden_size_per_layer_input"] = ple;
  if (ple) {
    const gguf::TensorInfo* t = m.h.tensor("per_layer_token_embd.weight");
    if (!t || t->ne.size() != 2)
      fail("{}: tensor 'per_layer_token_embd.weight' is missing or not 2-D", m.label);
    c["vocab_size_per_layer_input"] = positive(t->ne[1], "per_layer_token_embd.weight ne[1]", m.label);
  }
  c.erase("hidden_act");
  c["hidden_activation"] = "gelu_pytorch_tanh";
  const double cap = m.number(a + "final_logit_softcapping", 0.0);
  if (!(cap >= 0 && cap < 1e30))
    fail("{}: metadata '{}final_logit_softcapping': expected a positive softcap or none, got {}", m.label, a,
         cap);
  c["final_logit_softcapping"] = cap > 0 ? json(cap) : json(nullptr);
  c["attn_logit_softcapping"] = nullptr;
  json full = {{"rope_type", "proportional"},
               {"rope_theta", c["rope_theta"]},
               {"partial_rotary_factor", proportional_factor(m, file, hd_full)}};
  json swa = {{"rope_type", "default"}, {"rope_theta", m.number(a + "rope.freq_base_swa", 10000.0)}};
  c["rope_parameters"] = {{"full_attention", full}, {"sliding_attention", swa}};
  c.erase("rope_theta");
}

std::string_view gemma4_name(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"per_layer_token_embd.weight", "ple_embed"},
      {"per_layer_model_proj.weight", "ple_proj"},
      {"per_layer_proj_norm.weight", "ple_proj_norm"},
      {"layer_output_scale.weight", "layer_scalar"},
      {"inp_gate.weight", "ple_gate"},
      {"proj.weight", "ple_out"},
      {"post_norm.weight", "ple_post_norm"},
  };
  for (auto [g, i] : kNames)
    if (name == g) return i;
  return {};
}

}  // namespace bs::gguf_import
