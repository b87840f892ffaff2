#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "rdrr/hf_config.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "tests/common/testing.h"

using namespace bs;
using nlohmann::json;

namespace {

json llama_config() {
  return json::parse(R"({
    "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "hidden_act": "silu", "eos_token_id": 128001,
    "bos_token_id": 128000, "tie_word_embeddings": true,
    "rope_parameters": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                        "original_max_position_embeddings": 8192, "rope_theta": 500000.0, "rope_type": "llama3"}})");
}

json gemma_config() {
  json layer_types = json::array();
  for (int i = 0; i < 26; ++i) layer_types.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
  json c = json::parse(R"({
    "model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26,
    "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144,
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "hidden_activation": "gelu_pytorch_tanh",
    "query_pre_attn_scalar": 256, "sliding_window": 512, "eos_token_id": 1, "bos_token_id": 2,
    "rope_parameters": {"full_attention": {"rope_theta": 1000000.0, "rope_type": "default"},
                        "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}})");
  c["layer_types"] = layer_types;
  return c;
}

std::string error_of(const json& c) {
  try {
    config_from_hf(c, nullptr, DType::BF16);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(HfConfig, LlamaWithRopeParameters) {
  json gen = {{"eos_token_id", {128001, 128008, 128009}}, {"bos_token_id", 128000}};
  ModelConfig c = config_from_hf(llama_config(), &gen, DType::BF16);
  EXPECT_EQ(c.n_layers, 16);
  EXPECT_EQ(c.q_dim(), 2048);
  EXPECT_EQ(c.kv_dim(), 512);
  EXPECT_EQ(c.rope.scaling, RopeScaling::llama3);
  EXPECT_FLOAT_EQ(c.rope.theta, 500000.0f);
  EXPECT_FLOAT_EQ(c.rope.factor, 32.0f);
  EXPECT_EQ(c.rope.original_max_position, 8192);
  EXPECT_EQ(c.eos_ids, (std::vector<int32_t>{128001, 128008, 128009}));
  EXPECT_EQ(c.bos_id, 128000);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_FALSE(c.norm_offset || c.qk_norm || c.qkv_bias || c.sandwich_norm);
  EXPECT_EQ(c.act, Activation::silu);
  EXPECT_EQ(c.softmax_scale(), 0.125f);
}

TEST(HfConfig, LlamaClassicRopeKeys) {
  json j = llama_config();
  j.erase("rope_parameters");
  j["rope_theta"] = 500000.0;
  j["rope_scaling"] = {{"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}, {"rope_type", "llama3"}};
  j.erase("tie_word_embeddings");
  ModelConfig c = config_from_hf(j, nullptr, DType::BF16);
  EXPECT_EQ(c.rope.scaling, RopeScaling::llama3);
  EXPECT_FLOAT_EQ(c.rope.factor, 8.0f);
  EXPECT_FLOAT_EQ(c.rope.theta, 500000.0f);
  EXPECT_FALSE(c.tied_embeddings);  // HF's LlamaConfig default
  // YaRN runs (GPT-OSS's, issue 16); DeepSeek's mscale form does not.
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"mscale", 0.707}};
  EXPECT_NE(error_of(j).find("mscale"), std::string::npos);
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  EXPECT_NE(error_of(j).find("low_freq_factor"), std::string::npos);
}

TEST(HfConfig, Gemma3Text) {
  ModelConfig c = config_from_hf(gemma_config(), nullptr, DType::BF16);
  EXPECT_TRUE(c.norm_offset && c.qk_norm && c.sandwich_norm && c.tied_embeddings);
  EXPECT_EQ(c.act, Activation::gelu_tanh);
  EXPECT_FLOAT_EQ(c.embed_scale, 34.0f);  // sqrt(1152) = 33.94 rounded to bf16
  EXPECT_FLOAT_EQ(config_from_hf(gemma_config(), nullptr, DType::F32).embed_scale, std::sqrt(1152.0f));
  EXPECT_FLOAT_EQ(config_from_hf(gemma_config(), nullptr, DType::F16).embed_scale, round_half(std::sqrt(1152.0f)));
  EXPECT_FLOAT_EQ(c.attn_scale, 1.0f / 16);
  EXPECT_FLOAT_EQ(c.rope.theta, 1e6f);
  EXPECT_FLOAT_EQ(c.rope.local_theta, 1e4f);
  EXPECT_EQ(c.sliding_window, 512);
  ASSERT_EQ(c.layer_types.size(), 26u);
  EXPECT_EQ(c.layer_types[5], AttentionType::full);
  EXPECT_EQ(c.layer_types[6], AttentionType::sliding);

  // Without layer_types and rope_parameters: the pattern and the classic keys.
  json j = gemma_config();
  j.erase("layer_types");
  j.erase("rope_parameters");
  j["rope_theta"] = 1e6;
  j["rope_local_base_freq"] = 1e4;
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  ModelConfig c2 = config_from_hf(j, nullptr, DType::BF16);
  EXPECT_EQ(c2.layer_types, c.layer_types);
  EXPECT_FLOAT_EQ(c2.rope.local_theta, 1e4f);
  EXPECT_EQ(c2.rope.scaling, RopeScaling::linear);
  EXPECT_FLOAT_EQ(c2.rope.factor, 8.0f);
}

TEST(HfConfig, Gemma3MultimodalUsesTextConfigAndDefaults) {
  json j = {{"model_type", "gemma3"},
            {"eos_token_id", {1, 106}},
            {"text_config", {{"model_type", "gemma3_text"}, {"hidden_size", 2560}, {"intermediate_size", 10240},
                             {"num_hidden_layers", 34}, {"sliding_window", 1024},
                             {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}}}},
            {"vision_config", {{"hidden_size", 1152}}}};
  ModelConfig c = config_from_hf(j, nullptr, DType::BF16);
  EXPECT_EQ(c.arch, "gemma3_text");
  EXPECT_EQ(c.dim, 2560);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.vocab, 262208);
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_EQ(c.rope.scaling, RopeScaling::linear);
  EXPECT_EQ(c.eos_ids, (std::vector<int32_t>{1, 106}));
  EXPECT_TRUE(c.tied_embeddings);
}

TEST(HfConfig, QwenFlags) {
  json q2 = llama_config();
  q2["model_type"] = "qwen2";
  q2.erase("rope_parameters");
  q2["rope_theta"] = 1e6;
  ModelConfig c2 = config_from_hf(q2, nullptr, DType::BF16);
  EXPECT_TRUE(c2.qkv_bias);
  EXPECT_FALSE(c2.qk_norm);
  EXPECT_EQ(c2.rope.scaling, RopeScaling::none);
  json q3 = q2;
  q3["model_type"] = "qwen3";
  ModelConfig c3 = config_from_hf(q3, nullptr, DType::BF16);
  EXPECT_TRUE(c3.qk_norm);
  EXPECT_FALSE(c3.qkv_bias);
  q3["attention_bias"] = true;
  EXPECT_NE(error_of(q3).find("attention_bias"), std::string::npos);
}

TEST(HfConfig, MistralSlidingWindow) {
  json m = llama_config();
  m["model_type"] = "mistral";
  m["sliding_window"] = 4096;
  m.erase("rope_parameters");
  m["rope_theta"] = 1e6;
  ModelConfig c = config_from_hf(m, nullptr, DType::BF16);
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_EQ(c.layer_types[0], AttentionType::sliding);
  m["sliding_window"] = nullptr;
  EXPECT_EQ(config_from_hf(m, nullptr, DType::BF16).layer_types[0], AttentionType::full);
  // llama_config's llama3 RoPE with a window: the sliding layers, without a base of their own, are scaled
  // as HF scales them (one table for every layer).
  m["sliding_window"] = 4096;
  m["rope_parameters"] = llama_config()["rope_parameters"];
  c = config_from_hf(m, nullptr, DType::BF16);
  EXPECT_EQ(c.rope.scaling, RopeScaling::llama3);
  EXPECT_EQ(c.rope.local_theta, 0.0f);  // rope_inv_freq scales the sliding table exactly then
}

json gemma2_config() {
  return json::parse(R"({
    "model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000,
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-06, "hidden_act": "gelu_pytorch_tanh",
    "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 256, "sliding_window": 4096,
    "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "rope_theta": 10000.0,
    "eos_token_id": [1, 107], "bos_token_id": 2})");
}

