// Synthesized models of each feature set (no downloaded weights): the GPU forward through both paths
// against the float64 CPU forward over the same weights, for F16 and for every quantization.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/base/npy.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SynthCase {
  const char* name;
  json config;
  std::vector<const char*> quants;  // conversions to check besides the HF checkpoint itself
};

// A Phi-3 with LongRoPE (as the 128k checkpoints' config.json has it: factors per rotated pair under
// rope_scaling, original_max_position_embeddings at the top level, no factor).
json phi3_longrope(int original_max, int max_position) {
  json shortf = json::array(), longf = json::array();
  for (int i = 0; i < 16; ++i) shortf.push_back(1.0 + 0.05 * i), longf.push_back(1.0 + 1.5 * i);
  return {{"model_type", "phi3"}, {"architectures", {"Phi3ForCausalLM"}}, {"hidden_size", 128},
          {"intermediate_size", 192}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"num_hidden_layers", 2}, {"vocab_size", 280}, {"max_position_embeddings", max_position},
          {"original_max_position_embeddings", original_max}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"},
          {"rope_theta", 10000.0}, {"tie_word_embeddings", false},
          {"rope_scaling", {{"type", "longrope"}, {"short_factor", shortf}, {"long_factor", longf}}}};
}

// Small configs that together exercise every flag the forward pass has.
std::vector<SynthCase> cases() {
  std::vector<SynthCase> c = {
      {"llama3_gqa", {{"model_type", "llama"}, {"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 128},
                      {"intermediate_size", 256}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                      {"num_hidden_layers", 2}, {"vocab_size", 300}, {"max_position_embeddings", 2048},
                      {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", true}, {"hidden_act", "silu"},
                      {"rope_parameters", {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 32.0},
                                           {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                                           {"original_max_position_embeddings", 64}}}},
       {"q8_0"}},
      // Mistral with an untied head (separate lm_head).
      {"mistral_untied", {{"model_type", "mistral"}, {"architectures", {"MistralForCausalLM"}}, {"hidden_size", 256},
                          {"intermediate_size", 512}, {"num_attention_heads", 4}, {"num_key_value_heads", 1},
                          {"num_hidden_layers", 2}, {"vocab_size", 260}, {"max_position_embeddings", 1024},
                          {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", false}, {"hidden_act", "silu"},
                          {"rope_theta", 10000.0}, {"sliding_window", nullptr}},
       {"q8_0", "q4_k_m"}},
      // Qwen2: qkv bias, sizes that are not multiples of 64, head_dim 40.
      {"qwen2_bias_odd", {{"model_type", "qwen2"}, {"architectures", {"Qwen2ForCausalLM"}}, {"hidden_size", 200},
                          {"intermediate_size", 340}, {"num_attention_heads", 5}, {"num_key_value_heads", 1},
                          {"head_dim", 40}, {"num_hidden_layers", 2}, {"vocab_size", 517},
                          {"max_position_embeddings", 512}, {"rms_norm_eps", 1e-6}, {"rope_theta", 10000.0},
                          {"tie_word_embeddings", true}, {"hidden_act", "silu"}},
       {}},
      // Gemma 3: (1+w) norms incl. q/k norms, sandwich norms, gelu_tanh, sqrt(dim) embedding scale,
      // sliding window of 5 with a local RoPE base, query_pre_attn_scalar, and a final logit softcap.
      {"gemma3_sliding", {{"model_type", "gemma3_text"}, {"architectures", {"Gemma3ForCausalLM"}}, {"hidden_size", 128},
                          {"intermediate_size", 256}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
                          {"head_dim", 64}, {"num_hidden_layers", 3}, {"vocab_size", 320},
                          {"max_position_embeddings", 1024}, {"rms_norm_eps", 1e-6}, {"query_pre_attn_scalar", 48},
                          {"sliding_window", 5}, {"final_logit_softcapping", 15.0},
                          {"layer_types", {"sliding_attention", "sliding_attention", "full_attention"}},
                          {"rope_parameters", {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}},
                                               {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}}},
                          {"hidden_activation", "gelu_pytorch_tanh"}, {"tie_word_embeddings", true}},
       {"q8_0"}},
      // Gemma 2: Gemma 3's norms without q/k norms, alternating windows (even layers slide), one RoPE
      // base, and both softcaps small enough to bite.
      {"gemma2_softcap", {{"model_type", "gemma2"}, {"architectures", {"Gemma2ForCausalLM"}}, {"hidden_size", 128},
                          {"intermediate_size", 192}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                          {"head_dim", 32}, {"num_hidden_layers", 3}, {"vocab_size", 301},
                          {"max_position_embeddings", 1024}, {"rms_norm_eps", 1e-6}, {"query_pre_attn_scalar", 24},
                          {"sliding_window", 6}, {"attn_logit_softcapping", 2.0}, {"final_logit_softcapping", 4.0},
                          {"rope_theta", 10000.0}, {"hidden_activation", "gelu_pytorch_tanh"}},
       {"q8_0"}},
      // Phi-3: fused qkv_proj and gate_up_proj (split at load and at convert), every layer sliding.
      {"phi3_fused", {{"model_type", "phi3"}, {"architectures", {"Phi3ForCausalLM"}}, {"hidden_size", 256},
                      {"intermediate_size", 320}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                      {"num_hidden_layers", 2}, {"vocab_size", 290}, {"max_position_embeddings", 4096},
                      {"original_max_position_embeddings", 4096}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"},
                      {"rope_theta", 10000.0}, {"sliding_window", 7}, {"tie_word_embeddings", false}},
       {"q8_0", "q4_k_m"}},
      // LFM2: short-conv layers (a 4-tap conv here; releases use 3) around one attention layer with
      // q/k RMSNorms, the FFN width from block_auto_adjust_ff_dim (2/3 of 768 = 512), embedding_norm.
      {"lfm2_conv", {{"model_type", "lfm2"}, {"architectures", {"Lfm2ForCausalLM"}}, {"hidden_size", 256},
                     {"intermediate_size", 768}, {"block_auto_adjust_ff_dim", true}, {"block_ffn_dim_multiplier", 1.0},
                     {"block_multiple_of", 256}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                     {"num_hidden_layers", 4}, {"vocab_size", 300}, {"max_position_embeddings", 1024},
                     {"norm_eps", 1e-5}, {"conv_L_cache", 4}, {"conv_bias", false},
                     {"layer_types", {"conv", "full_attention", "conv", "conv"}},
                     {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}},
                     {"tie_word_embeddings", true}},
       {"q8_0", "q4_k_m"}},
      // Phi-3 128k's LongRoPE, both regimes: 20 tokens past original_max_position_embeddings 16 (long
      // factors) and within 32 (short), the attention factor from max_position / original.
      {"phi3_longrope_long", phi3_longrope(16, 64), {"q8_0"}},
      {"phi3_longrope_short", phi3_longrope(32, 4096), {}},
      // Qwen 3.5: Gated DeltaNet layers (conv state, recurrent state, 4 v heads on 2 q/k heads, k_dim != v_dim)
      // around a gated full-attention layer with partial rotary; untied head.
      {"qwen35_deltanet", {{"model_type", "qwen3_5_text"}, {"architectures", {"Qwen3_5ForCausalLM"}}, {"hidden_size", 192},
                           {"intermediate_size", 320}, {"num_attention_heads", 3}, {"num_key_value_heads", 1},
                           {"head_dim", 48}, {"num_hidden_layers", 3}, {"vocab_size", 311},
                           {"max_position_embeddings", 1024}, {"rms_norm_eps", 1e-6}, {"hidden_act", "silu"},
                           {"layer_types", {"linear_attention", "full_attention", "linear_attention"}},
                           {"linear_num_key_heads", 2}, {"linear_num_value_heads", 4}, {"linear_key_head_dim", 24},
                           {"linear_value_head_dim", 40}, {"linear_conv_kernel_dim", 4},
                           {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.25}}},
                           {"tie_word_embeddings", false}},
       {"q8_0", "q4_k_m"}},
  };
  // Mixture of experts (issue 16): Mixtral (top-2 of 5, sliding window), Qwen3-MoE (top-3 of 7 unnormalized,
  // q/k norms, experts of width 96: Q8_0 where Q4_K needs 256), GPT-OSS (router and expert biases, clamped
  // SwiGLU, sinks, o_proj bias, alternating window past 20 tokens, YaRN).
  auto moe = [](json j) {
    json base = {{"hidden_size", 128}, {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"num_hidden_layers", 2},
                 {"max_position_embeddings", 1024}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"}};
    base.update(j);
    return base;
  };
  c.push_back({"mixtral_moe", moe({{"model_type", "mixtral"}, {"architectures", {"MixtralForCausalLM"}}, {"vocab_size", 301},
                                   {"intermediate_size", 160}, {"num_local_experts", 5}, {"num_experts_per_tok", 2},
                                   {"sliding_window", 12}, {"rope_theta", 1e6}, {"tie_word_embeddings", false}}),
               {"q4_k_m", "mxfp4"}});
  c.push_back({"qwen3moe", moe({{"model_type", "qwen3_moe"}, {"architectures", {"Qwen3MoeForCausalLM"}}, {"vocab_size", 290},
                                {"intermediate_size", 256}, {"moe_intermediate_size", 96}, {"num_experts", 7},
                                {"num_experts_per_tok", 3}, {"norm_topk_prob", false}, {"head_dim", 48},
                                {"tie_word_embeddings", true}}),
               {"q8_0", "q4_k_m"}});
  c.push_back({"gptoss", moe({{"model_type", "gpt_oss"}, {"architectures", {"GptOssForCausalLM"}}, {"vocab_size", 300},
                              {"intermediate_size", 96}, {"num_local_experts", 4}, {"num_experts_per_tok", 2},
                              {"head_dim", 32}, {"attention_bias", true}, {"sliding_window", 8},
                              {"layer_types", {"sliding_attention", "full_attention"}}, {"tie_word_embeddings", false},
                              {"rope_parameters", {{"rope_type", "yarn"}, {"rope_theta", 150000.0}, {"factor", 32.0},
                                                   {"beta_fast", 32.0}, {"beta_slow", 1.0},
                                                   {"original_max_position_embeddings", 64}, {"truncate", false}}}}),
               {"mxfp4"}});
  return c;
}

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

