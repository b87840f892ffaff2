// DOPPLER's architecture/inference blocks as its converter writes them today (schema
// doppler.execution/v1): what maps onto ModelConfig, what fails naming the field and its value,
// tensor names without an HF model_type, and the manifests DOPPLER ships.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "rdrr/hf_config.h"
#include "rdrr/manifest.h"
#include "rdrr/tensor_names.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "tests/common/testing.h"
#include "tests/rdrr/fixture.h"
#include "tests/rdrr/st_builder.h"

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A small Gemma-3-shaped manifest with every key DOPPLER writes (as in gemma-3-270m-it-f16-af32).
json gemma_like() {
  return json::parse(R"({
    "version": 1, "modelId": "tiny", "modelType": "transformer", "moeConfig": null,
    "architecture": {"numLayers": 6, "hiddenSize": 64, "intermediateSize": 128, "numAttentionHeads": 4,
      "numKeyValueHeads": 2, "headDim": 16, "vocabSize": 100, "maxSeqLen": 256, "ropeTheta": 1000000,
      "linearNumKeyHeads": null, "linearNumValueHeads": null, "linearKeyHeadDim": null, "linearValueHeadDim": null,
      "linearConvKernelDim": null, "hiddenSizePerLayerInput": null, "vocabSizePerLayerInput": null,
      "globalHeadDim": null, "numKvSharedLayers": null},
    "inference": {
      "schema": "doppler.execution/v1",
      "attention": {"queryPreAttnScalar": 16, "attnLogitSoftcapping": null, "slidingWindow": 8, "queryKeyNorm": true,
        "causal": true, "attentionBias": false, "attentionOutputGate": false, "valueNorm": false},
      "normalization": {"rmsNormEps": 1e-06, "rmsNormWeightOffset": true, "postAttentionNorm": true,
        "preFeedforwardNorm": true, "postFeedforwardNorm": true},
      "ffn": {"activation": "gelu", "gatedActivation": true, "branchMode": "auto", "swigluLimit": null,
        "useDoubleWideMlp": false},
      "rope": {"ropeTheta": 1000000, "ropeLocalTheta": 10000, "mropeInterleaved": false, "mropeSection": null,
        "partialRotaryFactor": null, "ropeScalingType": null, "ropeScalingFactor": 1, "ropeLocalScalingType": null,
        "ropeLocalScalingFactor": 1, "yarnBetaFast": null, "yarnBetaSlow": null, "yarnOriginalMaxPos": null,
        "ropeLocalYarnBetaFast": null, "ropeLocalYarnBetaSlow": null, "ropeLocalYarnOriginalMaxPos": null,
        "ropeLocalPartialRotaryFactor": null, "ropeFrequencyBaseDim": null, "ropeLocalFrequencyBaseDim": null,
        "longropeShortFactor": null, "longropeLongFactor": null, "longropeOriginalMaxPos": null},
      "output": {"finalLogitSoftcapping": null, "tieWordEmbeddings": true, "scaleEmbeddings": true,
        "embeddingTranspose": false, "embeddingVocabSize": 100, "embeddingPostprocessor": null,
        "embeddingScale": null, "logitInputScale": 1},
      "layerPattern": {"type": "every_n", "globalPattern": null, "period": 6, "offset": 5, "layerTypes": null,
        "residualBranchScale": 1},
      "chatTemplate": {"type": "gemma", "enabled": true}, "pipeline": null, "diffusionGemma": null,
      "rerank": null, "supportsEmbedding": false, "supportsVision": false,
      "session": {"kvcache": {"kvDtype": "f16"}}, "execution": {"decode": [["input_norm", "rmsnorm"]]}},
    "shards": [], "tensors": {}, "eos_token_id": [1, 50]})");
}

// A Qwen3-shaped one: no sandwich (postAttentionNorm is the FFN input norm), q/k norm, full attention.
json qwen_like() {
  json j = gemma_like();
  auto& inf = j["inference"];
  inf["attention"]["queryPreAttnScalar"] = 16;
  inf["attention"]["slidingWindow"] = nullptr;
  inf["normalization"] = {{"rmsNormEps", 1e-5},
                          {"rmsNormWeightOffset", false},
                          {"postAttentionNorm", true},
                          {"preFeedforwardNorm", false},
                          {"postFeedforwardNorm", false}};
  inf["ffn"]["activation"] = "silu";
  inf["rope"]["ropeLocalTheta"] = nullptr;
  inf["output"]["scaleEmbeddings"] = false;
  inf["output"]["tieWordEmbeddings"] = false;
  inf["layerPattern"] = {{"type", "uniform"}, {"globalPattern", nullptr}, {"period", nullptr},
                         {"offset", nullptr}, {"layerTypes", nullptr},    {"residualBranchScale", 1}};
  inf["rerank"] = {{"format", "qwen3_yes_no_logit"}, {"trueTokenId", 9}};
  return j;
}

