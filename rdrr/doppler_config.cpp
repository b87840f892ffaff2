// DOPPLER keeps the model description in the manifest's `architecture` (sizes) and `inference`
// (quirks; schema doppler.execution/v1) blocks. blueshift writes them for DOPPLER's sake, and maps them
// back into ModelConfig when a manifest has no x-blueshift.config (one written by DOPPLER's converter).
//
// The reader fails closed: every key of the blocks that describe the math (architecture, and inference's
// attention, normalization, ffn, rope, output, layerPattern) is either mapped onto ModelConfig, checked
// to hold its neutral value, or on a short list of keys known not to change the math. Anything else, or
// a value blueshift cannot run, is an error naming the field and its value in one line.
//
// Keys read and deliberately ignored (they do not change what the text decoder computes):
//   inference.chatTemplate       prompt formatting (blueshift takes the tokenizer's template)
//   inference.session, sessionDefaults, execution, largeWeights
//                                DOPPLER's runtime policy: kernel graph, KV dtype and paging, batching,
//                                which weights stay resident; precision choices, not the model
//   inference.rerank             a scoring recipe over the LM's logits (yes/no token ids)
//   inference.supports*          capability flags for DOPPLER's other workloads
//   inference.attention.outputGateType
//                                only used by the output gate, which must be off
//   inference.layerPattern.globalPattern/period/offset
//                                only used by the pattern type that names them
//   moeConfig (other than numExperts): only used by mixture-of-experts layers, which must be off
#include <algorithm>
#include <cmath>
#include <set>

#include "rdrr/hf_config.h"
#include "rdrr/manifest.h"
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

// Every key DOPPLER's validator requires is written (null or its neutral value where blueshift has no
// such feature), so that DOPPLER reads the block as it reads its own.
ordered_json doppler_inference(const ModelConfig& c) {
  const ordered_json null;
  auto nullable = [](float v) { return v > 0 ? ordered_json(v) : ordered_json(nullptr); };
  ordered_json layer_types = ordered_json::array();
  for (size_t l = 0; l < c.layer_types.size(); ++l)
    layer_types.push_back(c.kind(int32_t(l)) == LayerKind::short_conv ? "conv"  // LFM2
                          : c.layer_types[l] == AttentionType::full   ? "full_attention"
                                                                      : "sliding_attention");
  const char* scaling = c.rope.scaling == RopeScaling::llama3     ? "llama3"
                        : c.rope.scaling == RopeScaling::linear   ? "linear"
                        : c.rope.scaling == RopeScaling::longrope ? "longrope"
                        : c.rope.scaling == RopeScaling::yarn     ? "yarn"
                                                                  : nullptr;
  const bool yarn = c.rope.scaling == RopeScaling::yarn;
  const bool longrope = c.rope.scaling == RopeScaling::longrope;
  // Sliding layers with a local base run unscaled: ropeLocalScalingType null says so (absent, DOPPLER would
  // scale them too).
  ordered_json rope = {{"ropeTheta", c.rope.theta}, {"ropeLocalTheta", nullable(c.rope.local_theta)},
                       {"ropeInterleaved", false}, {"mropeInterleaved", false}, {"mropeSection", null},
                       {"partialRotaryFactor", null}, {"ropeLocalPartialRotaryFactor", null},
                       {"ropeFrequencyBaseDim", null}, {"ropeLocalFrequencyBaseDim", null},
                       {"ropeScalingType", scaling ? ordered_json(scaling) : null},
                       {"ropeScalingFactor", c.rope.factor},
                       {"ropeLocalScalingType", null}, {"ropeLocalScalingFactor", 1},
                       {"yarnBetaFast", yarn ? ordered_json(c.rope.beta_fast) : null},
                       {"yarnBetaSlow", yarn ? ordered_json(c.rope.beta_slow) : null},
                       {"yarnOriginalMaxPos", yarn ? ordered_json(c.rope.original_max_position) : null},
                       {"longropeShortFactor", longrope ? ordered_json(c.rope.short_factor) : null},
                       {"longropeLongFactor", longrope ? ordered_json(c.rope.long_factor) : null},
                       {"longropeOriginalMaxPos", longrope ? ordered_json(c.rope.original_max_position) : null},
                       {"ropeLocalYarnBetaFast", null}, {"ropeLocalYarnBetaSlow", null},
                       {"ropeLocalYarnOriginalMaxPos", null}};
  // Sliding layers without a local base are scaled like the others (Mistral, Phi-3 128k): the key absent says so.
  const bool slides = std::count(c.layer_types.begin(), c.layer_types.end(), AttentionType::sliding) > 0;
  if (slides && c.rope.local_theta <= 0 && c.rope.scaling != RopeScaling::none) rope.erase("ropeLocalScalingType");
  if (c.rope.scaling == RopeScaling::llama3) {
    // Not in DOPPLER's schema (RDRR.md): written so a reader can run llama3 RoPE faithfully.
    rope["ropeLowFreqFactor"] = c.rope.low_freq_factor;
    rope["ropeHighFreqFactor"] = c.rope.high_freq_factor;
    rope["ropeOriginalMaxPosition"] = c.rope.original_max_position;
  }
  // DOPPLER requires queryPreAttnScalar (1/sqrt of it is the softmax scale; head_dim is the standard one).
  double qpas = c.attn_scale > 0 ? 1.0 / (double(c.attn_scale) * c.attn_scale) : double(c.head_dim);
  return {
      {"attention", {{"queryPreAttnScalar", qpas}, {"attnLogitSoftcapping", nullable(c.attn_softcap)},
                     {"slidingWindow", c.sliding_window > 0 ? ordered_json(c.sliding_window) : null},
                     {"queryKeyNorm", c.qk_norm}, {"queryKeyNormType", "rmsnorm"}, {"queryKeyNormAxis", "head"},
                     {"queryKeyNormLayers", null}, {"queryKeyNormWeightLayers", null}, {"valueNorm", false},
                     {"causal", true}, {"attentionBias", c.qkv_bias}, {"attentionOutputGate", false}}},
      {"normalization", {{"type", "rmsnorm"}, {"rmsNormEps", c.norm_eps}, {"rmsNormWeightOffset", c.norm_offset},
                         {"postAttentionNorm", true}, {"preFeedforwardNorm", c.sandwich_norm},
                         {"postFeedforwardNorm", c.sandwich_norm}, {"finalNormBiasTensor", null}}},
      {"ffn", {{"activation", c.act == Activation::silu ? "silu" : "gelu"}, {"gatedActivation", true},
               {"branchMode", "dense"}, {"useDoubleWideMlp", false}, {"swigluLimit", null}}},
      {"rope", rope},
      // The exact multiplier (Gemma's sqrt(dim) rounded to the checkpoint dtype) as embeddingScale;
      // DOPPLER rejects embeddingScale together with scaleEmbeddings, which would recompute it.
      {"output", {{"finalLogitSoftcapping", nullable(c.final_softcap)}, {"tieWordEmbeddings", c.tied_embeddings},
                  {"scaleEmbeddings", false},
                  {"embeddingScale", c.embed_scale != 1.0f ? ordered_json(c.embed_scale) : null},
                  {"logitInputScale", 1}, {"embeddingTranspose", false}, {"embeddingVocabSize", null},
                  {"embeddingPostprocessor", null}, {"lmHeadBiasTensor", null}}},
      {"layerPattern", {{"type", "custom"}, {"globalPattern", null}, {"period", null}, {"offset", null},
                        {"layerTypes", layer_types}, {"residualBranchScale", 1}}},
      {"chatTemplate", {{"type", null}, {"enabled", false}}},  // blueshift takes the tokenizer's template
  };
}

