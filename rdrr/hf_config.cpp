#include "rdrr/hf_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> kArchs = {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "gemma3", "phi3",
                                                  "lfm2", "qwen3_5_text", "qwen3_5", "gemma4_text", "gemma4",
                                                  "mixtral", "qwen3_moe", "gpt_oss"};
  return kArchs;
}

namespace {

// Gemma3TextConfig's defaults: multimodal gemma3 checkpoints write only what differs from them in
// text_config (the 4B model's text_config has no head counts at all).
const json kGemma3TextDefaults = {
    {"vocab_size", 262208},  {"hidden_size", 2304},        {"intermediate_size", 9216},
    {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
    {"head_dim", 256},       {"max_position_embeddings", 131072}, {"rms_norm_eps", 1e-6},
    {"rope_theta", 1000000.0}, {"rope_local_base_freq", 10000.0}, {"query_pre_attn_scalar", 256},
    {"sliding_window", 4096}, {"hidden_activation", "gelu_pytorch_tanh"}, {"tie_word_embeddings", true}};

// Gemma2Config's defaults (released Gemma 2 configs state most of these; the softcaps are on unless a
// config writes null, which is read separately).
const json kGemma2Defaults = {
    {"vocab_size", 256000},  {"hidden_size", 2304},        {"intermediate_size", 9216},
    {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
    {"head_dim", 256},       {"max_position_embeddings", 8192}, {"rms_norm_eps", 1e-6},
    {"rope_theta", 10000.0}, {"query_pre_attn_scalar", 256}, {"sliding_window", 4096},
    {"attn_logit_softcapping", 50.0}, {"final_logit_softcapping", 30.0},
    {"hidden_activation", "gelu_pytorch_tanh"}, {"tie_word_embeddings", true}};

// Fields read from one config object, with defaults for the architecture and the file's name in errors.
struct Reader {
  const json& j;
  const json& defaults;
  const std::string& label;

  const json* find(const char* key) const {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) return &*it;
    auto d = defaults.find(key);
    if (d != defaults.end() && !d->is_null()) return &*d;
    return nullptr;
  }
  bool has(const char* key) const { return find(key) != nullptr; }
  int32_t int_(const char* key) const {
    const json* v = find(key);
    if (!v) fail("{}: missing required field '{}'", label, key);
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > INT32_MAX)
      fail("{}: '{}' must be a non-negative 32-bit integer, got {}", label, key, v->dump());
    return v->get<int32_t>();
  }
  int32_t int_or(const char* key, int32_t dflt) const { return has(key) ? int_(key) : dflt; }
  double num(const char* key) const {
    const json* v = find(key);
    if (!v) fail("{}: missing required field '{}'", label, key);
    if (!v->is_number()) fail("{}: '{}' must be a number, got {}", label, key, v->dump());
    return v->get<double>();
  }
  double num_or(const char* key, double dflt) const { return has(key) ? num(key) : dflt; }
  bool flag_or(const char* key, bool dflt) const {
    const json* v = find(key);
    if (!v) return dflt;
    if (!v->is_boolean()) fail("{}: '{}' must be true or false, got {}", label, key, v->dump());
    return v->get<bool>();
  }
  std::string str_or(const char* key, const std::string& dflt) const {
    const json* v = find(key);
    if (!v) return dflt;
    if (!v->is_string()) fail("{}: '{}' must be a string, got {}", label, key, v->dump());
    return v->get<std::string>();
  }
};

Activation parse_activation(const std::string& s, const std::string& label) {
  if (s == "silu" || s == "swish") return Activation::silu;
  if (s == "gelu_pytorch_tanh" || s == "gelu_tanh") return Activation::gelu_tanh;
  fail("{}: activation '{}' is not supported (expected silu or gelu_pytorch_tanh)", label, s);
}

// One RoPE parameter set: {rope_type|type, rope_theta?, factor, low_freq_factor, ...}.
// Fills scaling fields of `rope` and returns the theta it names (or `theta` when it has none).
double apply_rope_params(const json& p, RopeConfig& rope, double theta, const std::string& label,
                         const std::string& where, double* partial = nullptr) {
  if (!p.is_object()) fail("{}: '{}' must be an object", label, where);
  std::string type = "default";
  if (p.contains("rope_type") && p["rope_type"].is_string()) type = p["rope_type"].get<std::string>();
  else if (p.contains("type") && p["type"].is_string()) type = p["type"].get<std::string>();
  auto num = [&](const char* k, double d) {
    if (!p.contains(k) || p[k].is_null()) return d;
    if (!p[k].is_number()) fail("{}: '{}.{}' must be a number", label, where, k);
    return p[k].get<double>();
  };
  theta = num("rope_theta", theta);
  if (type == "proportional") {
    // Gemma 4's full layers: frequencies over the whole head_dim, only the first fraction nonzero.
    double f = num("partial_rotary_factor", 1.0);
    if (!(f > 0 && f <= 1)) fail("{}: '{}.partial_rotary_factor' must be in (0, 1], got {}", label, where, f);
    rope.scaling = RopeScaling::none;
    rope.partial_factor = float(f);
    return theta;
  }
  if (double f = num("partial_rotary_factor", partial ? *partial : 1.0); partial) *partial = f;
  else if (f != 1.0)
    fail("{}: '{}.partial_rotary_factor' is {}; only full rotary embeddings (1.0) are supported", label, where, f);
  if (type == "default") {
    rope.scaling = RopeScaling::none;
  } else if (type == "linear") {
    rope.scaling = RopeScaling::linear;
    rope.factor = float(num("factor", 1.0));
  } else if (type == "llama3") {
    rope.scaling = RopeScaling::llama3;
    for (const char* k : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!p.contains(k) || !p[k].is_number()) fail("{}: '{}' has rope_type llama3 but no number '{}'", label, where, k);
    rope.factor = float(num("factor", 1.0));
    rope.low_freq_factor = float(num("low_freq_factor", 1.0));
    rope.high_freq_factor = float(num("high_freq_factor", 4.0));
    rope.original_max_position = int32_t(num("original_max_position_embeddings", 8192));
  } else if (type == "longrope" || type == "su") {
    // Phi-3's 128k variants; read_rope completes it from the config (finish_longrope).
    rope.scaling = RopeScaling::longrope;
    for (auto [key, out] : {std::pair{"short_factor", &rope.short_factor}, std::pair{"long_factor", &rope.long_factor}}) {
      const json* v = p.contains(key) ? &p[key] : nullptr;
      if (!v || !v->is_array() || v->empty())
        fail("{}: '{}' has rope_type {} but no list '{}'", label, where, type, key);
      for (auto& e : *v) {
        if (!e.is_number() || !(e.get<double>() > 0) || !std::isfinite(e.get<double>()))
          fail("{}: '{}.{}' must hold positive numbers, got {}", label, where, key, e.dump());
        out->push_back(e.get<float>());
      }
    }
    rope.factor = float(num("factor", 0.0));                    // 0: max_position / original_max_position
    rope.attention_factor = float(num("attention_factor", 0.0));  // 0: from the factor (finish_longrope)
    rope.original_max_position = int32_t(num("original_max_position_embeddings", 0.0));
  } else if (type == "yarn") {
    // GPT-OSS. attention_factor: given, else 0.1 ln(factor) + 1 (transformers' get_mscale; mscale fields refused).
    rope.scaling = RopeScaling::yarn;
    for (const char* k : {"mscale", "mscale_all_dim"})
      if (p.contains(k) && !p[k].is_null()) fail("{}: '{}.{}' (DeepSeek's YaRN) is not supported", label, where, k);
    rope.factor = float(num("factor", 1.0));
    if (!(rope.factor >= 1)) fail("{}: '{}.factor' must be at least 1 for yarn, got {}", label, where, rope.factor);
    rope.beta_fast = float(num("beta_fast", 32.0));
    rope.beta_slow = float(num("beta_slow", 1.0));
    rope.original_max_position = int32_t(num("original_max_position_embeddings", 0.0));  // 0: read_rope fills it
    if (p.contains("truncate") && p["truncate"].is_boolean()) rope.yarn_truncate = p["truncate"].get<bool>();
    double af = num("attention_factor", 0.0);
    rope.attention_factor = float(af > 0 ? af : rope.factor > 1 ? 0.1 * std::log(double(rope.factor)) + 1.0 : 1.0);
  } else {
    fail("{}: '{}': rope_type '{}' is not supported (default, linear, llama3, longrope, yarn)", label, where, type);
  }
  return theta;
}

// LongRoPE's sizes as transformers derives them (_compute_longrope_parameters): original_max_position from
// the parameters or the config (Phi-3 keeps it there), the factor max_position / original_max_position where
// none is given, and the attention factor from the factor (longrope_attention_factor) where none is given.
void finish_longrope(const Reader& r, ModelConfig& c) {
  auto& rp = c.rope;
  if (rp.original_max_position <= 0) rp.original_max_position = r.int_or("original_max_position_embeddings", c.max_seq);
  if (rp.original_max_position <= 0)
    fail("{}: longrope needs a positive original_max_position_embeddings, got {}", r.label, rp.original_max_position);
  const double factor = rp.factor > 0 ? rp.factor : double(c.max_seq) / rp.original_max_position;
  rp.factor = float(factor);
  if (!(rp.attention_factor > 0)) rp.attention_factor = longrope_attention_factor(factor, rp.original_max_position);
}

void read_rope(const Reader& r, const std::string& model_type, ModelConfig& c) {
  double theta = r.num_or("rope_theta", 10000.0);
  // Qwen 3.5 rotates the first partial_rotary_factor of each head (0.25); the others rotate it all.
  const bool qwen35 = model_type == "qwen3_5_text";
  double partial_factor = r.num_or("partial_rotary_factor", 1.0);
  double* partial = qwen35 ? &partial_factor : nullptr;
  double local = model_type == "gemma3_text" ? r.num_or("rope_local_base_freq", 10000.0) : 0.0;
  const std::string& label = r.label;
  if (const json* p = r.find("rope_parameters")) {
    // transformers 5: either one parameter set, or one per layer type (Gemma 3: full and sliding).
    if (p->contains("full_attention") || p->contains("sliding_attention")) {
      if (p->contains("full_attention"))
        theta = apply_rope_params((*p)["full_attention"], c.rope, theta, label, "rope_parameters.full_attention");
      if (p->contains("sliding_attention")) {
        RopeConfig local_rope;
        local = apply_rope_params((*p)["sliding_attention"], local_rope, local > 0 ? local : theta, label,
                                  "rope_parameters.sliding_attention");
        if (local_rope.scaling != RopeScaling::none || local_rope.partial_factor != 1.0f)
          fail("{}: rope_parameters.sliding_attention: scaled RoPE on sliding layers is not supported", label);
      }
    } else {
      theta = apply_rope_params(*p, c.rope, theta, label, "rope_parameters", partial);
    }
  } else if (const json* s = r.find("rope_scaling")) {
    apply_rope_params(*s, c.rope, theta, label, "rope_scaling");
  }
  if (qwen35) {
    double rd = partial_factor * c.head_dim;
    if (!(partial_factor > 0 && partial_factor <= 1) || rd != std::floor(rd) || int32_t(rd) % 2)
      fail("{}: partial_rotary_factor {} does not give an even rotary width of head_dim {}", label, partial_factor,
           c.head_dim);
    if (partial_factor != 1.0) c.rotary_dim = int32_t(rd);
  } else if (double f = r.num_or("partial_rotary_factor", 1.0); f != 1.0) {
    fail("{}: partial_rotary_factor is {}; only full rotary embeddings (1.0) are supported", label, f);
  }
  if (!(theta > 0)) fail("{}: rope_theta must be positive, got {}", label, theta);
  if (c.rope.scaling == RopeScaling::longrope) finish_longrope(r, c);
  if (c.rope.scaling == RopeScaling::yarn && c.rope.original_max_position <= 0) c.rope.original_max_position = c.max_seq;
  c.rope.theta = float(theta);
  c.rope.local_theta = float(local);
}

std::vector<AttentionType> read_layer_types(const Reader& r, const std::string& model_type, int32_t n_layers,
                                            bool& any_sliding, std::vector<LayerKind>* kinds = nullptr) {
  std::vector<AttentionType> types;
  if (const json* lt = r.find("layer_types")) {
    if (!lt->is_array()) fail("{}: 'layer_types' must be a list", r.label);
    for (auto& t : *lt) {
      std::string s = t.is_string() ? t.get<std::string>() : t.dump();
      if (s == "full_attention") types.push_back(AttentionType::full);
      else if (s == "sliding_attention") types.push_back(AttentionType::sliding);
      else if (s == "conv" && model_type == "lfm2") types.push_back(AttentionType::full);  // kind: read_lfm2
      else if (s == "linear_attention" && kinds) types.push_back(AttentionType::full);  // Gated DeltaNet (Qwen 3.5)
      else fail("{}: layer_types: '{}' is not supported (full_attention, sliding_attention)", r.label, s);
    }
    if (types.size() != size_t(n_layers))
      fail("{}: layer_types has {} entries, num_hidden_layers is {}", r.label, types.size(), n_layers);
    if (kinds)
      for (auto& t : *lt)
        kinds->push_back(t == "linear_attention" ? LayerKind::linear_attention : LayerKind::attention);
  } else if (model_type == "lfm2") {
    types.assign(size_t(n_layers), AttentionType::full);  // conv or attention: read_lfm2
  } else if (model_type == "gemma3_text") {
    // Every `pattern`-th layer is global, the others local (Gemma 3: 5 local : 1 global).
    int32_t pattern = r.int_or("sliding_window_pattern", r.int_or("_sliding_window_pattern", 6));
    if (pattern <= 0) fail("{}: sliding_window_pattern must be positive", r.label);
    for (int32_t i = 0; i < n_layers; ++i)
      types.push_back((i + 1) % pattern == 0 ? AttentionType::full : AttentionType::sliding);
  } else if (model_type == "gemma2") {
    // Gemma2Config: layer i slides when (i + 1) % 2 != 0, so even layers are local, odd ones global.
    for (int32_t i = 0; i < n_layers; ++i)
      types.push_back(i % 2 == 0 ? AttentionType::sliding : AttentionType::full);
  } else if (model_type == "mistral" || model_type == "phi3" || model_type == "mixtral") {
    // Every layer slides when sliding_window is set (Phi-3 mini 4k: 2047), none when it is null.
    types.assign(size_t(n_layers), r.has("sliding_window") ? AttentionType::sliding : AttentionType::full);
  } else if ((model_type == "qwen2" || model_type == "qwen3") && r.flag_or("use_sliding_window", false)) {
    int32_t first = r.int_or("max_window_layers", n_layers);
    for (int32_t i = 0; i < n_layers; ++i)
      types.push_back(i >= first ? AttentionType::sliding : AttentionType::full);
  } else {
    types.assign(size_t(n_layers), AttentionType::full);
  }
  any_sliding = std::count(types.begin(), types.end(), AttentionType::sliding) > 0;
  return types;
}

// Gemma 4: per-layer attention shapes (per_layer_config, or global_head_dim and
// num_global_key_value_heads for the full layers), k = v on full layers, KV sharing, double-wide MLPs
// on the shared layers, and per-layer inputs. Runs after read_layer_types.
void read_gemma4(const Reader& r, DType weight_dtype, ModelConfig& c) {
  const std::string& label = r.label;
  if (r.flag_or("enable_moe_block", false)) fail("{}: enable_moe_block=true (mixture of experts) is not supported", label);
  if (r.flag_or("use_bidirectional_attention", false))
    fail("{}: use_bidirectional_attention=true is not supported", label);
  const size_t n = size_t(c.n_layers);
  c.layer_head_dims.assign(n, c.head_dim);
  c.layer_kv_heads.assign(n, c.n_kv_heads);
  c.layer_ffn_dims.assign(n, c.ffn_dim);
  int32_t global_hd = r.int_or("global_head_dim", 0), global_kv = r.int_or("num_global_key_value_heads", 0);
  for (size_t l = 0; l < n; ++l)
    if (!c.sliding(int32_t(l))) {
      if (global_hd > 0) c.layer_head_dims[l] = global_hd;
      if (global_kv > 0) c.layer_kv_heads[l] = global_kv;
    }
  if (const json* plc = r.find("per_layer_config")) {
    if (!plc->is_object()) fail("{}: 'per_layer_config' must be an object of layer index -> sizes", label);
    for (auto& [k, v] : plc->items()) {
      size_t l = 0;
      try {
        l = std::stoul(k);
      } catch (const std::exception&) {
        l = n;
      }
      if (l >= n || std::to_string(l) != k) fail("{}: per_layer_config: '{}' is not a layer index below {}", label, k, n);
      static const json kNoDefaults = json::object();
      Reader lr{v, kNoDefaults, label};
      if (!v.is_object()) fail("{}: per_layer_config.{} must be an object", label, k);
      for (auto& [f, x] : v.items())
        if (f != "head_dim" && f != "num_key_value_heads" && f != "intermediate_size")
          fail("{}: per_layer_config.{}.{} is not supported (head_dim, num_key_value_heads, intermediate_size)", label, k, f);
      c.layer_head_dims[l] = lr.int_or("head_dim", c.layer_head_dims[l]);
      c.layer_kv_heads[l] = lr.int_or("num_key_value_heads", c.layer_kv_heads[l]);
      c.layer_ffn_dims[l] = lr.int_or("intermediate_size", c.layer_ffn_dims[l]);
    }
  }
  c.v_from_k = r.flag_or("attention_k_eq_v", false);
  c.v_norm = true;
  c.layer_scalar = true;
  c.kv_shared_layers = r.int_or("num_kv_shared_layers", 0);
  if (c.kv_shared_layers >= c.n_layers)
    fail("{}: num_kv_shared_layers {} leaves no layer to compute K/V ({} layers)", label, c.kv_shared_layers, c.n_layers);
  if (r.flag_or("use_double_wide_mlp", false))
    for (int32_t l = c.n_layers - c.kv_shared_layers; l < c.n_layers; ++l) c.layer_ffn_dims[size_t(l)] *= 2;
  c.ple_dim = r.int_or("hidden_size_per_layer_input", 0);
  if (c.ple_dim > 0) {
    c.ple_vocab = r.int_or("vocab_size_per_layer_input", c.vocab);
    float s = std::sqrt(float(c.ple_dim));
    if (weight_dtype == DType::BF16) s = bf16_to_float(float_to_bf16(s));
    else if (weight_dtype == DType::F16) s = round_half(s);
    c.ple_embed_scale = s;
  }
}

void add_ids(const json* v, std::vector<int32_t>& ids, const std::string& label, const char* field) {
  if (!v || v->is_null()) return;
  auto add = [&](const json& x) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > INT32_MAX)
      fail("{}: '{}' must be a token id or a list of them, got {}", label, field, x.dump());
    int32_t id = x.get<int32_t>();
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  if (v->is_array()) for (auto& x : *v) add(x);
  else add(*v);
}

