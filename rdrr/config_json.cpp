// ModelConfig <-> JSON for manifest.json's x-blueshift.config. Every field is written by its C++ name,
// so the manifest is the complete model description and needs no HF config.json to run.
#include <algorithm>

#include "rdrr/hf_config.h"
#include "runtime/base/error.h"

namespace bs {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

const char* kActivations[] = {"silu", "gelu_tanh"};
const char* kScalings[] = {"none", "linear", "llama3", "longrope", "yarn"};
const char* kAttention[] = {"full", "sliding"};
const char* kLayerKinds[] = {"attention", "linear_attention", "short_conv"};

template <size_t N>
int parse_enum(const json& j, const char* (&names)[N], const std::string& label, const char* key) {
  if (!j.is_string()) fail("{}: x-blueshift.config.{} must be a string", label, key);
  auto s = j.get<std::string>();
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) return int(i);
  fail("{}: x-blueshift.config.{}: unknown value '{}'", label, key, s);
}

struct Fields {
  const json& j;
  const std::string& label;
  const json& at(const char* key) const {
    auto it = j.find(key);
    if (it == j.end()) fail("{}: x-blueshift.config is missing '{}'", label, key);
    return *it;
  }
  int32_t i32(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < INT32_MIN || v.get<int64_t>() > INT32_MAX)
      fail("{}: x-blueshift.config.{} must be a 32-bit integer, got {}", label, key, v.dump());
    return v.get<int32_t>();
  }
  float f32(const char* key) const {
    const json& v = at(key);
    if (!v.is_number()) fail("{}: x-blueshift.config.{} must be a number, got {}", label, key, v.dump());
    return v.get<float>();
  }
  bool flag(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail("{}: x-blueshift.config.{} must be a boolean, got {}", label, key, v.dump());
    return v.get<bool>();
  }
};

}  // namespace

