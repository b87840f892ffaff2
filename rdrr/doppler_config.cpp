// DOPPLER keeps the model description in the manifest's `architecture` (sizes) and `inference`
// (quirks) blocks. blueshift writes them for DOPPLER's sake, and maps them back into ModelConfig when
// a manifest has no x-blueshift.config (one written by DOPPLER's converter).
#include <cmath>

#include "rdrr/manifest.h"
#include "rdrr/hf_config.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json doppler_architecture(const ModelConfig& c) {
  return {{"numLayers", c.n_layers},         {"hiddenSize", c.dim},      {"intermediateSize", c.ffn_dim},
          {"numAttentionHeads", c.n_heads},  {"numKeyValueHeads", c.n_kv_heads}, {"headDim", c.head_dim},
          {"vocabSize", c.vocab},            {"maxSeqLen", c.max_seq},   {"ropeTheta", c.rope.theta}};
}

ordered_json doppler_inference(const ModelConfig& c) {
  auto nullable = [](float v) { return v > 0 ? ordered_json(v) : ordered_json(nullptr); };
  ordered_json layer_types = ordered_json::array();
  for (auto t : c.layer_types) layer_types.push_back(t == AttentionType::full ? "full_attention" : "sliding_attention");
  const char* scaling = c.rope.scaling == RopeScaling::llama3 ? "llama3" : c.rope.scaling == RopeScaling::linear ? "linear" : nullptr;
  ordered_json rope = {{"ropeTheta", c.rope.theta},
                       {"ropeLocalTheta", nullable(c.rope.local_theta)},
                       {"ropeScalingType", scaling ? ordered_json(scaling) : ordered_json(nullptr)},
                       {"ropeScalingFactor", c.rope.factor}};
  if (c.rope.scaling == RopeScaling::llama3) {
    // Not in DOPPLER's schema (RDRR.md): written so a reader can run llama3 RoPE faithfully.
    rope["ropeLowFreqFactor"] = c.rope.low_freq_factor;
    rope["ropeHighFreqFactor"] = c.rope.high_freq_factor;
    rope["ropeOriginalMaxPosition"] = c.rope.original_max_position;
  }
  return {
      {"attention", {{"queryKeyNorm", c.qk_norm}, {"queryPreAttnScalar", c.attn_scale > 0 ? ordered_json(1.0 / (double(c.attn_scale) * c.attn_scale)) : ordered_json(nullptr)},
                     {"attnLogitSoftcapping", nullable(c.attn_softcap)},
                     {"slidingWindow", c.sliding_window > 0 ? ordered_json(c.sliding_window) : ordered_json(nullptr)},
                     {"causal", true}, {"attentionBias", c.qkv_bias}}},
      {"normalization", {{"rmsNormEps", c.norm_eps}, {"rmsNormWeightOffset", c.norm_offset},
                         {"postAttentionNorm", c.sandwich_norm}, {"preFeedforwardNorm", c.sandwich_norm},
                         {"postFeedforwardNorm", c.sandwich_norm}}},
      {"ffn", {{"activation", c.act == Activation::silu ? "silu" : "gelu"}, {"gatedActivation", true}}},
      {"rope", rope},
      {"output", {{"tieWordEmbeddings", c.tied_embeddings}, {"scaleEmbeddings", c.embed_scale != 1.0f},
                  {"finalLogitSoftcapping", nullable(c.final_softcap)}, {"embeddingScale", c.embed_scale}}},
      {"layerPattern", {{"type", "custom"}, {"layerTypes", layer_types}}},
  };
}

namespace {

struct Block {
  const json& j;
  const std::string& label;
  std::string where;
  const json* get(const char* k) const {
    if (!j.is_object()) return nullptr;
    auto it = j.find(k);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  double num(const char* k, double dflt) const {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_number()) fail("{}: {}.{}: expected a number, got {}", label, where, k, v->dump());
    return v->get<double>();
  }
  bool flag(const char* k, bool dflt) const {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_boolean()) fail("{}: {}.{}: expected true/false, got {}", label, where, k, v->dump());
    return v->get<bool>();
  }
  Block sub(const char* k) const {
    static const json kEmpty = json::object();
    const json* v = get(k);
    return {v ? *v : kEmpty, label, where + "." + k};
  }
};

}  // namespace