// LFM2 (Lfm2Config): which layers are short convolutions (layer_types "conv", or older configs'
// full_attn_idxs naming the attention layers), the conv width, its norm_eps, and the FFN width after
// Lfm2MLP's block_auto_adjust_ff_dim (2/3 of intermediate_size, times block_ffn_dim_multiplier,
// rounded up to block_multiple_of).
void read_lfm2(const Reader& r, ModelConfig& c) {
  const std::string& label = r.label;
  c.layer_kinds.assign(size_t(c.n_layers), LayerKind::short_conv);
  if (const json* lt = r.find("layer_types")) {
    for (size_t i = 0; i < lt->size(); ++i)
      if ((*lt)[i] != "conv") c.layer_kinds[i] = LayerKind::attention;  // read_layer_types checked the names
  } else if (const json* idx = r.find("full_attn_idxs")) {
    if (!idx->is_array()) fail("{}: 'full_attn_idxs' must be a list of layer indices", label);
    for (auto& v : *idx) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= c.n_layers)
        fail("{}: full_attn_idxs: {} is not a layer index (0 .. {})", label, v.dump(), c.n_layers - 1);
      c.layer_kinds[v.get<size_t>()] = LayerKind::attention;
    }
  } else {
    fail("{}: an lfm2 config needs 'layer_types' or 'full_attn_idxs' to say which layers are attention", label);
  }
  // Lfm2Config's constructor names it tie_embedding; a config.json may carry either name.
  if (!r.has("tie_word_embeddings")) c.tied_embeddings = r.flag_or("tie_embedding", true);
  c.conv_kernel = r.int_or("conv_L_cache", 3);
  if (r.flag_or("conv_bias", false)) fail("{}: conv_bias=true is not supported (LFM2 releases have none)", label);
  c.norm_eps = float(r.num_or("norm_eps", 1e-5));
  if (r.flag_or("block_auto_adjust_ff_dim", false)) {
    int64_t ff = int64_t(2.0 * c.ffn_dim / 3);
    if (r.has("block_ffn_dim_multiplier")) {
      double m = r.num("block_ffn_dim_multiplier");
      if (!(m > 0 && m <= 64)) fail("{}: block_ffn_dim_multiplier must be in (0, 64], got {}", label, m);
      ff = int64_t(m * double(ff));
    }
    int64_t multiple = r.int_or("block_multiple_of", 256);
    if (multiple <= 0) fail("{}: block_multiple_of must be positive, got {}", label, multiple);
    ff = multiple * ((ff + multiple - 1) / multiple);
    if (ff <= 0 || ff > INT32_MAX) fail("{}: block_auto_adjust_ff_dim gives an FFN width of {}", label, ff);
    c.ffn_dim = int32_t(ff);
  }
}