namespace {

// A value as the error shows it: short enough for one line, ASCII so that cutting it cannot split a
// UTF-8 sequence (info --json puts the message in JSON, which must stay valid UTF-8).
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', true);
  return s.size() > 48 ? s.substr(0, 45) + "..." : s;
}

// One object of the manifest. Records which keys were read so that finish() can reject the others.
class Block {
 public:
  Block(const json* j, const std::string& label, std::string where)
      : j_(j && j->is_object() ? j : &kEmpty), label_(label), where_(std::move(where)) {
    if (j && !j->is_null() && !j->is_object()) fail("{}: {}: expected an object, got {}", label, where_, shown(*j));
  }

  // The value of `k`, or nullptr when absent or null.
  const json* get(const char* k) {
    seen_.insert(k);
    auto it = j_->find(k);
    return it == j_->end() || it->is_null() ? nullptr : &*it;
  }
  bool has(const char* k) const { return j_->contains(k); }
  // The value as written (for messages), null when absent.
  json raw(const char* k) const { return j_->contains(k) ? (*j_)[k] : json(); }
  double num(const char* k, double dflt) {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_number()) fail("{}: {}.{}: expected a number, got {}", label_, where_, k, shown(*v));
    return v->get<double>();
  }
  int32_t count(const char* k, int32_t dflt) {
    double v = num(k, dflt);
    if (v < 0 || v > INT32_MAX || v != std::floor(v))
      fail("{}: {}.{}: expected a non-negative integer, got {}", label_, where_, k, v);
    return int32_t(v);
  }
  bool flag(const char* k, bool dflt) {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_boolean()) fail("{}: {}.{}: expected true/false, got {}", label_, where_, k, shown(*v));
    return v->get<bool>();
  }
  std::string str(const char* k, const std::string& dflt) {
    const json* v = get(k);
    if (!v) return dflt;
    if (!v->is_string()) fail("{}: {}.{}: expected a string, got {}", label_, where_, k, shown(*v));
    return v->get<std::string>();
  }
  Block sub(const char* k) { return Block(get(k), label_, where_ + "." + k); }

  [[noreturn]] void unsupported(const std::string& k, const json& v, std::string_view why = {}) const {
    fail("{}: {}.{} = {} is not supported{}{}", label_, where_, k, shown(v), why.empty() ? "" : " ", why);
  }
  // `k` must be absent, null, or equal to `neutral` (the value that turns the feature off).
  void neutral(const char* k, const json& neutral, std::string_view why = {}) {
    const json* v = get(k);
    if (v && *v != neutral) unsupported(k, *v, why);
  }
  void must_be_null(const char* k, std::string_view why = {}) {
    if (const json* v = get(k)) unsupported(k, *v, why);
  }
  void ignore(std::initializer_list<const char*> keys) {
    for (auto k : keys) seen_.insert(k);
  }
  // Any key not read may change the math: fail on the first.
  void finish() const {
    for (auto& [k, v] : j_->items())
      if (!seen_.count(k))
        fail("{}: {}.{} = {} is not a field blueshift knows (it may change the math)", label_, where_, k, shown(v));
  }
  const std::string& where() const { return where_; }
  const std::string& label() const { return label_; }

 private:
  static inline const json kEmpty = json::object();
  const json* j_;
  const std::string& label_;
  std::string where_;
  std::set<std::string> seen_;
};