ModelConfig config_from_doppler(const json& m, const std::string& label) {
  if (!m.contains("architecture") || !m["architecture"].is_object())
    fail("{}: no 'architecture' block and no x-blueshift.config: cannot describe the model", label);
  Block a{m["architecture"], label, "architecture"};
  static const json kEmpty = json::object();
  Block inf{m.contains("inference") ? m["inference"] : kEmpty, label, "inference"};
  ModelConfig c;
  c.arch = m.contains("modelType") && m["modelType"].is_string() ? m["modelType"].get<std::string>() : "";
  if (c.arch == "gemma3") c.arch = "gemma3_text";
  auto i32 = [&](const char* k, double dflt) {
    double v = a.num(k, dflt);
    if (v < 0 || v > INT32_MAX || v != std::floor(v)) fail("{}: architecture.{}: expected an integer, got {}", label, k, v);
    return int32_t(v);
  };
  c.n_layers = i32("numLayers", 0);
  c.dim = i32("hiddenSize", 0);
  c.ffn_dim = i32("intermediateSize", 0);
  c.n_heads = i32("numAttentionHeads", 0);
  c.n_kv_heads = i32("numKeyValueHeads", c.n_heads);
  c.head_dim = i32("headDim", c.n_heads ? c.dim / c.n_heads : 0);
  c.vocab = i32("vocabSize", 0);
  c.max_seq = i32("maxSeqLen", 2048);

  Block att = inf.sub("attention"), norm = inf.sub("normalization"), ffn = inf.sub("ffn"), rope = inf.sub("rope"),
        out = inf.sub("output"), pat = inf.sub("layerPattern");
  c.qk_norm = att.flag("queryKeyNorm", false);
  c.qkv_bias = att.flag("attentionBias", false);
  double qpas = att.num("queryPreAttnScalar", 0);
  if (qpas > 0) c.attn_scale = float(1.0 / std::sqrt(qpas));
  c.attn_softcap = float(att.num("attnLogitSoftcapping", 0));
  c.sliding_window = int32_t(att.num("slidingWindow", 0));
  c.norm_eps = float(norm.num("rmsNormEps", 1e-6));
  c.norm_offset = norm.flag("rmsNormWeightOffset", false);
  c.sandwich_norm = norm.flag("postAttentionNorm", false) && norm.flag("postFeedforwardNorm", false);
  std::string act = ffn.get("activation") && ffn.get("activation")->is_string() ? (*ffn.get("activation")).get<std::string>() : "silu";
  if (act == "silu" || act == "swiglu") c.act = Activation::silu;
  else if (act == "gelu" || act == "geglu" || act == "gelu_tanh") c.act = Activation::gelu_tanh;  // DOPPLER's gelu is tanh
  else fail("{}: inference.ffn.activation: '{}' is not supported (silu, gelu)", label, act);

  c.rope.theta = float(rope.num("ropeTheta", a.num("ropeTheta", 10000.0)));
  c.rope.local_theta = float(rope.num("ropeLocalTheta", 0));
  std::string scaling = rope.get("ropeScalingType") && rope.get("ropeScalingType")->is_string()
                            ? rope.get("ropeScalingType")->get<std::string>() : "";
  if (scaling == "linear") {
    c.rope.scaling = RopeScaling::linear;
    c.rope.factor = float(rope.num("ropeScalingFactor", 1.0));
  } else if (scaling == "llama3") {
    if (!rope.get("ropeLowFreqFactor") || !rope.get("ropeHighFreqFactor") || !rope.get("ropeOriginalMaxPosition"))
      fail("{}: inference.rope: ropeScalingType llama3 without its low/high frequency factors cannot be run "
           "faithfully (DOPPLER's schema has no fields for them); reconvert from the HF checkpoint", label);
    c.rope.scaling = RopeScaling::llama3;
    c.rope.factor = float(rope.num("ropeScalingFactor", 1.0));
    c.rope.low_freq_factor = float(rope.num("ropeLowFreqFactor", 1.0));
    c.rope.high_freq_factor = float(rope.num("ropeHighFreqFactor", 4.0));
    c.rope.original_max_position = int32_t(rope.num("ropeOriginalMaxPosition", 8192));
  } else if (!scaling.empty() && scaling != "default" && scaling != "none") {
    fail("{}: inference.rope.ropeScalingType: '{}' is not supported (linear, llama3)", label, scaling);
  }

  c.tied_embeddings = out.flag("tieWordEmbeddings", true);
  double escale = out.num("embeddingScale", 0);
  if (escale > 0) c.embed_scale = float(escale);
  else if (out.flag("scaleEmbeddings", false))
    c.embed_scale = bf16_to_float(float_to_bf16(std::sqrt(float(c.dim))));  // Gemma checkpoints are bf16
  c.final_softcap = float(out.num("finalLogitSoftcapping", 0));

  std::string ptype = pat.get("type") && pat.get("type")->is_string() ? pat.get("type")->get<std::string>() : "";
  c.layer_types.assign(size_t(std::max(c.n_layers, 0)), c.sliding_window > 0 ? AttentionType::sliding : AttentionType::full);
  if (ptype == "custom" && pat.get("layerTypes") && pat.get("layerTypes")->is_array()) {
    c.layer_types.clear();
    for (auto& t : *pat.get("layerTypes")) {
      std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s == "full_attention" || s == "global") c.layer_types.push_back(AttentionType::full);
      else if (s == "sliding_attention" || s == "local") c.layer_types.push_back(AttentionType::sliding);
      else fail("{}: inference.layerPattern.layerTypes: '{}' is not supported", label, t.dump());
    }
  } else if (ptype == "every_n") {
    int64_t period = int64_t(pat.num("period", 0)), offset = int64_t(pat.num("offset", 0));
    if (period <= 0) fail("{}: inference.layerPattern.period: expected a positive integer", label);
    for (int32_t i = 0; i < c.n_layers; ++i)
      c.layer_types[size_t(i)] = i % period == offset ? AttentionType::full : AttentionType::sliding;
  }
  if (m.contains("eos_token_id") && !m["eos_token_id"].is_null()) {
    const json& e = m["eos_token_id"];
    for (auto& id : e.is_array() ? e : json::array({e}))
      if (id.is_number_integer()) c.eos_ids.push_back(id.get<int32_t>());
  }
  validate_config(c, label);
  return c;
}

}  // namespace bs