// Mixture of experts (issue 16): Mixtral (top-k of the softmax, renormalized), Qwen3-MoE (norm_topk_prob;
// moe_intermediate_size; every layer sparse), GPT-OSS (router and expert biases, top-k then softmax, the
// clamped SwiGLU with alpha 1.702, attention sinks, o_proj bias).
void read_moe(const Reader& r, const std::string& mt, ModelConfig& c) {
  const std::string& label = r.label;
  c.n_experts = r.has("num_local_experts") ? r.int_("num_local_experts") : r.int_("num_experts");
  c.n_experts_used = r.int_("num_experts_per_tok");
  c.expert_ffn_dim = mt == "qwen3_moe" ? r.int_("moe_intermediate_size") : c.ffn_dim;
  if (mt == "qwen3_moe") {
    c.moe_norm_topk = r.flag_or("norm_topk_prob", false);
    if (r.int_or("decoder_sparse_step", 1) != 1) fail("{}: decoder_sparse_step != 1 (dense layers between MoE ones) is not supported", label);
    if (const json* m = r.find("mlp_only_layers"); m && !m->empty())
      fail("{}: mlp_only_layers {} (dense layers) is not supported", label, m->dump());
    if (r.flag_or("use_sliding_window", false)) fail("{}: use_sliding_window=true is not supported for qwen3_moe", label);
  }
  if (mt == "gpt_oss") {
    c.moe_router_bias = c.moe_expert_bias = true;
    c.swiglu_alpha = 1.702f;  // GptOssExperts.alpha, not in the config
    c.swiglu_limit = float(r.num_or("swiglu_limit", 7.0));
    c.attn_sinks = true;
  }
  if (c.n_experts < 1 || c.n_experts > 256 || c.n_experts_used < 1 || c.n_experts_used > std::min(c.n_experts, 8))
    fail("{}: {} experts, {} per token: expected 1..256 experts and 1..min(experts, 8) per token", label, c.n_experts,
         c.n_experts_used);
  if (c.expert_ffn_dim <= 0) fail("{}: the experts' intermediate size must be positive, got {}", label, c.expert_ffn_dim);
}