json phi3_config() {
  return json::parse(R"({
    "model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096,
    "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "hidden_act": "silu", "rope_theta": 10000.0,
    "rope_scaling": null, "sliding_window": 2047, "tie_word_embeddings": false, "eos_token_id": 32000,
    "bos_token_id": 1})");
}

TEST(HfConfig, Gemma2) {
  // gemma-2-2b's config.json: no layer_types, so HF's rule (even layers slide) decides.
  ModelConfig c = config_from_hf(gemma2_config(), nullptr, DType::BF16);
  EXPECT_EQ(c.arch, "gemma2");
  EXPECT_TRUE(c.norm_offset && c.sandwich_norm && c.tied_embeddings);
  EXPECT_FALSE(c.qk_norm || c.qkv_bias);
  EXPECT_EQ(c.act, Activation::gelu_tanh);
  EXPECT_FLOAT_EQ(c.embed_scale, 48.0f);  // sqrt(2304) = 48 exactly
  EXPECT_FLOAT_EQ(c.attn_scale, 1.0f / 16);
  EXPECT_FLOAT_EQ(c.attn_softcap, 50.0f);
  EXPECT_FLOAT_EQ(c.final_softcap, 30.0f);
  EXPECT_FLOAT_EQ(c.rope.theta, 1e4f);
  EXPECT_EQ(c.rope.local_theta, 0.0f);  // one base for both layer types
  EXPECT_EQ(c.sliding_window, 4096);
  ASSERT_EQ(c.layer_types.size(), 26u);
  for (size_t i = 0; i < 26; ++i)
    EXPECT_EQ(c.layer_types[i], i % 2 == 0 ? AttentionType::sliding : AttentionType::full) << i;
  EXPECT_EQ(c.eos_ids, (std::vector<int32_t>{1, 107}));

  // layer_types wins over the rule; null softcaps are off; absent ones take Gemma2Config's defaults.
  json j = gemma2_config();
  j["num_hidden_layers"] = 2;
  j["layer_types"] = {"full_attention", "sliding_attention"};
  j["attn_logit_softcapping"] = nullptr;
  j.erase("final_logit_softcapping");
  j.erase("query_pre_attn_scalar");
  ModelConfig c2 = config_from_hf(j, nullptr, DType::BF16);
  EXPECT_EQ(c2.layer_types, (std::vector<AttentionType>{AttentionType::full, AttentionType::sliding}));
  EXPECT_EQ(c2.attn_softcap, 0.0f);
  EXPECT_FLOAT_EQ(c2.final_softcap, 30.0f);
  EXPECT_FLOAT_EQ(c2.attn_scale, 1.0f / 16);
  j["final_logit_softcapping"] = -1.0;
  EXPECT_NE(error_of(j).find("final_logit_softcapping"), std::string::npos);
}