AttentionType layer_type(Block& b, const std::string& where, size_t i, const json& t) {
  std::string s = t.is_string() ? t.get<std::string>() : "";
  if (s == "full_attention" || s == "global") return AttentionType::full;
  if (s == "sliding_attention" || s == "local") return AttentionType::sliding;
  if (s == "linear_attention" || s == "conv") return AttentionType::full;  // hybrids: c.layer_kinds says so
  b.unsupported(fmt::format("{}[{}]", where, i), t);
}

// inference.layerPattern (and DOPPLER's fallback, the HF config's layer_types) -> c.layer_types.
void read_layer_pattern(Block& pat, const json& manifest, ModelConfig& c) {
  const size_t n = size_t(c.n_layers);
  std::string type = pat.str("type", "uniform");
  std::vector<AttentionType> types;
  if (type == "custom") {
    const json* lt = pat.get("layerTypes");
    if (!lt || !lt->is_array() || lt->size() != n)
      fail("{}: {}.layerTypes: expected a list of numLayers = {} layer types, got {}", pat.label(), pat.where(), n,
           lt ? shown(*lt) : "nothing");
    // Hybrids: LFM2's short-conv layers ("conv", width from read_conv_kernel) and Qwen 3.5's Gated
    // DeltaNet ("linear_attention") are kinds of their own; their AttentionType is unused (full).
    for (size_t i = 0; i < n; ++i) {
      const json& t = (*lt)[i];
      LayerKind kind = t == "conv" ? LayerKind::short_conv
                       : t == "linear_attention" ? LayerKind::linear_attention
                                                 : LayerKind::attention;
      if (kind != LayerKind::attention) {
        if (c.layer_kinds.empty()) c.layer_kinds.assign(n, LayerKind::attention);
        c.layer_kinds[i] = kind;
      }
      types.push_back(layer_type(pat, "layerTypes", i, t));
    }
  } else if (type == "every_n") {
    // Global (full) at layer `offset` and every `period` after it (period 6, offset 5: 5, 11, 17, ...).
    int64_t period = pat.count("period", 0), offset = pat.count("offset", 0);
    if (period <= 0) fail("{}: {}.period: every_n needs a positive period", pat.label(), pat.where());
    for (size_t i = 0; i < n; ++i)
      types.push_back((int64_t(i) - offset % period + period) % period == 0 ? AttentionType::full
                                                                            : AttentionType::sliding);
  } else if (type == "alternating") {
    std::string g = pat.str("globalPattern", "");
    if (g != "even" && g != "odd") pat.unsupported("globalPattern", g.empty() ? json() : json(g), "(even, odd)");
    for (size_t i = 0; i < n; ++i)
      types.push_back((i % 2 == 0) == (g == "even") ? AttentionType::full : AttentionType::sliding);
  } else if (type != "uniform") {
    pat.unsupported("type", type, "(uniform, every_n, alternating, custom)");
  }
  pat.ignore({"globalPattern", "period", "offset", "layerTypes"});
  pat.neutral("residualBranchScale", 1);
  pat.finish();
  if (types.empty() && manifest.contains("config") && manifest["config"].is_object() &&
      manifest["config"].contains("layer_types")) {
    // DOPPLER falls back on the HF config's per-layer types when the pattern gives none.
    Block cfg(&manifest["config"], pat.label(), "config");
    const json* lt = cfg.get("layer_types");
    if (lt && (!lt->is_array() || lt->size() != n))
      fail("{}: config.layer_types: expected a list of numLayers = {} layer types, got {}", pat.label(), n, shown(*lt));
    for (size_t i = 0; lt && i < n; ++i) types.push_back(layer_type(cfg, "layer_types", i, (*lt)[i]));
  }
  if (types.empty()) types.assign(n, c.sliding_window > 0 ? AttentionType::sliding : AttentionType::full);
  c.layer_types = std::move(types);
}