const json* field(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

HfArch hf_arch(const json& config, const std::string& label) {
  if (!config.is_object()) fail("{}: must be a JSON object", label);
  std::string mt = config.contains("model_type") && config["model_type"].is_string()
                       ? config["model_type"].get<std::string>() : "";
  const auto& sup = supported_architectures();
  if (std::find(sup.begin(), sup.end(), mt) == sup.end()) {
    std::string list;
    for (auto& a : sup) list += (list.empty() ? "" : ", ") + a;
    fail("{}: model_type '{}' is not supported (supported: {})", label, mt, list);
  }
  if (mt == "gemma3") return {"gemma3_text", true};
  if (mt == "qwen3_5") return {"qwen3_5_text", true};
  if (mt == "gemma4") return {"gemma4_text", true};
  return {mt, false};
}

ModelConfig config_from_hf(const json& config, const json* generation, DType weight_dtype, const std::string& label) {
  HfArch arch = hf_arch(config, label);
  const json* text = &config;
  static const json kNone = json::object();
  if (arch.multimodal) {
    text = field(config, "text_config");
    if (!text || !text->is_object()) fail("{}: multimodal checkpoint without an object 'text_config'", label);
  }
  const std::string& mt = arch.model_type;
  const bool gemma4 = mt == "gemma4_text";
  const bool gemma3 = mt == "gemma3_text", gemma = gemma3 || gemma4 || mt == "gemma2";
  Reader r{*text, gemma3 ? kGemma3TextDefaults : mt == "gemma2" ? kGemma2Defaults : kNone, label};

  ModelConfig c;
  c.arch = mt;
  c.n_layers = r.int_("num_hidden_layers");
  c.dim = r.int_("hidden_size");
  c.ffn_dim = r.int_("intermediate_size");
  c.n_heads = r.int_("num_attention_heads");
  c.n_kv_heads = r.int_or("num_key_value_heads", c.n_heads);
  c.head_dim = r.int_or("head_dim", c.n_heads > 0 ? c.dim / c.n_heads : 0);
  c.vocab = r.int_("vocab_size");
  c.max_seq = r.int_or("max_position_embeddings", 2048);
  c.norm_eps = float(r.num_or("rms_norm_eps", 1e-6));
  c.act = parse_activation(r.str_or(gemma ? "hidden_activation" : "hidden_act", "silu"), label);
  // HF's default for tie_word_embeddings is true for Gemma and false for the others. A multimodal
  // config may state it at the top level.
  bool tie_default = gemma || mt == "lfm2";  // Lfm2Config ties by default too
  if (arch.multimodal && field(config, "tie_word_embeddings")) tie_default = config["tie_word_embeddings"].get<bool>();
  c.tied_embeddings = r.flag_or("tie_word_embeddings", tie_default);

  bool attention_bias = r.flag_or("attention_bias", false);
  if (mt == "qwen2") {
    c.qkv_bias = true;  // Qwen2 always has q/k/v biases (and none on o_proj)
  } else if (mt == "gpt_oss") {
    c.qkv_bias = c.attn_out_bias = attention_bias;  // GPT-OSS: q/k/v and o_proj biases
  } else if (attention_bias) {
    fail("{}: attention_bias=true adds an o_proj bias for {}, which is not supported", label, mt);
  }
  if (r.flag_or("mlp_bias", false)) fail("{}: mlp_bias=true is not supported", label);
  c.qk_norm = mt == "qwen3" || mt == "qwen3_moe" || gemma3 || gemma4 || mt == "lfm2" || mt == "qwen3_5_text";  // LFM2: q_layernorm / k_layernorm
  if (gemma) {
    c.norm_offset = !gemma4;  // Gemma 4's norms scale by w itself
    c.sandwich_norm = true;
    // Gemma's scaled embedding multiplies by sqrt(hidden) cast to the weights' dtype.
    float s = std::sqrt(float(c.dim));
    if (weight_dtype == DType::BF16) s = bf16_to_float(float_to_bf16(s));
    else if (weight_dtype == DType::F16) s = round_half(s);
    c.embed_scale = s;
    // Gemma 4 normalizes q and k and attends with scale 1 (no query_pre_attn_scalar).
    double qpas = gemma4 ? r.num_or("query_pre_attn_scalar", 1.0) : r.num("query_pre_attn_scalar");
    if (!(qpas > 0)) fail("{}: query_pre_attn_scalar must be positive, got {}", label, qpas);
    c.attn_scale = float(1.0 / std::sqrt(qpas));
    // An explicit null turns a softcap off (HF tests `is not None`); absent, the defaults apply.
    auto cap = [&](const char* key) {
      auto it = text->find(key);
      if (it != text->end() && it->is_null()) return 0.0f;
      double v = r.num_or(key, 0.0);
      if (v < 0) fail("{}: '{}' must not be negative, got {}", label, key, v);
      return float(v);
    };
    c.attn_softcap = cap("attn_logit_softcapping");
    c.final_softcap = cap("final_logit_softcapping");
  }
  read_rope(r, mt, c);
  if (mt == "qwen3_5_text") {
    // Qwen 3.5 / 3.6: (1 + w) RMSNorms (zero-centred weights; the gated norm inside the DeltaNet layer is
    // the exception, plain w), gated full attention, Gated DeltaNet linear-attention layers.
    c.norm_offset = true;
    c.attn_output_gate = r.flag_or("attn_output_gate", true);
    c.linear_k_heads = r.int_("linear_num_key_heads");
    c.linear_v_heads = r.int_("linear_num_value_heads");
    c.linear_k_dim = r.int_("linear_key_head_dim");
    c.linear_v_dim = r.int_("linear_value_head_dim");
    c.linear_conv = r.int_or("linear_conv_kernel_dim", 4);
  }
  bool any_sliding = false;
  c.layer_types = read_layer_types(r, mt, c.n_layers, any_sliding, mt == "qwen3_5_text" ? &c.layer_kinds : nullptr);
  if (any_sliding) c.sliding_window = r.int_("sliding_window");
  if (mt == "lfm2") read_lfm2(r, c);
  // Sliding layers with a local base of their own (Gemma) rotate unscaled; where they share the global base
  // (Mistral, Phi-3 128k with its sliding_window 262144) HF scales them too, and so does rope_inv_freq.

  if (gemma4) read_gemma4(r, weight_dtype, c);
  if (mt == "mixtral" || mt == "qwen3_moe" || mt == "gpt_oss") read_moe(r, mt, c);

  // EOS: generation_config.json first (what generate() uses), then config.json, then text_config.
  if (generation) add_ids(field(*generation, "eos_token_id"), c.eos_ids, "generation_config.json", "eos_token_id");
  add_ids(field(config, "eos_token_id"), c.eos_ids, label, "eos_token_id");
  if (text != &config) add_ids(field(*text, "eos_token_id"), c.eos_ids, label, "text_config.eos_token_id");
  std::vector<int32_t> bos;
  if (generation) add_ids(field(*generation, "bos_token_id"), bos, "generation_config.json", "bos_token_id");
  add_ids(field(config, "bos_token_id"), bos, label, "bos_token_id");
  if (text != &config) add_ids(field(*text, "bos_token_id"), bos, label, "text_config.bos_token_id");
  if (!bos.empty()) c.bos_id = bos[0];

  validate_config(c, label);
  return c;
}

void validate_config(const ModelConfig& c, const std::string& label) {
  auto positive = [&](const char* name, int64_t v) {
    if (v <= 0) fail("{}: {} must be positive, got {}", label, name, v);
  };
  positive("n_layers", c.n_layers);
  positive("dim", c.dim);
  positive("ffn_dim", c.ffn_dim);
  positive("n_heads", c.n_heads);
  positive("n_kv_heads", c.n_kv_heads);
  positive("head_dim", c.head_dim);
  positive("vocab", c.vocab);
  positive("max_seq", c.max_seq);
  if (c.rope.scaling == RopeScaling::longrope) {
    const size_t pairs = size_t(c.rot_dim() / 2);
    if (c.rope.short_factor.size() != pairs || c.rope.long_factor.size() != pairs)
      fail("{}: longrope short_factor / long_factor have {} / {} entries, expected one per rotated pair ({})", label,
           c.rope.short_factor.size(), c.rope.long_factor.size(), pairs);
    if (!(c.rope.attention_factor > 0) || c.rope.original_max_position <= 0)
      fail("{}: longrope needs a positive attention factor and original_max_position, got {} and {}", label,
           c.rope.attention_factor, c.rope.original_max_position);
  }
  if (c.n_heads % c.n_kv_heads)
    fail("{}: n_heads {} is not a multiple of n_kv_heads {}", label, c.n_heads, c.n_kv_heads);
  if (c.head_dim % 2) fail("{}: head_dim {} must be even for RoPE", label, c.head_dim);
  if (int64_t(c.n_heads) * c.head_dim > INT32_MAX) fail("{}: n_heads * head_dim overflows", label);
  if (c.layer_types.size() != size_t(c.n_layers))
    fail("{}: layer_types has {} entries, expected n_layers = {}", label, c.layer_types.size(), c.n_layers);
  bool sliding = std::count(c.layer_types.begin(), c.layer_types.end(), AttentionType::sliding) > 0;
  if (sliding && c.sliding_window <= 0)
    fail("{}: sliding layers need a positive sliding_window, got {}", label, c.sliding_window);
  if (!(c.norm_eps > 0)) fail("{}: norm_eps must be positive, got {}", label, c.norm_eps);
  // Gemma 4's per-layer shapes and sharing.
  for (auto* v : {&c.layer_head_dims, &c.layer_kv_heads, &c.layer_ffn_dims})
    if (!v->empty() && v->size() != size_t(c.n_layers))
      fail("{}: per-layer sizes have {} entries, expected n_layers = {}", label, v->size(), c.n_layers);
  for (int32_t l = 0; l < c.n_layers; ++l) {
    int32_t hd = c.head_dim_of(l), kv = c.kv_heads_of(l);
    if (hd <= 0 || hd % 2 || kv <= 0 || c.n_heads % kv || c.ffn_dim_of(l) <= 0)
      fail("{}: layer {}: head_dim {}, {} KV heads, ffn {}: expected a positive even head_dim and KV heads dividing "
           "{} heads", label, l, hd, kv, c.ffn_dim_of(l), c.n_heads);
    int32_t src = c.kv_source(l);
    if (!c.computes_kv(src) || c.head_dim_of(src) != hd || c.kv_heads_of(src) != kv)
      fail("{}: layer {} shares the KV cache of layer {}, which computes none or has another shape", label, l, src);
  }
  if (c.kv_shared_layers < 0 || c.kv_shared_layers >= c.n_layers)
    fail("{}: kv_shared_layers {} must be in [0, n_layers = {})", label, c.kv_shared_layers, c.n_layers);
  // MoE (issue 16): the router and grouping kernels keep up to 256 experts' logits and 8 choices per token.
  if (c.n_experts < 0 || c.n_experts > 256 || (c.n_experts > 0 && (c.n_experts_used < 1 ||
                                                                   c.n_experts_used > std::min(c.n_experts, 8) ||
                                                                   c.expert_ffn_dim <= 0)))
    fail("{}: {} experts, {} per token, expert width {}: expected up to 256 experts, 1..min(experts, 8) per token and "
         "a positive width", label, c.n_experts, c.n_experts_used, c.expert_ffn_dim);
  if (c.ple_dim < 0 || (c.ple_dim > 0 && c.ple_vocab <= 0))
    fail("{}: per-layer inputs of width {} need a positive vocabulary, got {}", label, c.ple_dim, c.ple_vocab);
  for (int32_t id : c.eos_ids)
    if (id >= c.vocab) fail("{}: eos id {} is outside the vocabulary ({})", label, id, c.vocab);
  // Hybrid layers: LFM2 short convs, Qwen 3.5 Gated DeltaNet.
  if (!c.layer_kinds.empty() && c.layer_kinds.size() != size_t(c.n_layers))
    fail("{}: layer_kinds has {} entries, expected n_layers = {}", label, c.layer_kinds.size(), c.n_layers);
  bool conv = std::count(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::short_conv) > 0;
  // short_conv.comp: the first block of 16 rows alone reads the state of conv_kernel - 1 rows.
  if (conv && (c.conv_kernel < 2 || c.conv_kernel > 17))
    fail("{}: short-conv layers need a conv width (conv_L_cache) in [2, 17], got {}", label, c.conv_kernel);
  if (c.rotary_dim < 0 || c.rotary_dim > c.head_dim || c.rotary_dim % 2)
    fail("{}: rotary_dim {} must be even and within head_dim {}", label, c.rotary_dim, c.head_dim);
  if (std::count(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::linear_attention)) {
    positive("linear_num_key_heads", c.linear_k_heads);
    positive("linear_num_value_heads", c.linear_v_heads);
    positive("linear_key_head_dim", c.linear_k_dim);
    positive("linear_value_head_dim", c.linear_v_dim);
    positive("linear_conv_kernel_dim", c.linear_conv);
    if (2 * int64_t(c.linear_k_heads) * c.linear_k_dim + int64_t(c.linear_v_heads) * c.linear_v_dim > INT32_MAX / 8)
      fail("{}: linear attention of {} q/k heads of {} and {} v heads of {} is too large", label, c.linear_k_heads,
           c.linear_k_dim, c.linear_v_heads, c.linear_v_dim);
    if (c.linear_v_heads % c.linear_k_heads)
      fail("{}: linear_num_value_heads {} is not a multiple of linear_num_key_heads {}", label, c.linear_v_heads,
           c.linear_k_heads);
    // The recurrence kernels keep a state column per invocation and a head's k in shared memory.
    if (c.linear_k_dim > 256 || c.linear_v_dim > 256 || c.linear_conv > 8)
      fail("{}: linear attention with key/value head dims {}/{} and conv {} is not supported (at most 256/256/8)",
           label, c.linear_k_dim, c.linear_v_dim, c.linear_conv);
  }
}

json read_json_file(const fs::path& path) {
  std::ifstream f(path);
  if (!f) fail("{}: cannot open", path.string());
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", path.string(), e.what());
  }
}

ModelConfig load_hf_config(const fs::path& dir, DType weight_dtype) {
  json config = read_json_file(dir / "config.json");
  json gen;
  bool has_gen = fs::exists(dir / "generation_config.json");
  if (has_gen) gen = read_json_file(dir / "generation_config.json");
  return config_from_hf(config, has_gen ? &gen : nullptr, weight_dtype, (dir / "config.json").string());
}

}  // namespace bs