std::vector<float> logits(const fs::path& model, const std::string& tokens, const fs::path& out,
                          const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"logits", "--model", model.string(), "--tokens", tokens, "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_blueshift(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? read_npy_f32(out).data : std::vector<float>{};
}

double worst_rel_l2(const std::vector<float>& a, const std::vector<float>& ref, size_t vocab) {
  double worst = 0;
  for (size_t r = 0; r * vocab < ref.size(); ++r) {
    double num = 0, den = 0;
    for (size_t i = 0; i < vocab; ++i) {
      double d = double(a[r * vocab + i]) - ref[r * vocab + i];
      num += d * d;
      den += double(ref[r * vocab + i]) * ref[r * vocab + i];
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
}

class Synth : public ::testing::TestWithParam<size_t> {};

TEST_P(Synth, GpuMatchesFloat64ReferenceThroughBothPaths) {
  const auto c = cases()[GetParam()];
  TempDir tmp;
  auto hf = tmp / "hf";
  auto r = synth_into(tmp.path, c.config.dump(), {"--seed", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t vocab = c.config["vocab_size"];
  // 20 tokens: past the sliding window of the Gemma case.
  std::vector<int32_t> ids;
  auto draw = [&] {
    ids.clear();
    for (int i = 0; i < 20; ++i) ids.push_back(int32_t(rng()() % vocab));
  };
  draw();
  std::vector<fs::path> models = {hf};
  for (auto* q : c.quants) {
    auto out = tmp / (std::string("rdrr-") + q);
    auto cv = run_blueshift({"convert", hf.string(), out.string(), "--quant", q});
    ASSERT_EQ(cv.exit_code, 0) << cv.err;
    models.push_back(out);
  }
  const bool moe = c.config.contains("num_local_experts") || c.config.contains("num_experts");
  for (auto& m : models) {
    // Mixture of experts: a row whose k-th and next router logits are within the GPU's rounding of each
    // other may go to different experts on the GPU and in float64 (a near tie, ~1 draw in 100 here):
    // such draws are replaced, by the margin the reference reports.
    std::vector<float> ref;
    for (int tries = 0;; ++tries) {
      auto r = run_blueshift({"logits", "--model", m.string(), "--tokens", join(ids), "--out", (tmp / "ref.npy").string(),
                              "--cpu-reference"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      ref = read_npy_f32(tmp / "ref.npy").data;
      auto at = r.err.find("smallest routing margin ");
      if (!moe || tries == 8) break;
      ASSERT_NE(at, std::string::npos) << r.err;
      double margin = std::stod(r.err.substr(at + 24));
      if (margin >= 1e-3) break;
      std::printf("%s %s: routing margin %.2e is a near tie: new tokens\n", c.name, m.filename().c_str(), margin);
      draw();
    }
    auto pre = logits(m, join(ids), tmp / "pre.npy", {});
    auto step = logits(m, join(ids), tmp / "step.npy", {"--step"});
    ASSERT_EQ(pre.size(), ref.size());
    ASSERT_EQ(step.size(), ref.size());
    double e_pre = worst_rel_l2(pre, ref, vocab), e_step = worst_rel_l2(step, ref, vocab);
    std::printf("%s %s: GPU vs float64 CPU, worst row rel L2: prefill %.2e, decode %.2e\n", c.name,
                m.filename().c_str(), e_pre, e_step);
    EXPECT_LE(e_pre, 5e-3) << c.name << " " << m.filename() << " prefill";
    EXPECT_LE(e_step, 5e-3) << c.name << " " << m.filename() << " decode";
  }
}

// q4_k_m's tied Q6_K table (embedding and head, 4096 rows) bound in row ranges, as a large vocabulary is on
// lavapipe (128 MiB a binding): on the GPU its rows are 224-byte blocks (runtime/base/dtype.h), so the ranges'
// offsets must count those, not the stored 210. 64 KiB bindings split it into 16 ranges of 256 rows.
TEST(SynthSplit, Q6KTableInRowRangesMatchesWholeAndFloat64) {
  TempDir tmp;
  const json config = {{"model_type", "llama"}, {"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 256},
                       {"intermediate_size", 512}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                       {"num_hidden_layers", 2}, {"vocab_size", 4096}, {"max_position_embeddings", 512},
                       {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", true}, {"hidden_act", "silu"},
                       {"rope_theta", 10000.0}};
  auto r = synth_into(tmp.path, config.dump(), {"--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto m = tmp / "q4";
  r = run_blueshift({"convert", (tmp / "hf").string(), m.string(), "--quant", "q4_k_m"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream mf(m / "manifest.json");
  const std::string manifest((std::istreambuf_iterator<char>(mf)), std::istreambuf_iterator<char>());
  ASSERT_NE(manifest.find("\"Q6_K\""), std::string::npos) << "q4_k_m made no Q6_K tensor";
  std::vector<int32_t> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(int32_t(rng()() % 4096));
  r = run_blueshift({"logits", "--model", m.string(), "--tokens", join(ids), "--out", (tmp / "ref.npy").string(),
                     "--cpu-reference"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ref = read_npy_f32(tmp / "ref.npy").data;
  // The whole table's decode head would be the int8 one (matvec_q6k_wide_i8, ~2e-5 from the float head), the ranges'
  // the float matvec: compare float with float, so the ranges' offsets are held to 1e-5.
  setenv("BLUESHIFT_HEAD_I8", "0", 1);
  auto pre = logits(m, join(ids), tmp / "pre.npy", {}), step = logits(m, join(ids), tmp / "step.npy", {"--step"});
  setenv("BLUESHIFT_MAX_BINDING", "65536", 1);
  auto split_pre = logits(m, join(ids), tmp / "split_pre.npy", {});
  auto split_step = logits(m, join(ids), tmp / "split_step.npy", {"--step"});
  unsetenv("BLUESHIFT_MAX_BINDING");
  unsetenv("BLUESHIFT_HEAD_I8");
  ASSERT_EQ(split_pre.size(), ref.size());
  ASSERT_EQ(split_step.size(), ref.size());
  EXPECT_LE(worst_rel_l2(split_pre, pre, 4096), 1e-5);
  EXPECT_LE(worst_rel_l2(split_step, step, 4096), 1e-5);
  EXPECT_LE(worst_rel_l2(split_pre, ref, 4096), 5e-3);
  EXPECT_LE(worst_rel_l2(split_step, ref, 4096), 5e-3);
}

INSTANTIATE_TEST_SUITE_P(Features, Synth, ::testing::Range<size_t>(0, cases().size()), [](const auto& info) {
  return std::string(cases()[info.param].name);
});

}  // namespace
}  // namespace bs::testing