// LFM2: DOPPLER's architecture block has no conv width; its converter and runtime take it from the
// conv kernel's shape [dim, 1, width], and so does this reader.
void read_conv_kernel(const json& m, const std::string& label, ModelConfig& c) {
  if (c.layer_kinds.empty()) return;  // no conv layers
  int32_t l = int32_t(std::find(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::short_conv) - c.layer_kinds.begin());
  if (l == c.n_layers) return;
  const std::string suffix = fmt::format("layers.{}.conv.conv.weight", l);
  if (m.contains("tensors") && m["tensors"].is_object())
    for (auto& [name, t] : m["tensors"].items()) {
      if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
          (name.size() > suffix.size() && name[name.size() - suffix.size() - 1] != '.'))
        continue;
      const json* shape = t.is_object() && t.contains("shape") ? &t["shape"] : nullptr;
      if (!shape || !shape->is_array() || shape->size() != 3 || !shape->back().is_number_integer() ||
          shape->back().get<int64_t>() < 0 || shape->back().get<int64_t>() > INT32_MAX)
        fail("{}: tensors['{}'].shape: expected [hiddenSize, 1, width] for layer {}'s conv kernel, got {}", label, name,
             l, shape ? shown(*shape) : "nothing");
      c.conv_kernel = shape->back().get<int32_t>();
      return;
    }
  fail("{}: inference.layerPattern.layerTypes[{}] = \"conv\" but no tensor '*{}' gives the conv width", label, l,
       suffix);
}