TEST(HfConfig, Phi3) {
  ModelConfig c = config_from_hf(phi3_config(), nullptr, DType::BF16);
  EXPECT_EQ(c.arch, "phi3");
  EXPECT_FALSE(c.norm_offset || c.sandwich_norm || c.qk_norm || c.qkv_bias || c.tied_embeddings);
  EXPECT_EQ(c.act, Activation::silu);
  EXPECT_EQ(c.head_dim, 96);
  EXPECT_EQ(c.softmax_scale(), 1.0f / std::sqrt(96.0f));
  EXPECT_EQ(c.rope.scaling, RopeScaling::none);
  EXPECT_EQ(c.attn_softcap, 0.0f);
  EXPECT_EQ(c.embed_scale, 1.0f);
  // Phi-3 mini 4k slides every layer over 2047 keys; without a window none slides.
  EXPECT_EQ(c.sliding_window, 2047);
  EXPECT_EQ(std::count(c.layer_types.begin(), c.layer_types.end(), AttentionType::sliding), 32);
  json j = phi3_config();
  j["sliding_window"] = nullptr;
  auto full = config_from_hf(j, nullptr, DType::BF16).layer_types;
  EXPECT_EQ(std::count(full.begin(), full.end(), AttentionType::full), 32);
  // transformers 5 spelling, with partial_rotary_factor 1.0 (the tiny checkpoint's).
  j = phi3_config();
  j.erase("rope_theta");
  j["rope_parameters"] = {{"partial_rotary_factor", 1.0}, {"rope_theta", 250000.0}, {"rope_type", "default"}};
  EXPECT_FLOAT_EQ(config_from_hf(j, nullptr, DType::BF16).rope.theta, 250000.0f);

  // Fail closed on what blueshift does not run: partial rotary embeddings outside Qwen 3.5, and LongRoPE
  // whose factors do not cover the rotated pairs.
  j["rope_parameters"]["partial_rotary_factor"] = 0.75;
  EXPECT_NE(error_of(j).find("partial_rotary_factor"), std::string::npos);
  j = phi3_config();
  j["partial_rotary_factor"] = 0.5;
  EXPECT_NE(error_of(j).find("partial_rotary_factor"), std::string::npos);
  j = phi3_config();
  j["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0}}, {"long_factor", {2.0}}};
  std::string e = error_of(j);
  EXPECT_NE(e.find("longrope short_factor / long_factor have 1 / 1 entries, expected one per rotated pair"),
            std::string::npos) << e;
  j["rope_scaling"]["short_factor"] = json::array();
  EXPECT_NE(error_of(j).find("no list 'short_factor'"), std::string::npos) << error_of(j);
  // Phi-3 128k as its config.json has it ("su" is the older name): the factors per pair, the original
  // context at the top level, the attention factor sqrt(1 + ln(32) / ln(4096)) from 131072 / 4096.
  j = phi3_config();
  j["max_position_embeddings"] = 131072;
  j["original_max_position_embeddings"] = 4096;
  const int32_t pairs = config_from_hf(phi3_config(), nullptr, DType::BF16).head_dim / 2;
  j["rope_scaling"] = {{"type", "su"}, {"short_factor", std::vector<double>(size_t(pairs), 1.0)},
                       {"long_factor", std::vector<double>(size_t(pairs), 4.0)}};
  auto lr = config_from_hf(j, nullptr, DType::BF16);
  EXPECT_EQ(lr.rope.scaling, RopeScaling::longrope);
  EXPECT_EQ(lr.rope.original_max_position, 4096);
  EXPECT_FLOAT_EQ(lr.rope.factor, 32.0f);
  EXPECT_NEAR(lr.rope.attention_factor, std::sqrt(1 + std::log(32.0) / std::log(4096.0)), 1e-6);
  EXPECT_FLOAT_EQ(lr.softmax_scale(), lr.rope.attention_factor * lr.rope.attention_factor / std::sqrt(float(lr.head_dim)));
}

TEST(HfConfig, RejectsUnsupportedAndInconsistent) {
  json j = llama_config();
  j["model_type"] = "gpt2";
  std::string e = error_of(j);
  EXPECT_NE(e.find("gpt2"), std::string::npos) << e;
  EXPECT_NE(e.find("llama, mistral, qwen2, qwen3, gemma2, gemma3_text, gemma3, phi3"), std::string::npos) << e;
  j = llama_config();
  j["num_key_value_heads"] = 5;
  EXPECT_NE(error_of(j).find("multiple"), std::string::npos);
  j = llama_config();
  j.erase("hidden_size");
  EXPECT_NE(error_of(j).find("hidden_size"), std::string::npos);
  j = llama_config();
  j["hidden_act"] = "relu";
  EXPECT_NE(error_of(j).find("relu"), std::string::npos);
  j = gemma_config();
  j["layer_types"].erase(0);
  EXPECT_NE(error_of(j).find("layer_types"), std::string::npos);
}

// Qwen 3.5 (qwen3_5_text, or qwen3_5 with a text_config): Gated DeltaNet layer kinds and sizes, partial
// rotary, the gated q projection, (1 + w) norms; inconsistent DeltaNet sizes fail naming the field.
static json qwen35_config() {
  return json::parse(R"({"model_type": "qwen3_5_text", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024,
    "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "hidden_act": "silu", "tie_word_embeddings": false,
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"],
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 32, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
    "linear_value_head_dim": 32, "partial_rotary_factor": 0.25,
    "rope_parameters": {"partial_rotary_factor": 0.25, "rope_theta": 10000000.0, "rope_type": "default"}})");
}