std::string config_error(const json& j) {
  try {
    config_from_doppler(j, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(DopplerConfig, GemmaShapedBlockMaps) {
  ModelConfig c = config_from_doppler(gemma_like(), "m.json");
  EXPECT_EQ(c.n_layers, 6);
  EXPECT_EQ(c.n_kv_heads, 2);
  EXPECT_TRUE(c.norm_offset && c.qk_norm && c.sandwich_norm && c.tied_embeddings);
  EXPECT_FALSE(c.qkv_bias);
  EXPECT_EQ(c.act, Activation::gelu_tanh);
  EXPECT_FLOAT_EQ(c.attn_scale, 0.25f);  // queryPreAttnScalar 16
  EXPECT_FLOAT_EQ(c.norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.embed_scale, 8.0f);  // sqrt(64)
  EXPECT_EQ(c.sliding_window, 8);
  EXPECT_FLOAT_EQ(c.rope.theta, 1e6f);
  EXPECT_FLOAT_EQ(c.rope.local_theta, 1e4f);
  EXPECT_EQ(c.rope.scaling, RopeScaling::none);
  std::vector<AttentionType> want(6, AttentionType::sliding);
  want[5] = AttentionType::full;  // every_n: period 6, offset 5
  EXPECT_EQ(c.layer_types, want);
  EXPECT_EQ(c.eos_ids, (std::vector<int32_t>{1, 50}));
}

TEST(DopplerConfig, QwenShapedBlockMaps) {
  ModelConfig c = config_from_doppler(qwen_like(), "m.json");
  EXPECT_FALSE(c.sandwich_norm || c.norm_offset);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_EQ(c.act, Activation::silu);
  EXPECT_FLOAT_EQ(c.embed_scale, 1.0f);
  EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
  EXPECT_FLOAT_EQ(c.softmax_scale(), 0.25f);
  EXPECT_EQ(c.sliding_window, 0);
  EXPECT_EQ(c.layer_types, std::vector<AttentionType>(6, AttentionType::full));
}

TEST(DopplerConfig, PatternsScalesAndNeutralValues) {
  json j = gemma_like();
  auto& lp = j["inference"]["layerPattern"];
  lp["type"] = "alternating";
  lp["globalPattern"] = "odd";
  ModelConfig c = config_from_doppler(j, "m.json");
  EXPECT_EQ(c.layer_types[0], AttentionType::sliding);
  EXPECT_EQ(c.layer_types[1], AttentionType::full);
  lp["type"] = "custom";
  lp["layerTypes"] = {"full_attention", "sliding_attention", "sliding_attention",
                      "full_attention", "sliding_attention", "sliding_attention"};
  c = config_from_doppler(j, "m.json");
  EXPECT_EQ(c.layer_types[3], AttentionType::full);
  EXPECT_EQ(c.layer_types[4], AttentionType::sliding);
  // uniform with a window: every layer slides (Mistral); with none, every layer is full.
  lp = {{"type", "uniform"}};
  c = config_from_doppler(j, "m.json");
  EXPECT_EQ(c.layer_types, std::vector<AttentionType>(6, AttentionType::sliding));
  // DOPPLER falls back on the HF config's layer_types.
  j["config"] = {{"layer_types",
                  {"sliding_attention", "full_attention", "sliding_attention", "full_attention",
                   "sliding_attention", "full_attention"}}};
  c = config_from_doppler(j, "m.json");
  EXPECT_EQ(c.layer_types[1], AttentionType::full);
  EXPECT_EQ(c.layer_types[2], AttentionType::sliding);

  // Sliding layers without a window attend to everything (DOPPLER), with the local RoPE base.
  j = gemma_like();
  j["inference"]["attention"]["slidingWindow"] = nullptr;
  c = config_from_doppler(j, "m.json");
  EXPECT_EQ(c.layer_types[0], AttentionType::sliding);
  EXPECT_EQ(c.sliding_window, 256);  // maxSeqLen: the same mask as none
  EXPECT_FLOAT_EQ(c.rope.local_theta, 1e4f);

  // Explicit embedding scale and softcaps; a scaling factor with no type is linear (DOPPLER's default).
  j = gemma_like();
  j["inference"]["output"]["scaleEmbeddings"] = false;
  j["inference"]["output"]["embeddingScale"] = 12;
  j["inference"]["output"]["finalLogitSoftcapping"] = 30;
  j["inference"]["attention"]["attnLogitSoftcapping"] = 50;
  j["inference"]["rope"]["ropeScalingFactor"] = 8;
  c = config_from_doppler(j, "m.json");
  EXPECT_FLOAT_EQ(c.embed_scale, 12.0f);
  EXPECT_FLOAT_EQ(c.final_softcap, 30.0f);
  EXPECT_FLOAT_EQ(c.attn_softcap, 50.0f);
  EXPECT_EQ(c.rope.scaling, RopeScaling::linear);
  EXPECT_FLOAT_EQ(c.rope.factor, 8.0f);
  j["inference"]["rope"]["ropeScalingType"] = "linear";
  EXPECT_EQ(config_from_doppler(j, "m.json").rope.scaling, RopeScaling::linear);

  // The neutral value of every feature blueshift lacks passes.
  j = gemma_like();
  auto& a = j["architecture"];
  a["numGlobalKeyValueHeads"] = 2;
  a["globalHeadDim"] = 16;
  a["hiddenSizePerLayerInput"] = 0;
  a["vocabSizePerLayerInput"] = 262144;
  a["numKvSharedLayers"] = 0;
  auto& r = j["inference"]["rope"];
  r["partialRotaryFactor"] = 1;
  r["ropeFrequencyBaseDim"] = 16;
  r["ropeInterleaved"] = false;
  j["inference"]["attention"]["queryKeyNormType"] = "rmsnorm";
  j["inference"]["attention"]["queryKeyNormAxis"] = "head";
  j["inference"]["attention"]["outputGateType"] = "swish";  // read only with the gate on
  j["inference"]["ffn"]["branchMode"] = "dense";
  j["inference"]["normalization"]["type"] = "rmsnorm";
  j["moeConfig"] = {{"numExperts", 1}};
  EXPECT_EQ(config_error(j), "accepted");
}

TEST(DopplerConfig, UnsupportedFieldsAreNamedWithTheirValue) {
  struct Case {
    const char* pointer;
    json value;
    const char* message;
  };
  const Case cases[] = {
      {"/inference/attention/causal", false, "inference.attention.causal = false is not supported"},
      {"/inference/attention/queryKeyNormType", "layernorm",
       "inference.attention.queryKeyNormType = \"layernorm\""},
      {"/inference/attention/queryKeyNormAxis", "projection",
       "inference.attention.queryKeyNormAxis = \"projection\""},
      {"/inference/attention/queryKeyNormLayers", {0, 2}, "inference.attention.queryKeyNormLayers = [0,2]"},
      {"/inference/attention/queryPreAttnScalar", 4,
       "inference.attention.queryPreAttnScalar = 4 is not supported"},
      {"/inference/normalization/type", "layernorm", "inference.normalization.type = \"layernorm\""},
      {"/inference/normalization/preFeedforwardNorm", false,
       "inference.normalization.preFeedforwardNorm = false"},
      {"/inference/normalization/finalNormBiasTensor", "b",
       "inference.normalization.finalNormBiasTensor = \"b\""},
      {"/inference/ffn/activation", "relu", "inference.ffn.activation = \"relu\" is not supported"},
      {"/inference/ffn/gatedActivation", false, "inference.ffn.gatedActivation = false is not supported"},
      {"/inference/ffn/branchMode", "dense_plus_moe", "inference.ffn.branchMode = \"dense_plus_moe\""},
      {"/inference/ffn/useDoubleWideMlp", true, "inference.ffn.useDoubleWideMlp = true is not supported"},
      {"/inference/ffn/swigluLimit", 7, "inference.ffn.swigluLimit = 7 is not supported"},
      {"/inference/rope/ropeScalingType", "yarn",
       "inference.rope.ropeScalingType = \"yarn\" is not supported"},
      // LongRoPE without its factors (Phi-3 128k's bundle has them; test_parity's LongRope runs one).
      {"/inference/rope/ropeScalingType", "longrope", "inference.rope.longropeShortFactor = null is not supported"},
      {"/inference/rope/ropeInterleaved", true, "inference.rope.ropeInterleaved = true is not supported"},
      {"/inference/rope/mropeInterleaved", true, "inference.rope.mropeInterleaved = true is not supported"},
      {"/inference/rope/mropeSection",
       {11, 11, 10},
       "inference.rope.mropeSection = [11,11,10] is not supported"},
      {"/inference/rope/partialRotaryFactor", 0.3,
       "inference.rope.partialRotaryFactor = 0.3 is not supported"},
      {"/inference/rope/ropeFrequencyBaseDim", 512,
       "inference.rope.ropeFrequencyBaseDim = 512 is not supported"},
      {"/inference/rope/ropeLocalScalingType", "linear", "inference.rope.ropeLocalScalingType = \"linear\""},
      {"/inference/rope/ropeLocalScalingFactor", 2,
       "inference.rope.ropeLocalScalingFactor = 2 is not supported"},
      {"/inference/rope/yarnBetaFast", 32, "inference.rope.yarnBetaFast = 32 is not supported"},
      {"/inference/rope/longropeOriginalMaxPos", 32768, "inference.rope.longropeOriginalMaxPos = 32768"},
      {"/inference/output/logitInputScale", 0.25, "inference.output.logitInputScale = 0.25 is not supported"},
      {"/inference/output/embeddingTranspose", true,
       "inference.output.embeddingTranspose = true is not supported"},
      {"/inference/output/embeddingVocabSize", 128,
       "inference.output.embeddingVocabSize = 128 is not supported"},
      {"/inference/output/embeddingPostprocessor",
       {{"poolingMode", "mean"}},
       "inference.output.embeddingPostprocessor = {\"poolingMode\":\"mean\"} is not supported"},
      {"/inference/output/embeddingScale", 12,
       "inference.output.embeddingScale = 12 is not supported together"},
      {"/inference/output/lmHeadBiasTensor", "b",
       "inference.output.lmHeadBiasTensor = \"b\" is not supported"},
      {"/inference/layerPattern/residualBranchScale", 0.5,
       "inference.layerPattern.residualBranchScale = 0.5"},
      {"/inference/layerPattern/type", "hourglass",
       "inference.layerPattern.type = \"hourglass\" is not supported"},
      {"/architecture/numKvSharedLayers", 20, "architecture.numKvSharedLayers = 20 is not supported"},
      {"/architecture/linearNormMode", "per_head", "architecture.linearNormMode = \"per_head\" is not supported"},
      {"/moeConfig",
       {{"numExperts", 128}, {"numExpertsPerToken", 8}},
       "moeConfig.numExperts = 128 is not supported"},
      {"/inference/diffusionGemma",
       {{"canvasLength", 256}},
       "inference.diffusionGemma = {\"canvasLength\":256}"},
      {"/inference/pipeline",
       {{"steps", json::array()}},
       "inference.pipeline = {\"steps\":[]} is not supported"},
      {"/inference/sequence", {{"logits", true}}, "inference.sequence = {\"logits\":true} is not supported"},
      {"/inference/schema", "doppler.execution/v2",
       "inference.schema = \"doppler.execution/v2\" is not supported"},
      {"/inference/unsupported",
       {{"code", "x"}},
       "inference.unsupported = {\"code\":\"x\"} is not supported"},
      // Keys nobody told blueshift about may change the math.
      {"/inference/attention/newThing", 1, "inference.attention.newThing = 1 is not a field blueshift knows"},
      {"/inference/newBlock", json::object(), "inference.newBlock = {} is not a field blueshift knows"},
      {"/architecture/numExperts", 8, "architecture.numExperts = 8 is not a field blueshift knows"},
  };
  for (auto& k : cases) {
    json j = gemma_like();
    j[json::json_pointer(k.pointer)] = k.value;
    std::string err = config_error(j);
    EXPECT_NE(err.find(k.message), std::string::npos) << k.pointer << ": " << err;
    EXPECT_EQ(err.rfind("m.json: ", 0), 0u) << err;  // names the file
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  // Long non-ASCII values are cut to one ASCII line (info --json embeds the message in JSON).
  json j = gemma_like();
  std::string e_acute_40;
  for (int i = 0; i < 40; ++i) e_acute_40 += "\xc3\xa9";
  j["inference"]["attention"]["newThing"] = e_acute_40;
  std::string err = config_error(j);
  EXPECT_NE(err.find("inference.attention.newThing = \"\\u00e9"), std::string::npos) << err;
  EXPECT_TRUE(std::all_of(err.begin(), err.end(), [](char ch) { return (unsigned char)ch < 0x80; })) << err;
  EXPECT_LT(err.size(), 160u) << err;
  // Per-layer types name their index.
  j = gemma_like();
  j["inference"]["layerPattern"] = {{"type", "custom"},
                                    {"layerTypes",
                                     {"full_attention", "sliding_attention", "sliding_attention",
                                      "mamba", "sliding_attention", "full_attention"}}};
  EXPECT_NE(
      config_error(j).find("inference.layerPattern.layerTypes[3] = \"mamba\" is not supported"),
      std::string::npos)
      << config_error(j);
  j["inference"]["layerPattern"]["layerTypes"].erase(5);
  EXPECT_NE(config_error(j).find("numLayers = 6"), std::string::npos) << config_error(j);
  // Scaled RoPE inherited by sliding layers (no ropeLocalScalingType key at all), which blueshift runs
  // unscaled.
  j = gemma_like();
  j["inference"]["rope"].erase("ropeLocalScalingType");
  j["inference"]["rope"]["ropeScalingType"] = "linear";
  j["inference"]["rope"]["ropeScalingFactor"] = 8;
  EXPECT_NE(
      config_error(j).find("inference.rope.ropeScalingType = \"linear\" is not supported on sliding layers"),
      std::string::npos)
      << config_error(j);
  // A factor with no type is linear for the global layers only (DOPPLER takes the local type, null, and
  // the local factor, 1, for the sliding ones): that is blueshift's split too.
  j["inference"]["rope"]["ropeScalingType"] = nullptr;
  EXPECT_EQ(config_from_doppler(j, "m.json").rope.scaling, RopeScaling::linear);
  j = gemma_like();
  j["architecture"]["numLayers"] = 2000000000;
  EXPECT_NE(config_error(j).find("architecture.numLayers = 2000000000 is more than any model has"),
            std::string::npos);
  j = gemma_like();
  j["inference"]["layerPattern"] = {{"type", "uniform"}};
  j["config"] = {{"layer_types", {"full_attention"}}};
  EXPECT_NE(config_error(j).find("config.layer_types: expected a list of numLayers = 6"), std::string::npos)
      << config_error(j);
  // ... and on the Qwen shape, which has no sliding layers, the local keys do not matter.
  j = qwen_like();
  j["inference"]["rope"]["ropeLocalScalingFactor"] = 2;
  EXPECT_EQ(config_error(j), "accepted");
}

TEST(DopplerConfig, BlueshiftsOwnBlocksReadBack) {
  for (bool gemma : {true, false}) {
    json j = gemma ? gemma_like() : qwen_like();
    ModelConfig c = config_from_doppler(j, "m.json");
    if (gemma) {  // Gemma 3 4B: linear on the global layers only
      c.rope.scaling = RopeScaling::linear;
      c.rope.factor = 8;
    } else {
      c.rope.scaling = RopeScaling::llama3;
      c.rope.factor = 8;
      c.rope.low_freq_factor = 1;
      c.rope.high_freq_factor = 4;
      c.rope.original_max_position = 8192;
      c.qkv_bias = true;
    }
    json written = {{"modelType", c.arch},
                    {"architecture", json(doppler_architecture(c))},
                    {"inference", json(doppler_inference(c))},
                    {"eos_token_id", c.eos_ids}};
    // DOPPLER's validator wants these set explicitly, null or not.
    for (auto key : {"/attention/slidingWindow", "/attention/valueNorm", "/normalization/finalNormBiasTensor",
                     "/ffn/swigluLimit", "/ffn/branchMode", "/rope/ropeLocalScalingType",
                     "/rope/mropeSection", "/rope/longropeShortFactor", "/rope/ropeLocalYarnBetaFast",
                     "/output/embeddingVocabSize", "/output/logitInputScale", "/layerPattern/globalPattern",
                     "/layerPattern/residualBranchScale", "/chatTemplate/type", "/chatTemplate/enabled"})
      EXPECT_TRUE(written["inference"].contains(json::json_pointer(key))) << key;
    ModelConfig back = config_from_doppler(written, "written.json");
    EXPECT_NEAR(back.softmax_scale(), c.softmax_scale(), 1e-7);
    back.attn_scale = c.attn_scale;
    EXPECT_EQ(config_to_json(back).dump(), config_to_json(c).dump());
  }
}

// Gemma 2 (alternating windows, both softcaps, no q/k norm) and Phi-3 (every layer sliding, untied head)
// survive the trip through DOPPLER's blocks, as written by `convert`.
TEST(DopplerConfig, Gemma2AndPhi3BlocksReadBack) {
  const json hf[] = {
      json::parse(R"({"model_type": "gemma2", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024,
        "query_pre_attn_scalar": 64, "sliding_window": 16, "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0, "eos_token_id": 1, "bos_token_id": 2})"),
      json::parse(R"({"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 4,
        "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "hidden_act": "silu", "rope_theta": 10000.0, "sliding_window": 2047,
        "tie_word_embeddings": false, "eos_token_id": 32000})")};
  for (auto& j : hf) {
    ModelConfig c = config_from_hf(j, nullptr, DType::BF16, "config.json");
    json written = {{"modelType", c.arch},
                    {"architecture", json(doppler_architecture(c))},
                    {"inference", json(doppler_inference(c))},
                    {"eos_token_id", c.eos_ids}};
    ModelConfig back = config_from_doppler(written, "written.json");
    EXPECT_NEAR(back.softmax_scale(), c.softmax_scale(), 1e-7) << c.arch;
    back.attn_scale = c.attn_scale;
    back.bos_id = c.bos_id;  // DOPPLER's blocks carry no BOS (the tokenizer does)
    EXPECT_EQ(config_to_json(back).dump(), config_to_json(c).dump()) << c.arch;
  }
}

TEST(DopplerConfig, TensorNamesFollowTheFlags) {
  ModelConfig g = config_from_doppler(gemma_like(), "m.json");
  TensorNames gn(g);
  // DOPPLER keeps the source's prefix: text-only, transformers 5 multimodal, transformers 4, none.
  for (auto p : {"model.", "model.language_model.", "language_model.model.", ""}) {
    EXPECT_EQ(gn.to_internal(std::string(p) + "layers.2.post_attention_layernorm.weight").internal,
              "blk.2.attn_post_norm");
    EXPECT_EQ(gn.to_internal(std::string(p) + "layers.2.pre_feedforward_layernorm.weight").internal,
              "blk.2.ffn_norm");
    EXPECT_EQ(gn.to_internal(std::string(p) + "layers.2.post_feedforward_layernorm.weight").internal,
              "blk.2.ffn_post_norm");
    EXPECT_EQ(gn.to_internal(std::string(p) + "layers.2.self_attn.k_norm.weight").internal,
              "blk.2.attn_k_norm");
    EXPECT_EQ(gn.to_internal(std::string(p) + "embed_tokens.weight").internal, "embed");
  }
  // What the config does not declare stays unknown, so loading fails naming it.
  EXPECT_EQ(gn.to_internal("lm_head.weight").kind, TensorNames::Kind::unknown);  // tied
  EXPECT_EQ(gn.to_internal("model.layers.0.self_attn.q_proj.bias").kind, TensorNames::Kind::unknown);
  EXPECT_EQ(gn.to_internal("model.layers.0.layer_scalar").kind, TensorNames::Kind::unknown);
  ModelConfig q = config_from_doppler(qwen_like(), "m.json");
  TensorNames qn(q);
  EXPECT_EQ(qn.to_internal("model.layers.2.post_attention_layernorm.weight").internal, "blk.2.ffn_norm");
  EXPECT_EQ(qn.to_internal("model.layers.2.pre_feedforward_layernorm.weight").kind,
            TensorNames::Kind::unknown);
  EXPECT_EQ(qn.to_internal("model.language_model.lm_head.weight").internal, "output");  // untied
  q.qk_norm = false;
  EXPECT_EQ(TensorNames(q).to_internal("model.layers.0.self_attn.q_norm.weight").kind,
            TensorNames::Kind::unknown);
  // Every expected tensor round-trips through its DOPPLER (HF) name.
  for (const ModelConfig* c : {&g, &q}) {
    TensorNames n(*c);
    for (auto& t : expected_tensors(*c)) EXPECT_EQ(n.to_internal(n.to_hf(t)).internal, t) << t;
  }
}

TEST(DopplerConfig, InfoNeedsOnlyTheManifest) {
  TempDir dir;
  json j = gemma_like();
  j["tensors"] = {{"model.embed_tokens.weight",
                   {{"shard", 0}, {"offset", 0}, {"size", 12800}, {"shape", {100, 64}}, {"dtype", "F16"}}},
                  {"model.layers.0.mystery_scale",
                   {{"shard", 0}, {"offset", 12800}, {"size", 4}, {"shape", {1}}, {"dtype", "F32"}}}};
  j["shards"] = {{{"index", 0},
                  {"fileName", "shard_00000.bin"},
                  {"size", 12804},
                  {"hash", std::string(64, 'a')},
                  {"offset", 0}}};
  write_file(dir.path / "manifest.json", j.dump());  // no shard file: info reads the manifest alone
  auto r = run_blueshift({"info", dir.path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("softmax 0.25, embed 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 tensors have no blueshift name, e.g. model.layers.0.mystery_scale"),
            std::string::npos)
      << r.out;
  r = run_blueshift({"info", dir.path.string(), "--json"});
  EXPECT_EQ(json::parse(r.out)["unnamedTensors"], json({"model.layers.0.mystery_scale"}));
  // An architecture blueshift lacks: one line naming the field; the rest of info still prints.
  j["inference"]["attention"]["causal"] = false;
  write_file(dir.path / "manifest.json", j.dump());
  r = run_blueshift({"info", dir.path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  size_t at = r.out.find("config     not runnable: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find("inference.attention.causal = false is not supported"), std::string::npos) << line;
  EXPECT_NE(r.out.find("size "), std::string::npos) << r.out;
}

// The manifests DOPPLER ships (the 7 in ../shared): Gemma 3 maps completely; the others name what
// blueshift lacks. Read as JSON so that only the architecture/inference mapping is under test.
TEST(DopplerConfig, SharedManifests) {
  BS_REQUIRE_SHARED();
  auto read = [](const char* name) {
    return json::parse(read_file(bs::testing::shared_dir() / "data/doppler" / name / "manifest.json"));
  };
  struct Gemma {
    const char* name;
    int32_t layers, dim;
  };
  for (auto [name, layers, dim] :
       {Gemma{"gemma-3-1b-it-q4k-ehf16-af32", 26, 1152}, Gemma{"gemma-3-270m-it-q4k-ehf16-af32", 18, 640}}) {
    json j = read(name);
    ModelConfig c = config_from_doppler(j, name);
    EXPECT_EQ(c.n_layers, layers) << name;
    EXPECT_EQ(c.dim, dim) << name;
    EXPECT_EQ(c.head_dim, 256);
    EXPECT_EQ(c.sliding_window, 512);
    EXPECT_FLOAT_EQ(c.rope.theta, 1e6f);
    EXPECT_FLOAT_EQ(c.rope.local_theta, 1e4f);
    EXPECT_TRUE(c.norm_offset && c.sandwich_norm && c.qk_norm && c.tied_embeddings);
    EXPECT_FLOAT_EQ(c.attn_scale, 1.0f / 16);  // queryPreAttnScalar 256
    EXPECT_FLOAT_EQ(c.embed_scale, bf16_to_float(float_to_bf16(std::sqrt(float(dim)))));
    EXPECT_EQ(c.act, Activation::gelu_tanh);
    for (int32_t l = 0; l < layers; ++l)
      EXPECT_EQ(c.layer_types[size_t(l)], l % 6 == 5 ? AttentionType::full : AttentionType::sliding) << l;
    // Every tensor gets a blueshift name of the expected shape, and every expected tensor is there.
    TensorNames names(c);
    std::set<std::string> got;
    for (auto& [hf, t] : j["tensors"].items()) {
      auto r = names.to_internal(hf);
      ASSERT_EQ(r.kind, TensorNames::Kind::mapped) << name << " " << hf;
      EXPECT_EQ(t["shape"].get<std::vector<int64_t>>(), expected_shape(c, r.internal)) << hf;
      got.insert(r.internal);
    }
    auto want = expected_tensors(c);
    EXPECT_EQ(got, std::set<std::string>(want.begin(), want.end())) << name;
  }
  // Gemma 3 1B from DOPPLER's blocks is Gemma 3 1B from HF's config.json, field for field, except the
  // display name and the token ids (HF keeps those in generation_config.json and the tokenizer).
  json doppler = config_to_json(config_from_doppler(read("gemma-3-1b-it-q4k-ehf16-af32"), "m.json"));
  json hf = config_to_json(
      config_from_hf(read_json_file(bs::testing::source_dir() / "benchmarks/configs/gemma-3-1b.json"),
                     nullptr, DType::BF16));
  for (auto k : {"arch", "eos_ids", "bos_id"}) doppler.erase(k), hf.erase(k);
  EXPECT_EQ(doppler.dump(), hf.dump());

  const std::pair<const char*, const char*> lacking[] = {
      {"google-embeddinggemma-300m-q4k-ehf16-af32", "inference.attention.causal = false is not supported"},
  };
  // LFM2.5 1.2B: 10 short-conv layers of width 3 around 6 attention layers; every tensor named.
  {
    json j = read("lfm2-5-1-2b-instruct-q4k-ehf16-af32");
    ModelConfig c = config_from_doppler(j, "lfm2");
    EXPECT_EQ(c.n_layers, 16);
    EXPECT_EQ(c.dim, 2048);
    EXPECT_EQ(c.ffn_dim, 8192);
    EXPECT_EQ(c.conv_kernel, 3);
    EXPECT_EQ(std::count(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::short_conv), 10);
    EXPECT_TRUE(c.qk_norm && c.tied_embeddings && !c.norm_offset && !c.sandwich_norm);
    EXPECT_FLOAT_EQ(c.norm_eps, 1e-5f);
    EXPECT_FLOAT_EQ(c.attn_scale, 1.0f / 8);
    TensorNames names(c);
    std::set<std::string> got;
    for (auto& [hf, t] : j["tensors"].items()) {
      auto r = names.to_internal(hf);
      ASSERT_EQ(r.kind, TensorNames::Kind::mapped) << hf;
      EXPECT_EQ(t["shape"].get<std::vector<int64_t>>(), expected_shape(c, r.internal)) << hf;
      got.insert(r.internal);
    }
    auto want = expected_tensors(c);
    EXPECT_EQ(got, std::set<std::string>(want.begin(), want.end()));
  }
  for (auto [name, message] : lacking) {
    std::string err = config_error(read(name));
    EXPECT_NE(err.find(message), std::string::npos) << name << ": " << err;
  }
}

// Qwen 3.5 0.8B's blocks (Gated DeltaNet 3 : 1 gated full attention, partial rotary, multimodal RoPE sections)
// map onto the ModelConfig that a qwen3_5_text config.json of the same sizes gives, field for field except
// the display name and token ids; a linear layer without its head counts, a per-head gated norm and another
// output gate are refused by name.
TEST(DopplerConfig, Qwen35MapsLikeItsHfConfig) {
  BS_REQUIRE_SHARED();
  json m = json::parse(read_file(bs::testing::shared_dir() / "data/doppler/qwen-3-5-0-8b-q4k-ehaf16/manifest.json"));
  ModelConfig c = config_from_doppler(m, "m.json");
  EXPECT_EQ(c.linear_k_heads, 16);
  EXPECT_EQ(c.linear_v_heads, 16);
  EXPECT_EQ(c.linear_k_dim, 128);
  EXPECT_EQ(c.linear_v_dim, 128);
  EXPECT_EQ(c.linear_conv, 4);
  EXPECT_EQ(c.rotary_dim, 64);
  EXPECT_TRUE(c.attn_output_gate && c.norm_offset && c.qk_norm);
  ASSERT_EQ(c.layer_kinds.size(), 24u);
  for (int32_t l = 0; l < 24; ++l)
    EXPECT_EQ(c.kind(l), l % 4 == 3 ? LayerKind::attention : LayerKind::linear_attention) << l;
  json layer_types = json::array();
  for (int32_t l = 0; l < 24; ++l) layer_types.push_back(l % 4 == 3 ? "full_attention" : "linear_attention");
  json hf_config = {{"model_type", "qwen3_5_text"}, {"hidden_size", 1024}, {"intermediate_size", 3584},
                    {"num_hidden_layers", 24}, {"num_attention_heads", 8}, {"num_key_value_heads", 2},
                    {"head_dim", 256}, {"vocab_size", 248320}, {"max_position_embeddings", 262144},
                    {"rms_norm_eps", 1e-6}, {"hidden_act", "silu"}, {"tie_word_embeddings", true},
                    {"layer_types", layer_types}, {"linear_num_key_heads", 16}, {"linear_num_value_heads", 16},
                    {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128}, {"linear_conv_kernel_dim", 4},
                    {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1e7}, {"partial_rotary_factor", 0.25},
                                         {"mrope_section", {11, 11, 10}}, {"mrope_interleaved", true}}}};
  ModelConfig from_hf = config_from_hf(hf_config, nullptr, DType::BF16);
  EXPECT_FLOAT_EQ(c.softmax_scale(), from_hf.softmax_scale());  // queryPreAttnScalar 256 = head_dim: the default
  json doppler = config_to_json(c), hf = config_to_json(from_hf);
  for (auto k : {"arch", "eos_ids", "bos_id", "attn_scale"}) doppler.erase(k), hf.erase(k);
  EXPECT_EQ(doppler.dump(), hf.dump());
  // The manifest stores a Q4_K head beside the tied F16 embedding: the reader runs that head; the vision
  // tower and the MTP head are named unused, everything else maps to the expected shape.
  auto path = bs::testing::shared_dir() / "data/doppler/qwen-3-5-0-8b-q4k-ehaf16";
  Manifest man = read_manifest(path);
  ASSERT_TRUE(man.config.has_value());
  EXPECT_FALSE(man.config->tied_embeddings);
  std::set<std::string> got;
  for (auto& t : man.tensors) {
    if (t.skipped) {
      EXPECT_TRUE(t.name.starts_with("model.visual.") || t.name.starts_with("mtp.")) << t.name;
      continue;
    }
    ASSERT_FALSE(t.internal.empty()) << t.name;
    EXPECT_EQ(t.shape, expected_shape(*man.config, t.internal)) << t.name;
    got.insert(t.internal);
  }
  auto want = expected_tensors(*man.config);
  EXPECT_EQ(got, std::set<std::string>(want.begin(), want.end()));

  for (auto [pointer, value, message] :
       {std::tuple{"/architecture/linearNumKeyHeads", json(nullptr), "linear_num_key_heads must be positive"},
        std::tuple{"/architecture/linearNormMode", json("per_head"), "architecture.linearNormMode = \"per_head\""},
        std::tuple{"/inference/attention/outputGateType", json("tanh"),
                   "inference.attention.outputGateType = \"tanh\" is not supported"},
        std::tuple{"/inference/rope/mropeSection", json({11, 11, 9}), "inference.rope.mropeSection = [11,11,9]"}}) {
    json j = m;
    j[json::json_pointer(pointer)] = value;
    EXPECT_NE(config_error(j).find(message), std::string::npos) << pointer << ": " << config_error(j);
  }
  // Qwen 3.6 27B's manifests say outputGateType "swish": transformers (and DOPPLER) run sigmoid(gate) for it.
  json q36 = m;
  q36["inference"]["attention"]["outputGateType"] = "swish";
  EXPECT_EQ(config_to_json(config_from_doppler(q36, "m.json")).dump(), config_to_json(c).dump());
}

// The same Gemma 3 weights described DOPPLER's way (no x-blueshift, modelType "transformer", an inference
// block as DOPPLER writes it, tensors under "model.language_model.") compute the same logits.
TEST(DopplerConfig, DopplerFormOfAConvertedGemmaComputesTheSameLogits) {
  TempDir dir;
  auto hf = make_checkpoint(dir.path / "src", tiny_config("gemma3_text", 64, 2, 100));
  convert_small(hf, dir.path / "ours", QuantMode::f16, 16 << 10, false);
  json j = json::parse(read_file(dir.path / "ours/manifest.json"));
  j.erase("x-blueshift");
  j["modelType"] = "transformer";
  json doppler = gemma_like();
  j["inference"] = doppler["inference"];
  j["inference"]["attention"]["slidingWindow"] = 16;  // tiny_config's
  j["inference"]["rope"]["ropeTheta"] = 10000;
  json tensors = json::object();
  for (auto& [name, t] : j["tensors"].items()) {
    json e = t;
    e.erase("x-blueshift");
    tensors["model.language_model." + name.substr(std::string("model.").size())] = e;
  }
  j["tensors"] = tensors;
  fs::create_directories(dir.path / "doppler");
  write_file(dir.path / "doppler/manifest.json", j.dump(1));
  for (auto& s : j["shards"])
    fs::copy(dir.path / "ours" / s["filename"].get<std::string>(), dir.path / "doppler");
  Manifest m = read_manifest(dir.path / "doppler");
  for (auto& t : m.tensors) EXPECT_FALSE(t.internal.empty()) << t.name;
  EXPECT_EQ(config_to_json(m.model_config()).dump().substr(0, 40),
            "{\"arch\":\"transformer\",\"n_layers\":2,\"dim\"");

  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    fs::path model = dir.path / (i ? "doppler" : "ours"), npy = dir.path / fmt::format("logits{}.npy", i);
    auto r = run_blueshift({"logits", "--model", model.string(), "--tokens", "1,5,9,3,77,7", "--out",
                            npy.string(), "--cpu-reference"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    out[i] = read_file(npy);
  }
  EXPECT_GT(out[0].size(), 6u * 100 * 4);
  EXPECT_TRUE(out[0] == out[1]) << "the DOPPLER form computes other logits";
}

int fuzz_manifest(const uint8_t* data, size_t size);

// The fuzz target over DOPPLER's blocks, key by key: every key of architecture and of each inference
// block set to each of a list of hostile values (and removed) must be accepted or rejected with
// bs::Error, never crash, and what is accepted must be a valid config (fuzz_manifest checks it).
TEST(DopplerConfig, EveryKeyTakesHostileValues) {
  const json values[] = {nullptr,
                         true,
                         false,
                         0,
                         -1,
                         1,
                         3,
                         1e308,
                         -1e308,
                         4611686018427387904LL,
                         2.5,
                         "",
                         "x",
                         "full_attention",
                         json::array(),
                         json::array({"sliding_attention"}),
                         json::object()};
  json base = gemma_like();
  base["tensors"] = {
      {"model.embed_tokens.weight",
       {{"shard", 0}, {"offset", 0}, {"size", 12800}, {"shape", {100, 64}}, {"dtype", "F16"}}}};
  base["shards"] = {{{"index", 0}, {"fileName", "a.bin"}, {"size", 12800}, {"hash", std::string(64, 'a')}}};
  std::vector<std::string> pointers = {"/architecture", "/inference", "/moeConfig", "/config"};
  for (auto block : {"/architecture", "/inference/attention", "/inference/normalization", "/inference/ffn",
                     "/inference/rope", "/inference/output", "/inference/layerPattern"})
    for (auto& [k, v] : base[json::json_pointer(block)].items())
      pointers.push_back(std::string(block) + "/" + k);
  size_t runs = 0, accepted = 0;
  for (auto& p : pointers) {
    for (size_t i = 0; i <= std::size(values); ++i) {
      json j = base;
      json::json_pointer ptr(p);
      if (i == std::size(values))
        j[ptr.parent_pointer()].erase(ptr.back());  // the key removed
      else
        j[ptr] = values[i];
      std::string s = j.dump();
      fuzz_manifest(reinterpret_cast<const uint8_t*>(s.data()), s.size());
      ++runs;
      accepted += config_error(j) == "accepted";
    }
  }
  EXPECT_GT(runs, 1000u);
  EXPECT_GT(accepted, 50u);  // the neutral values pass
}

// LFM2 (DOPPLER's lfm2-5-1-2b manifest): layerTypes "conv" are short-conv layers, whose width DOPPLER's
// blocks do not state: it comes from the conv kernel's shape, as DOPPLER's runtime takes it. Written
// back, the pattern says "conv" again.
TEST(DopplerConfig, Lfm2ConvLayersMap) {
  json j = qwen_like();
  j["inference"]["output"]["tieWordEmbeddings"] = true;
  j["inference"]["layerPattern"] = {{"type", "custom"}, {"globalPattern", nullptr}, {"period", nullptr},
                                    {"offset", nullptr}, {"residualBranchScale", 1},
                                    {"layerTypes", {"conv", "conv", "full_attention", "conv", "conv", "full_attention"}}};
  j["tensors"] = {{"model.layers.0.conv.conv.weight", {{"shape", {64, 1, 3}}, {"dtype", "Q4_K_M"}}}};
  ModelConfig c = config_from_doppler(j, "m.json");
  const std::vector<LayerKind> want = {LayerKind::short_conv, LayerKind::short_conv, LayerKind::attention,
                                       LayerKind::short_conv, LayerKind::short_conv, LayerKind::attention};
  EXPECT_EQ(c.layer_kinds, want);
  EXPECT_EQ(c.conv_kernel, 3);
  EXPECT_TRUE(c.qk_norm);
  // The names DOPPLER keeps (HF's) map for a config with conv layers, and only LFM2's do.
  TensorNames names(c);
  EXPECT_EQ(names.to_internal("model.layers.0.conv.in_proj.weight").internal, "blk.0.conv_in");
  EXPECT_EQ(names.to_internal("model.layers.2.self_attn.q_layernorm.weight").internal, "blk.2.attn_q_norm");
  EXPECT_EQ(names.to_internal("model.embedding_norm.weight").internal, "output_norm");
  EXPECT_EQ(names.to_internal("model.layers.1.feed_forward.w3.weight").internal, "blk.1.ffn_up");
  EXPECT_EQ(names.to_internal("model.layers.1.mlp.up_proj.weight").kind, TensorNames::Kind::unknown);

  json written = {{"modelType", c.arch}, {"architecture", json(doppler_architecture(c))},
                  {"inference", json(doppler_inference(c))}, {"eos_token_id", c.eos_ids}, {"tensors", j["tensors"]}};
  EXPECT_EQ(written["inference"]["layerPattern"]["layerTypes"][0], "conv");
  ModelConfig back = config_from_doppler(written, "written.json");
  back.attn_scale = c.attn_scale;
  EXPECT_EQ(config_to_json(back).dump(), config_to_json(c).dump());

  j["tensors"] = json::object();
  std::string e = config_error(j);
  EXPECT_NE(e.find("layerTypes[0] = \"conv\""), std::string::npos) << e;
  EXPECT_NE(e.find("layers.0.conv.conv.weight"), std::string::npos) << e;
  for (json bad : {json{64, 3}, json{64, 1, -3}, json{64, 1, 4294967299ull}}) {
    j["tensors"] = {{"model.layers.0.conv.conv.weight", {{"shape", bad}}}};
    e = config_error(j);
    EXPECT_NE(e.find("tensors['model.layers.0.conv.conv.weight'].shape"), std::string::npos) << e;
  }
  j["tensors"] = {{"model.layers.0.conv.conv.weight", {{"shape", {64, 1, 99}}}}};
  EXPECT_NE(config_error(j).find("conv width"), std::string::npos) << config_error(j);
}