void read_rope(Block& rope, double arch_theta, ModelConfig& c) {
  c.rope.theta = float(rope.num("ropeTheta", arch_theta));
  if (!(c.rope.theta > 0)) rope.unsupported("ropeTheta", rope.raw("ropeTheta"));
  c.rope.local_theta = float(rope.num("ropeLocalTheta", 0));
  rope.neutral("ropeInterleaved", false, "(adjacent-pair rotary layout)");
  // Partial rotary comes in two forms. Gemma 4's proportional RoPE on full layers (ropeFrequencyBaseDim
  // set): frequencies over the full layers' whole head_dim, the first partialRotaryFactor of them rotating
  // (rope.partial_factor); a base dim other than that head_dim is not supported. Qwen 3.5's (no base dim):
  // the first factor * headDim dims of a head rotate among themselves (rotary_dim).
  const int32_t global_hd = c.head_dim_of_type(true);
  double partial = rope.num("partialRotaryFactor", 1.0);
  if (rope.get("ropeFrequencyBaseDim")) {
    if (rope.num("ropeFrequencyBaseDim", 0) != global_hd)
      rope.unsupported("ropeFrequencyBaseDim", rope.raw("ropeFrequencyBaseDim"),
                       fmt::format("(a frequency base other than the full layers' head_dim {})", global_hd));
    if (!(partial > 0 && partial <= 1)) rope.unsupported("partialRotaryFactor", rope.raw("partialRotaryFactor"));
    if (partial != 1.0) c.rope.partial_factor = float(partial);
  } else {
    double rd = partial * c.head_dim;
    if (!(partial > 0 && partial <= 1) || rd != std::floor(rd) || int64_t(rd) % 2)
      rope.unsupported("partialRotaryFactor", rope.raw("partialRotaryFactor"), "(needs an even rotary width)");
    if (partial != 1.0) c.rotary_dim = int32_t(rd);
  }
  // Multimodal RoPE (Qwen 3.5's vision-language checkpoints): its sections split the rotary pairs among
  // temporal / height / width positions, which are all the token position for text, so text is plain RoPE
  // as long as the sections cover the rotary pairs exactly.
  const json* sec = rope.get("mropeSection");
  if (sec) {
    int64_t sum = 0;
    bool ok = sec->is_array();
    if (ok)
      for (auto& v : *sec) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0) ok = false;
        else sum += v.get<int64_t>();
      }
    if (!ok || sum != c.rot_dim() / 2)
      rope.unsupported("mropeSection", *sec, fmt::format("(sections must sum to the {} rotary pairs)", c.rot_dim() / 2));
  }
  if (!sec) rope.neutral("mropeInterleaved", false, "(multimodal RoPE without mropeSection)");
  rope.ignore({"mropeInterleaved"});
  rope.neutral("ropeLocalPartialRotaryFactor", 1, "(partial rotary)");
  rope.neutral("ropeLocalFrequencyBaseDim", c.head_dim, "(frequency base other than head_dim)");

  // DOPPLER scales positions by ropeScalingFactor even with no type (linear is its default).
  std::string scaling = rope.str("ropeScalingType", "");
  double factor = rope.num("ropeScalingFactor", 1.0);
  if (!(factor > 0)) rope.unsupported("ropeScalingFactor", rope.raw("ropeScalingFactor"));
  if (scaling == "linear" || ((scaling.empty() || scaling == "default" || scaling == "none") && factor != 1.0)) {
    c.rope.scaling = RopeScaling::linear;
    c.rope.factor = float(factor);
  } else if (scaling == "llama3") {
    // Not DOPPLER's: blueshift writes llama3 with the three keys below, which DOPPLER's schema lacks.
    if (!rope.has("ropeLowFreqFactor") || !rope.has("ropeHighFreqFactor") || !rope.has("ropeOriginalMaxPosition"))
      rope.unsupported("ropeScalingType", scaling,
                       "without ropeLowFreqFactor/ropeHighFreqFactor/ropeOriginalMaxPosition (reconvert from HF)");
    c.rope.scaling = RopeScaling::llama3;
    c.rope.factor = float(factor);
    c.rope.low_freq_factor = float(rope.num("ropeLowFreqFactor", 1.0));
    c.rope.high_freq_factor = float(rope.num("ropeHighFreqFactor", 4.0));
    c.rope.original_max_position = rope.count("ropeOriginalMaxPosition", 8192);
  } else if (scaling == "longrope") {
    // Phi-3's 128k variants: factors per rotated pair, short up to longropeOriginalMaxPos and long beyond; the
    // attention factor as HF and DOPPLER derive it, from the scaling factor (or maxSeqLen / original).
    c.rope.scaling = RopeScaling::longrope;
    for (auto [key, out] : {std::pair{"longropeShortFactor", &c.rope.short_factor},
                            std::pair{"longropeLongFactor", &c.rope.long_factor}}) {
      const json* v = rope.get(key);
      bool ok = v && v->is_array() && !v->empty();
      if (ok)
        for (auto& e : *v) {
          if (!e.is_number() || !(e.get<double>() > 0)) ok = false;
          else out->push_back(e.get<float>());
        }
      if (!ok) rope.unsupported(key, rope.raw(key), "(LongRoPE needs a list of positive factors)");
    }
    c.rope.original_max_position = rope.count("longropeOriginalMaxPos", 0);
    if (c.rope.original_max_position <= 0)
      rope.unsupported("longropeOriginalMaxPos", rope.raw("longropeOriginalMaxPos"), "(LongRoPE needs it positive)");
    const double f = factor != 1.0 ? factor : double(c.max_seq) / c.rope.original_max_position;
    c.rope.factor = float(f);
    c.rope.attention_factor = longrope_attention_factor(f, c.rope.original_max_position);
  } else if (!scaling.empty() && scaling != "default" && scaling != "none") {
    rope.unsupported("ropeScalingType", scaling, "(linear, llama3, longrope)");
  }
  rope.ignore({"ropeLowFreqFactor", "ropeHighFreqFactor", "ropeOriginalMaxPosition"});
  for (auto k : {"yarnBetaFast", "yarnBetaSlow", "yarnOriginalMaxPos"}) rope.must_be_null(k);
  if (scaling != "longrope")
    for (auto k : {"longropeShortFactor", "longropeLongFactor", "longropeOriginalMaxPos"}) rope.must_be_null(k);
  // blueshift scales sliding layers exactly when they have no local base (rope_inv_freq). DOPPLER scales
  // them by the local keys, and takes the global scaling type for them when ropeLocalScalingType is absent
  // altogether: the two agree when that key is absent without a local base, or null with one.
  bool any_sliding = std::count(c.layer_types.begin(), c.layer_types.end(), AttentionType::sliding) > 0;
  bool typed = !scaling.empty() && scaling != "default" && scaling != "none";
  bool inherits = !rope.has("ropeLocalScalingType") && typed;
  if (any_sliding && inherits && c.rope.local_theta > 0)
    rope.unsupported("ropeScalingType", scaling, "on sliding layers with a local base (set ropeLocalScalingType = null)");
  if (any_sliding && typed && !inherits && c.rope.local_theta <= 0)
    rope.unsupported("ropeLocalScalingType", rope.raw("ropeLocalScalingType"),
                     "(sliding layers unscaled without a local base of their own; omit the key to scale them)");
  std::string local = rope.str("ropeLocalScalingType", "");
  if (any_sliding && !local.empty()) rope.unsupported("ropeLocalScalingType", local, "(scaled RoPE on sliding layers)");
  double local_factor = rope.num("ropeLocalScalingFactor", 1.0);
  if (any_sliding && local_factor != 1.0)
    rope.unsupported("ropeLocalScalingFactor", rope.raw("ropeLocalScalingFactor"));
  for (auto k : {"ropeLocalYarnBetaFast", "ropeLocalYarnBetaSlow", "ropeLocalYarnOriginalMaxPos"}) rope.must_be_null(k);
  rope.finish();
}