TEST(HfConfig, Qwen35) {
  ModelConfig c = config_from_hf(qwen35_config(), nullptr, DType::BF16);
  EXPECT_EQ(c.rotary_dim, 16);
  EXPECT_EQ(c.rot_dim(), 16);
  EXPECT_TRUE(c.attn_output_gate && c.norm_offset && c.qk_norm && !c.tied_embeddings);
  EXPECT_EQ(c.linear_qkv_dim(), 256);
  EXPECT_EQ(c.linear_out_dim(), 128);
  ASSERT_EQ(c.layer_kinds.size(), 4u);
  EXPECT_EQ(c.kind(0), LayerKind::linear_attention);
  EXPECT_EQ(c.kind(3), LayerKind::attention);
  EXPECT_EQ(c.layer_types[0], AttentionType::full);
  // The multimodal wrapper: the text model's config in text_config.
  json mm = {{"model_type", "qwen3_5"}, {"text_config", qwen35_config()}};
  EXPECT_EQ(config_to_json(config_from_hf(mm, nullptr, DType::BF16)).dump(), config_to_json(c).dump());
  auto with = [](const char* key, json v) {
    json j = qwen35_config();
    j[key] = v;
    return error_of(j);
  };
  EXPECT_NE(with("linear_num_value_heads", 3).find("not a multiple of linear_num_key_heads"), std::string::npos);
  EXPECT_NE(with("linear_num_key_heads", nullptr).find("'linear_num_key_heads'"), std::string::npos);
  EXPECT_NE(with("linear_key_head_dim", 512).find("is not supported (at most 256/256/8)"), std::string::npos);
  EXPECT_NE(with("linear_conv_kernel_dim", 0).find("linear_conv_kernel_dim must be positive"), std::string::npos);
  EXPECT_NE(with("linear_num_value_heads", 1 << 30).find("is too large"), std::string::npos);
  json odd = qwen35_config();
  odd["rope_parameters"]["partial_rotary_factor"] = 0.3;
  EXPECT_NE(error_of(odd).find("does not give an even rotary width"), std::string::npos) << error_of(odd);
  // linear_attention is a Qwen 3.5 layer type, not a Llama one.
  json llama = llama_config();
  llama["layer_types"] = {"linear_attention", "full_attention"};
  EXPECT_NE(error_of(llama).find("'linear_attention' is not supported"), std::string::npos) << error_of(llama);
}