ordered_json config_to_json(const ModelConfig& c) {
  ordered_json j;
  j["arch"] = c.arch;
  j["n_layers"] = c.n_layers;
  j["dim"] = c.dim;
  j["ffn_dim"] = c.ffn_dim;
  j["n_heads"] = c.n_heads;
  j["n_kv_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["vocab"] = c.vocab;
  j["max_seq"] = c.max_seq;
  j["norm_eps"] = c.norm_eps;
  j["norm_offset"] = c.norm_offset;
  j["qk_norm"] = c.qk_norm;
  j["qkv_bias"] = c.qkv_bias;
  j["sandwich_norm"] = c.sandwich_norm;
  j["tied_embeddings"] = c.tied_embeddings;
  j["embed_scale"] = c.embed_scale;
  j["act"] = kActivations[int(c.act)];
  j["attn_scale"] = c.attn_scale;
  j["attn_softcap"] = c.attn_softcap;
  j["final_softcap"] = c.final_softcap;
  j["sliding_window"] = c.sliding_window;
  auto& lt = j["layer_types"] = ordered_json::array();
  for (auto t : c.layer_types) lt.push_back(kAttention[int(t)]);
  j["rope"] = {{"theta", c.rope.theta},
               {"local_theta", c.rope.local_theta},
               {"scaling", kScalings[int(c.rope.scaling)]},
               {"factor", c.rope.factor},
               {"low_freq_factor", c.rope.low_freq_factor},
               {"high_freq_factor", c.rope.high_freq_factor},
               {"original_max_position", c.rope.original_max_position}};
  // Hybrid layers and the LFM2 / Qwen 3.5 fields, written only where a model has them (older manifests
  // stay as they were, and older readers still read plain models).
  if (!c.layer_kinds.empty()) {
    auto& lk = j["layer_kinds"] = ordered_json::array();
    for (auto k : c.layer_kinds) lk.push_back(kLayerKinds[int(k)]);
  }
  if (c.conv_kernel > 0) j["conv_kernel"] = c.conv_kernel;  // LFM2
  if (c.rotary_dim) j["rotary_dim"] = c.rotary_dim;
  if (c.attn_output_gate) j["attn_output_gate"] = true;
  if (c.linear_k_heads) {
    j["linear_k_heads"] = c.linear_k_heads;
    j["linear_v_heads"] = c.linear_v_heads;
    j["linear_k_dim"] = c.linear_k_dim;
    j["linear_v_dim"] = c.linear_v_dim;
    j["linear_conv"] = c.linear_conv;
  }
  j["eos_ids"] = c.eos_ids;
  j["bos_id"] = c.bos_id;
  // Gemma 4's fields, written only where a model uses them (older manifests stay as they were).
  if (c.rope.partial_factor != 1.0f) j["rope"]["partial_factor"] = c.rope.partial_factor;
  if (c.rope.scaling == RopeScaling::longrope) {  // Phi-3 128k
    j["rope"]["short_factor"] = c.rope.short_factor;
    j["rope"]["long_factor"] = c.rope.long_factor;
    j["rope"]["attention_factor"] = c.rope.attention_factor;
  }
  if (c.rope.scaling == RopeScaling::yarn) {  // GPT-OSS
    j["rope"]["beta_fast"] = c.rope.beta_fast;
    j["rope"]["beta_slow"] = c.rope.beta_slow;
    j["rope"]["yarn_truncate"] = c.rope.yarn_truncate;
    j["rope"]["attention_factor"] = c.rope.attention_factor;
  }
  if (c.n_experts) {  // mixture of experts (issue 16), written only where a model has them
    j["n_experts"] = c.n_experts;
    j["n_experts_used"] = c.n_experts_used;
    j["expert_ffn_dim"] = c.expert_ffn_dim;
    j["moe_norm_topk"] = c.moe_norm_topk;
    j["moe_router_bias"] = c.moe_router_bias;
    j["moe_expert_bias"] = c.moe_expert_bias;
    j["swiglu_alpha"] = c.swiglu_alpha;
    j["swiglu_limit"] = c.swiglu_limit;
  }
  if (c.attn_out_bias) j["attn_out_bias"] = true;
  if (c.attn_sinks) j["attn_sinks"] = true;
  if (!c.layer_head_dims.empty()) j["layer_head_dims"] = c.layer_head_dims;
  if (!c.layer_kv_heads.empty()) j["layer_kv_heads"] = c.layer_kv_heads;
  if (!c.layer_ffn_dims.empty()) j["layer_ffn_dims"] = c.layer_ffn_dims;
  if (c.v_from_k) j["v_from_k"] = true;
  if (c.v_norm) j["v_norm"] = true;
  if (c.kv_shared_layers) j["kv_shared_layers"] = c.kv_shared_layers;
  if (c.layer_scalar) j["layer_scalar"] = true;
  if (c.ple_dim) {
    j["ple_dim"] = c.ple_dim;
    j["ple_vocab"] = c.ple_vocab;
    j["ple_embed_scale"] = c.ple_embed_scale;
  }
  return j;
}

ModelConfig config_from_json(const json& j, const std::string& label) {
  if (!j.is_object()) fail("{}: x-blueshift.config must be an object", label);
  Fields f{j, label};
  ModelConfig c;
  const json& arch = f.at("arch");
  if (!arch.is_string()) fail("{}: x-blueshift.config.arch must be a string", label);
  c.arch = arch.get<std::string>();
  c.n_layers = f.i32("n_layers");
  c.dim = f.i32("dim");
  c.ffn_dim = f.i32("ffn_dim");
  c.n_heads = f.i32("n_heads");
  c.n_kv_heads = f.i32("n_kv_heads");
  c.head_dim = f.i32("head_dim");
  c.vocab = f.i32("vocab");
  c.max_seq = f.i32("max_seq");
  c.norm_eps = f.f32("norm_eps");
  c.norm_offset = f.flag("norm_offset");
  c.qk_norm = f.flag("qk_norm");
  c.qkv_bias = f.flag("qkv_bias");
  c.sandwich_norm = f.flag("sandwich_norm");
  c.tied_embeddings = f.flag("tied_embeddings");
  c.embed_scale = f.f32("embed_scale");
  c.act = Activation(parse_enum(f.at("act"), kActivations, label, "act"));
  c.attn_scale = f.f32("attn_scale");
  c.attn_softcap = f.f32("attn_softcap");
  c.final_softcap = f.f32("final_softcap");
  c.sliding_window = f.i32("sliding_window");
  const json& lt = f.at("layer_types");
  if (!lt.is_array()) fail("{}: x-blueshift.config.layer_types must be a list", label);
  for (auto& t : lt) c.layer_types.push_back(AttentionType(parse_enum(t, kAttention, label, "layer_types")));
  if (j.contains("conv_kernel")) c.conv_kernel = f.i32("conv_kernel");
  Fields r{f.at("rope"), label};
  if (!r.j.is_object()) fail("{}: x-blueshift.config.rope must be an object", label);
  c.rope.theta = r.f32("theta");
  c.rope.local_theta = r.f32("local_theta");
  c.rope.scaling = RopeScaling(parse_enum(r.at("scaling"), kScalings, label, "rope.scaling"));
  c.rope.factor = r.f32("factor");
  c.rope.low_freq_factor = r.f32("low_freq_factor");
  c.rope.high_freq_factor = r.f32("high_freq_factor");
  c.rope.original_max_position = r.i32("original_max_position");
  const json& eos = f.at("eos_ids");
  if (!eos.is_array()) fail("{}: x-blueshift.config.eos_ids must be a list", label);
  for (auto& e : eos) {
    if (!e.is_number_integer()) fail("{}: x-blueshift.config.eos_ids must hold integers", label);
    c.eos_ids.push_back(e.get<int32_t>());
  }
  c.bos_id = f.i32("bos_id");
  if (j.contains("layer_kinds")) {
    const json& lk = f.at("layer_kinds");
    if (!lk.is_array()) fail("{}: x-blueshift.config.layer_kinds must be a list", label);
    for (auto& k : lk) c.layer_kinds.push_back(LayerKind(parse_enum(k, kLayerKinds, label, "layer_kinds")));
  }
  if (j.contains("rotary_dim")) c.rotary_dim = f.i32("rotary_dim");
  if (j.contains("attn_output_gate")) c.attn_output_gate = f.flag("attn_output_gate");
  if (j.contains("linear_k_heads")) {
    c.linear_k_heads = f.i32("linear_k_heads");
    c.linear_v_heads = f.i32("linear_v_heads");
    c.linear_k_dim = f.i32("linear_k_dim");
    c.linear_v_dim = f.i32("linear_v_dim");
    c.linear_conv = f.i32("linear_conv");
  }
  // Gemma 4 (optional: absent = off).
  if (r.j.contains("partial_factor")) c.rope.partial_factor = r.f32("partial_factor");
  if (c.rope.scaling == RopeScaling::longrope) {
    for (auto [key, out] : {std::pair{"short_factor", &c.rope.short_factor}, std::pair{"long_factor", &c.rope.long_factor}}) {
      const json& v = r.at(key);
      if (!v.is_array()) fail("{}: x-blueshift.config.rope.{} must be a list", label, key);
      for (auto& e : v) {
        if (!e.is_number()) fail("{}: x-blueshift.config.rope.{} must hold numbers, got {}", label, key, e.dump());
        out->push_back(e.get<float>());
      }
    }
    c.rope.attention_factor = r.f32("attention_factor");
  }
  if (c.rope.scaling == RopeScaling::yarn) {
    c.rope.beta_fast = r.f32("beta_fast");
    c.rope.beta_slow = r.f32("beta_slow");
    c.rope.yarn_truncate = r.flag("yarn_truncate");
    c.rope.attention_factor = r.f32("attention_factor");
  }
  if (j.contains("n_experts")) {
    c.n_experts = f.i32("n_experts");
    c.n_experts_used = f.i32("n_experts_used");
    c.expert_ffn_dim = f.i32("expert_ffn_dim");
    c.moe_norm_topk = f.flag("moe_norm_topk");
    c.moe_router_bias = f.flag("moe_router_bias");
    c.moe_expert_bias = f.flag("moe_expert_bias");
    c.swiglu_alpha = f.f32("swiglu_alpha");
    c.swiglu_limit = f.f32("swiglu_limit");
  }
  if (j.contains("attn_out_bias")) c.attn_out_bias = f.flag("attn_out_bias");
  if (j.contains("attn_sinks")) c.attn_sinks = f.flag("attn_sinks");
  auto ints = [&](const char* key, std::vector<int32_t>& out) {
    if (!j.contains(key)) return;
    const json& v = f.at(key);
    if (!v.is_array()) fail("{}: x-blueshift.config.{} must be a list", label, key);
    for (auto& e : v) {
      if (!e.is_number_integer() || e.get<int64_t>() <= 0 || e.get<int64_t>() > INT32_MAX)
        fail("{}: x-blueshift.config.{} must hold positive integers, got {}", label, key, e.dump());
      out.push_back(e.get<int32_t>());
    }
  };
  ints("layer_head_dims", c.layer_head_dims);
  ints("layer_kv_heads", c.layer_kv_heads);
  ints("layer_ffn_dims", c.layer_ffn_dims);
  if (j.contains("v_from_k")) c.v_from_k = f.flag("v_from_k");
  if (j.contains("v_norm")) c.v_norm = f.flag("v_norm");
  if (j.contains("kv_shared_layers")) c.kv_shared_layers = f.i32("kv_shared_layers");
  if (j.contains("layer_scalar")) c.layer_scalar = f.flag("layer_scalar");
  if (j.contains("ple_dim")) {
    c.ple_dim = f.i32("ple_dim");
    c.ple_vocab = f.i32("ple_vocab");
    c.ple_embed_scale = f.f32("ple_embed_scale");
  }
  validate_config(c, label);
  return c;
}

}  // namespace bs