bool has_tensor(const json& m, const std::string& suffix) {
  if (!m.contains("tensors") || !m["tensors"].is_object()) return false;
  for (auto& [k, v] : m["tensors"].items())
    if (k.size() >= suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) return true;
  return false;
}

// architecture's Gemma 4 sizes. Whether full layers take v from k (attention_k_eq_v) and whether
// layers carry layer_scalar, DOPPLER's blocks do not say: its tensors do (a full layer with a k
// projection and no v projection; a layer_scalar tensor).
void read_gemma4_sizes(Block& a, const json& m, ModelConfig& c) {
  const size_t n = size_t(c.n_layers);
  int32_t global_kv = a.count("numGlobalKeyValueHeads", 0), global_hd = a.count("globalHeadDim", 0);
  if ((global_kv > 0 && global_kv != c.n_kv_heads) || (global_hd > 0 && global_hd != c.head_dim)) {
    c.layer_head_dims.assign(n, c.head_dim);
    c.layer_kv_heads.assign(n, c.n_kv_heads);
    for (size_t l = 0; l < n; ++l)
      if (!c.sliding(int32_t(l))) {
        if (global_hd > 0) c.layer_head_dims[l] = global_hd;
        if (global_kv > 0) c.layer_kv_heads[l] = global_kv;
      }
  }
  c.kv_shared_layers = a.count("numKvSharedLayers", 0);
  if (c.kv_shared_layers >= c.n_layers) a.unsupported("numKvSharedLayers", a.raw("numKvSharedLayers"), "(every layer)");
  c.ple_dim = a.count("hiddenSizePerLayerInput", 0);
  c.ple_vocab = a.count("vocabSizePerLayerInput", c.vocab);
  if (c.ple_dim > 0) c.ple_embed_scale = bf16_to_float(float_to_bf16(std::sqrt(float(c.ple_dim))));  // bf16 checkpoints
  else c.ple_vocab = 0;
  c.layer_scalar = has_tensor(m, "layers.0.layer_scalar");
  for (size_t l = 0; l < n; ++l)
    if (!c.sliding(int32_t(l))) {
      std::string p = fmt::format("layers.{}.self_attn.", l);
      c.v_from_k = has_tensor(m, p + "k_proj.weight") && !has_tensor(m, p + "v_proj.weight");
      break;
    }
}

void read_output(Block& out, ModelConfig& c) {
  c.tied_embeddings = out.flag("tieWordEmbeddings", true);
  bool scale = out.flag("scaleEmbeddings", false);
  double escale = out.num("embeddingScale", 0);
  if (escale < 0 || !std::isfinite(escale)) out.unsupported("embeddingScale", out.raw("embeddingScale"));
  if (escale > 0 && scale)
    out.unsupported("embeddingScale", out.raw("embeddingScale"), "together with scaleEmbeddings = true");
  if (escale > 0) c.embed_scale = float(escale);
  else if (scale) c.embed_scale = bf16_to_float(float_to_bf16(std::sqrt(float(c.dim))));  // Gemma checkpoints are bf16
  c.final_softcap = float(out.num("finalLogitSoftcapping", 0));
  if (c.final_softcap < 0) out.unsupported("finalLogitSoftcapping", out.raw("finalLogitSoftcapping"));
  out.neutral("logitInputScale", 1, "(scaled final hidden state)");
  out.neutral("embeddingTranspose", false, "(embedding stored [hidden, vocab])");
  out.neutral("embeddingVocabSize", c.vocab, "(embedding rows other than vocabSize)");
  out.must_be_null("embeddingPostprocessor", "(pooled embedding output)");
  out.must_be_null("lmHeadBiasTensor", "(LM-head bias)");
  out.finish();
}

}  // namespace