TEST(HfConfig, JsonRoundTrip) {
  for (const json& j : {llama_config(), gemma_config(), gemma2_config(), phi3_config(), qwen35_config()}) {
    ModelConfig a = config_from_hf(j, nullptr, DType::BF16);
    ModelConfig b = config_from_json(json::parse(config_to_json(a).dump()), "m");
    EXPECT_EQ(config_to_json(a).dump(), config_to_json(b).dump());
    EXPECT_EQ(a.layer_types, b.layer_types);
    EXPECT_EQ(a.layer_kinds, b.layer_kinds);
    EXPECT_EQ(a.embed_scale, b.embed_scale);
  }
  json bad = json::parse(config_to_json(config_from_hf(llama_config(), nullptr, DType::BF16)).dump());
  bad["act"] = "relu";
  EXPECT_THROW(config_from_json(bad, "m"), Error);
}

TEST(HfConfig, SharedConfigs) {
  BS_REQUIRE_SHARED();
  namespace fs = std::filesystem;
  int n = 0;
  for (auto& e : fs::directory_iterator(bs::testing::shared_dir() / "data/configs")) {
    ModelConfig c = config_from_hf(read_json_file(e.path()), nullptr, DType::BF16, e.path().string());
    EXPECT_GT(c.n_layers, 0) << e.path();
    ++n;
  }
  for (auto m : {"llama-tiny", "qwen3-tiny", "gemma3-tiny", "gemma2-tiny", "phi3-tiny", "lfm2-tiny", "qwen35-tiny"}) {
    ModelConfig c = load_hf_config(bs::testing::shared_dir() / "data/models" / m, DType::BF16);
    EXPECT_EQ(c.vocab, 1024);
    ++n;
  }
  EXPECT_GE(n, 8);
}