ModelConfig config_from_doppler(const json& m, const std::string& label) {
  if (!m.contains("architecture") || !m["architecture"].is_object())
    fail("{}: no 'architecture' block and no x-blueshift.config: cannot describe the model", label);
  auto find = [&](const char* k) { return m.contains(k) ? &m[k] : nullptr; };
  Block a(find("architecture"), label, "architecture");
  Block inf(find("inference"), label, "inference");
  ModelConfig c;
  c.arch = m.contains("modelType") && m["modelType"].is_string() ? m["modelType"].get<std::string>() : "";
  c.n_layers = a.count("numLayers", 0);
  c.dim = a.count("hiddenSize", 0);
  c.ffn_dim = a.count("intermediateSize", 0);
  c.n_heads = a.count("numAttentionHeads", 0);
  c.n_kv_heads = a.count("numKeyValueHeads", c.n_heads);
  c.head_dim = a.count("headDim", c.n_heads ? c.dim / c.n_heads : 0);
  c.vocab = a.count("vocabSize", 0);
  c.max_seq = a.count("maxSeqLen", 2048);
  double arch_theta = a.num("ropeTheta", 10000.0), arch_eps = a.num("rmsNormEps", 1e-6);  // inference's win
  // Per-layer tables are allocated from numLayers: bound it before trusting it.
  constexpr int32_t kMaxLayers = 1 << 14;
  if (c.n_layers > kMaxLayers)
    fail("{}: architecture.numLayers = {} is more than any model has ({} at most)", label, c.n_layers, kMaxLayers);

  // Whole-model contracts first: they say most plainly what blueshift lacks.
  if (const json* u = inf.get("unsupported"))
    inf.unsupported("unsupported", *u, "(DOPPLER marks this artifact unsupported)");
  std::string schema = inf.str("schema", "doppler.execution/v1");
  if (schema != "doppler.execution/v1") inf.unsupported("schema", schema, "(doppler.execution/v1)");
  inf.must_be_null("diffusionGemma", "(block diffusion)");
  if (const json* moe = find("moeConfig"); moe && !moe->is_null()) {
    Block b(moe, label, "moeConfig");
    double experts = b.num("numExperts", 0);
    if (experts > 1) b.unsupported("numExperts", b.raw("numExperts"), "(mixture of experts)");
  }
  inf.must_be_null("pipeline", "(layer pipeline override)");
  inf.must_be_null("sequence", "(biological sequence outputs)");
  inf.ignore({"chatTemplate", "session", "sessionDefaults", "execution", "largeWeights", "rerank", "supportsEmbedding",
              "supportsRerank", "supportsSequence", "supportsTranscription", "supportsVision"});

  Block att = inf.sub("attention"), norm = inf.sub("normalization"), ffn = inf.sub("ffn"), rope = inf.sub("rope"),
        out = inf.sub("output"), pat = inf.sub("layerPattern");
  inf.finish();
  c.sliding_window = att.count("slidingWindow", 0);
  read_layer_pattern(pat, m, c);
  read_conv_kernel(m, label, c);
  // DOPPLER masks nothing on a sliding layer without a window ("null = full attention"), but still
  // gives it the local RoPE base: a window of the whole context is the same mask.
  if (c.sliding_window == 0 && std::count(c.layer_types.begin(), c.layer_types.end(), AttentionType::sliding))
    c.sliding_window = c.max_seq;

  // Gemma 4: full layers with their own head_dim and KV heads, KV-shared layers, per-layer inputs.
  read_gemma4_sizes(a, m, c);
  // Qwen 3.5's Gated DeltaNet layers (validate_config requires them where layerTypes has linear_attention).
  c.linear_k_heads = a.count("linearNumKeyHeads", 0);
  c.linear_v_heads = a.count("linearNumValueHeads", 0);
  c.linear_k_dim = a.count("linearKeyHeadDim", 0);
  c.linear_v_dim = a.count("linearValueHeadDim", 0);
  c.linear_conv = a.count("linearConvKernelDim", 0);
  std::string norm_mode = a.str("linearNormMode", "shared");
  if (norm_mode != "shared") a.unsupported("linearNormMode", norm_mode, "(one gated-norm vector shared by the heads)");
  a.finish();

  att.neutral("causal", true, "(bidirectional attention)");
  // Qwen 3.5: attention output times sigmoid(gate), the gate from q_proj's second half per head.
  // outputGateType: Qwen 3.6's configs say "swish" (output_gate_type), but transformers' Qwen 3.5 / 3.6
  // attention multiplies by sigmoid(gate) whatever that key says, and DOPPLER runs sigmoid for it too; the
  // key is read only to refuse a gate nobody implements.
  c.attn_output_gate = att.flag("attentionOutputGate", false);
  if (const json* g = att.get("outputGateType"); g && c.attn_output_gate)
    if (!g->is_string() || (g->get<std::string>() != "sigmoid" && g->get<std::string>() != "swish"))
      att.unsupported("outputGateType", *g, "(sigmoid is the gate transformers runs; swish configs mean it too)");
  c.v_norm = att.flag("valueNorm", false);
  c.qk_norm = att.flag("queryKeyNorm", false);
  att.neutral("queryKeyNormType", "rmsnorm");
  att.neutral("queryKeyNormAxis", "head");
  att.must_be_null("queryKeyNormLayers", "(q/k norm on some layers only)");
  att.must_be_null("queryKeyNormWeightLayers", "(q/k norm without weights)");
  c.qkv_bias = att.flag("attentionBias", false);
  double qpas = att.num("queryPreAttnScalar", 0);
  if (qpas < 0 || !std::isfinite(qpas)) att.unsupported("queryPreAttnScalar", att.raw("queryPreAttnScalar"));
  // DOPPLER rejects this known converter bug (sqrt(head_dim) written where head_dim was meant).
  if (qpas > 0 && qpas != c.head_dim && std::abs(qpas - std::sqrt(double(c.head_dim))) < 0.01)
    att.unsupported("queryPreAttnScalar", att.raw("queryPreAttnScalar"),
                    fmt::format("(sqrt(headDim); headDim = {} was meant)", c.head_dim));
  if (qpas > 0) c.attn_scale = float(1.0 / std::sqrt(qpas));
  c.attn_softcap = float(att.num("attnLogitSoftcapping", 0));
  if (c.attn_softcap < 0) att.unsupported("attnLogitSoftcapping", att.raw("attnLogitSoftcapping"));
  att.finish();

  norm.neutral("type", "rmsnorm");
  norm.must_be_null("finalNormBiasTensor");
  c.norm_eps = float(norm.num("rmsNormEps", arch_eps));
  c.norm_offset = norm.flag("rmsNormWeightOffset", false);
  // DOPPLER's layer is a sandwich when it has a pre- or post-feedforward norm; blueshift's sandwich has
  // all three. Otherwise post_attention_layernorm is the FFN input norm (Llama), bound whatever
  // postAttentionNorm says, as DOPPLER does.
  bool post_attn = norm.flag("postAttentionNorm", false), pre_ffn = norm.flag("preFeedforwardNorm", false),
       post_ffn = norm.flag("postFeedforwardNorm", false);
  if (pre_ffn || post_ffn) {
    const char* missing = !post_attn ? "postAttentionNorm"
                          : !pre_ffn ? "preFeedforwardNorm"
                          : !post_ffn ? "postFeedforwardNorm"
                                      : nullptr;
    if (missing) norm.unsupported(missing, false, "in a sandwich layer (blueshift needs all three norms)");
    c.sandwich_norm = true;
  }
  norm.finish();

  std::string act = ffn.str("activation", "silu");
  if (act == "silu" || act == "swiglu") c.act = Activation::silu;
  else if (act == "gelu" || act == "geglu") c.act = Activation::gelu_tanh;  // DOPPLER's gelu is the tanh form
  else ffn.unsupported("activation", act, "(silu, gelu)");
  ffn.neutral("gatedActivation", true, "(ungated MLP)");
  std::string branch = ffn.str("branchMode", "auto");
  if (branch != "auto" && branch != "dense") ffn.unsupported("branchMode", branch, "(mixture of experts)");
  if (ffn.flag("useDoubleWideMlp", false)) {
    // Gemma 4: the KV-shared layers' MLPs are twice as wide.
    if (c.kv_shared_layers == 0) ffn.unsupported("useDoubleWideMlp", true, "(without KV-shared layers)");
    if (c.layer_ffn_dims.empty()) c.layer_ffn_dims.assign(size_t(c.n_layers), c.ffn_dim);
    for (int32_t l = c.n_layers - c.kv_shared_layers; l < c.n_layers; ++l) c.layer_ffn_dims[size_t(l)] *= 2;
  }
  ffn.must_be_null("swigluLimit");
  ffn.finish();

  read_rope(rope, arch_theta, c);
  read_output(out, c);

  if (m.contains("eos_token_id") && !m["eos_token_id"].is_null()) {
    const json& e = m["eos_token_id"];
    for (auto& id : e.is_array() ? e : json::array({e}))
      if (id.is_number_integer()) c.eos_ids.push_back(id.get<int32_t>());
  }
  validate_config(c, label);
  return c;
}

}  // namespace bs