// LFM2: conv / attention layers from layer_types (or the older full_attn_idxs), conv width, norm_eps,
// q/k norms, tied head, and Lfm2MLP's FFN width (LFM2.5-1.2B: 12288 -> 2/3 -> 8192).
TEST(HfConfig, Lfm2) {
  json j = json::parse(R"({
    "model_type": "lfm2", "hidden_size": 2048, "intermediate_size": 12288, "num_hidden_layers": 4,
    "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 65536, "max_position_embeddings": 128000,
    "norm_eps": 1e-05, "conv_L_cache": 3, "conv_bias": false, "block_auto_adjust_ff_dim": true,
    "block_ffn_dim_multiplier": 1.0, "block_multiple_of": 256, "layer_types": ["conv", "conv", "full_attention", "conv"],
    "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}, "eos_token_id": 7})");
  ModelConfig c = config_from_hf(j, nullptr, DType::BF16);
  EXPECT_EQ(c.ffn_dim, 8192);
  EXPECT_EQ(c.head_dim, 64);
  EXPECT_EQ(c.conv_kernel, 3);
  EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.tied_embeddings);
  const std::vector<LayerKind> want = {LayerKind::short_conv, LayerKind::short_conv, LayerKind::attention,
                                       LayerKind::short_conv};
  EXPECT_EQ(c.layer_kinds, want);
  ModelConfig back = config_from_json(json::parse(config_to_json(c).dump()), "m");
  EXPECT_EQ(config_to_json(back).dump(), config_to_json(c).dump());
  EXPECT_EQ(back.layer_kinds, want);

  json old = j;
  old.erase("layer_types");
  old["full_attn_idxs"] = {2};
  EXPECT_EQ(config_from_hf(old, nullptr, DType::BF16).layer_kinds, want);
  old["full_attn_idxs"] = {4};
  EXPECT_NE(error_of(old).find("full_attn_idxs"), std::string::npos);
  old.erase("full_attn_idxs");
  EXPECT_NE(error_of(old).find("full_attn_idxs"), std::string::npos);
  json k = j;
  k["block_auto_adjust_ff_dim"] = false;
  EXPECT_EQ(config_from_hf(k, nullptr, DType::BF16).ffn_dim, 12288);
  k["conv_bias"] = true;
  EXPECT_NE(error_of(k).find("conv_bias"), std::string::npos);
  k = j;
  k["tie_embedding"] = false;
  EXPECT_FALSE(config_from_hf(k, nullptr, DType::BF16).tied_embeddings);
  k["tie_word_embeddings"] = true;  // the transformers name wins
  EXPECT_TRUE(config_from_hf(k, nullptr, DType::BF16).tied_embeddings);
  k = j;
  k["block_ffn_dim_multiplier"] = 1e300;
  EXPECT_NE(error_of(k).find("block_ffn_dim_multiplier"), std::string::npos);
  k = j;
  k["conv_L_cache"] = 1;
  EXPECT_NE(error_of(k).find("conv_L_cache"), std::string::npos);
  k = j;
  k["layer_types"][1] = "linear_attention";
  EXPECT_NE(error_of(k).find("linear_attention"), std::string::npos);
}

// Mixture of experts (issue 16): Mixtral, Qwen3-MoE and GPT-OSS map to the MoE fields; what the kernels cannot
// run (more than 256 experts, more than 8 per token, dense layers between sparse ones, DeepSeek's YaRN mscale)
// fails naming the field; the fields survive x-blueshift.config.
static json moe_config(const char* type) {
  json j = {{"model_type", type}, {"hidden_size", 128}, {"intermediate_size", 256}, {"num_hidden_layers", 2},
            {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"vocab_size", 300}, {"num_experts_per_tok", 2},
            {"max_position_embeddings", 4096}};
  if (std::string(type) == "qwen3_moe") j.update({{"num_experts", 8}, {"moe_intermediate_size", 96}, {"norm_topk_prob", false}});
  else j["num_local_experts"] = 4;
  if (std::string(type) == "gpt_oss")
    j.update({{"attention_bias", true}, {"head_dim", 32}, {"sliding_window", 8},
              {"layer_types", {"sliding_attention", "full_attention"}},
              {"rope_parameters", {{"rope_type", "yarn"}, {"rope_theta", 150000.0}, {"factor", 32.0}, {"beta_fast", 32.0},
                                   {"beta_slow", 1.0}, {"original_max_position_embeddings", 4096}, {"truncate", false}}}});
  return j;
}

TEST(HfConfig, MixtureOfExperts) {
  ModelConfig m = config_from_hf(moe_config("mixtral"), nullptr, DType::BF16);
  EXPECT_EQ(m.n_experts, 4);
  EXPECT_EQ(m.n_experts_used, 2);
  EXPECT_EQ(m.expert_ffn_dim, 256);
  EXPECT_TRUE(m.moe_norm_topk && !m.moe_router_bias && !m.attn_sinks && m.swiglu_limit == 0);
  ModelConfig q = config_from_hf(moe_config("qwen3_moe"), nullptr, DType::BF16);
  EXPECT_EQ(q.n_experts, 8);
  EXPECT_EQ(q.expert_ffn_dim, 96);
  EXPECT_TRUE(!q.moe_norm_topk && q.qk_norm);
  ModelConfig g = config_from_hf(moe_config("gpt_oss"), nullptr, DType::BF16);
  EXPECT_TRUE(g.moe_router_bias && g.moe_expert_bias && g.attn_sinks && g.attn_out_bias && g.qkv_bias);
  EXPECT_FLOAT_EQ(g.swiglu_alpha, 1.702f);
  EXPECT_FLOAT_EQ(g.swiglu_limit, 7.0f);
  EXPECT_EQ(g.rope.scaling, RopeScaling::yarn);
  EXPECT_FLOAT_EQ(g.rope.attention_factor, float(0.1 * std::log(32.0) + 1));
  EXPECT_FALSE(g.rope.yarn_truncate);
  EXPECT_TRUE(g.sliding(0) && !g.sliding(1));
  for (const ModelConfig* c : {&m, &q, &g})
    EXPECT_EQ(config_to_json(config_from_json(json::parse(config_to_json(*c).dump()), "x")).dump(), config_to_json(*c).dump());
  auto with = [](const char* type, const char* key, json v) {
    json j = moe_config(type);
    j[key] = v;
    return error_of(j);
  };
  EXPECT_NE(with("mixtral", "num_experts_per_tok", 9).find("per token"), std::string::npos);
  EXPECT_NE(with("mixtral", "num_local_experts", 300).find("1..256 experts"), std::string::npos);
  EXPECT_NE(with("qwen3_moe", "decoder_sparse_step", 2).find("decoder_sparse_step"), std::string::npos);
  EXPECT_NE(with("qwen3_moe", "mlp_only_layers", json::array({1})).find("mlp_only_layers"), std::string::npos);
  json ds = moe_config("gpt_oss");
  ds["rope_parameters"]["mscale"] = 1.0;
  EXPECT_NE(error_of(ds).find("mscale"), std::string::npos) << error_of(ds);
}
