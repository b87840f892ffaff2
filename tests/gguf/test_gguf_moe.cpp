// GGUF import of the mixture-of-experts families (issue 18): llama.cpp's llama with experts (Mixtral),
// qwen3moe and gpt-oss (MXFP4 experts, attention sinks, q/k/v/o and expert biases, even layers sliding,
// YaRN). Each model is synthesized, converted from safetensors, written as llama.cpp's converter writes it
// (stacked ffn_{gate,up,down}_exps, or ffn_gate_up_exps with --fuse-gate-up) and imported back: the same
// config, bytes and logits (round_trip.h). Broken files fail with exit 3 naming the key or tensor, expected
// vs actual.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "rdrr/gguf.h"
#include "rdrr/manifest.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/gguf/round_trip.h"

namespace {

namespace fs = std::filesystem;
using bs::gguf::Value;
using bs::testing::expect_round_trip;
using bs::testing::TempDir;
using nlohmann::json;

json moe(json j) {
  json base = {{"num_attention_heads", 4}, {"num_key_value_heads", 2},
               {"num_hidden_layers", 2},   {"max_position_embeddings", 1024},
               {"rms_norm_eps", 1e-5},     {"hidden_act", "silu"},
               {"bos_token_id", 1},        {"eos_token_id", 2}};
  base.update(j);
  return base;
}

// Mixtral: dims of 256 so that q4_k_m gives Q4_K / Q6_K experts.
const json kMixtral = moe({{"model_type", "mixtral"},
                           {"architectures", {"MixtralForCausalLM"}},
                           {"hidden_size", 256},
                           {"vocab_size", 301},
                           {"intermediate_size", 256},
                           {"num_local_experts", 5},
                           {"num_experts_per_tok", 2},
                           {"rope_theta", 1e6},
                           {"tie_word_embeddings", false}});
const json kQwen3Moe = moe({{"model_type", "qwen3_moe"},
                            {"architectures", {"Qwen3MoeForCausalLM"}},
                            {"hidden_size", 128},
                            {"vocab_size", 290},
                            {"intermediate_size", 256},
                            {"moe_intermediate_size", 96},
                            {"num_experts", 7},
                            {"num_experts_per_tok", 3},
                            {"norm_topk_prob", true},
                            {"head_dim", 48},
                            {"tie_word_embeddings", true}});
const json kGptOss = moe({{"model_type", "gpt_oss"},
                          {"architectures", {"GptOssForCausalLM"}},
                          {"hidden_size", 128},
                          {"vocab_size", 300},
                          {"intermediate_size", 96},
                          {"num_local_experts", 4},
                          {"num_experts_per_tok", 2},
                          {"head_dim", 32},
                          {"attention_bias", true},
                          {"sliding_window", 8},
                          {"layer_types", {"sliding_attention", "full_attention"}},
                          {"tie_word_embeddings", false},
                          {"rope_parameters",
                           {{"rope_type", "yarn"},
                            {"rope_theta", 150000.0},
                            {"factor", 32.0},
                            {"beta_fast", 32.0},
                            {"beta_slow", 1.0},
                            {"original_max_position_embeddings", 64},
                            {"truncate", false}}}});

// Past the sliding window of 8 (GPT-OSS's even layers) and YaRN's original 64 positions is not needed for
// the rows to differ; 14 tokens cover the window.
const char* kTokens = "1,7,9,30,2,100,4,5,6,7,8,9,10,11";

std::vector<std::byte> gguf_tensor(const fs::path& file, const std::string& name) {
  auto h = bs::gguf::read_header(file.string());
  const auto* t = h.tensor(name);
  if (!t) return {};
  std::ifstream in(file, std::ios::binary);
  in.seekg(std::streamoff(h.data_offset + t->offset));
  std::vector<std::byte> b(t->size);
  in.read(reinterpret_cast<char*>(b.data()), std::streamsize(b.size()));
  return b;
}

std::vector<std::byte> rdrr_tensor(const fs::path& model, const std::string& internal) {
  std::vector<std::byte> out;
  auto m = bs::read_manifest(model);
  bs::load_tensors(m, model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    if (t.internal == internal) out.assign(b.begin(), b.end());
  });
  return out;
}

TEST(GgufMoe, MixtralIsLlamaWithStackedExperts) {
  TempDir d;
  fs::path hf = bs::testing::synth(d / "mix", kMixtral);
  for (const char* q : {"q4_k_m", "f16"}) expect_round_trip(hf, q, d.path, "llama", kTokens);
  auto h = bs::gguf::read_header((d / "q4_k_m.gguf").string());
  EXPECT_EQ(h.find("llama.expert_count")->as_uint(), 5u);
  EXPECT_EQ(h.find("llama.expert_used_count")->as_uint(), 2u);
  ASSERT_NE(h.tensor("blk.1.ffn_gate_exps.weight"), nullptr);
  EXPECT_EQ(h.tensor("blk.1.ffn_gate_exps.weight")->ne, (std::vector<uint64_t>{256, 256, 5}));
  EXPECT_EQ(h.tensor("blk.1.ffn_down_exps.weight")->ne, (std::vector<uint64_t>{256, 256, 5}));
  EXPECT_EQ(h.tensor("blk.0.ffn_gate_inp.weight")->ne, (std::vector<uint64_t>{256, 5}));
  EXPECT_EQ(h.tensor("blk.0.ffn_up_exps.weight")->type, bs::gguf::GgmlType::Q4_K);
  auto m = bs::read_manifest(d / "back_q4_k_m");
  EXPECT_EQ(m.model_config().arch, "mixtral");
  EXPECT_EQ(m.model_config().sliding_window, 0);
  // The joined gate|up is expert 0's gate rows, its up rows, expert 1's gate rows, ...
  auto gate = gguf_tensor(d / "q4_k_m.gguf", "blk.1.ffn_gate_exps.weight");
  auto up = gguf_tensor(d / "q4_k_m.gguf", "blk.1.ffn_up_exps.weight");
  auto joined = rdrr_tensor(d / "back_q4_k_m", "blk.1.ffn_gate_up_exps");
  ASSERT_EQ(joined.size(), gate.size() + up.size());
  const size_t per = gate.size() / 5;
  for (size_t e = 0; e < 5; ++e) {
    EXPECT_TRUE(
        std::equal(gate.begin() + e * per, gate.begin() + (e + 1) * per, joined.begin() + 2 * e * per));
    EXPECT_TRUE(
        std::equal(up.begin() + e * per, up.begin() + (e + 1) * per, joined.begin() + (2 * e + 1) * per));
  }
}

TEST(GgufMoe, Qwen3MoeRoundTripKeepsLogits) {
  TempDir d;
  fs::path hf = bs::testing::synth(d / "q3", kQwen3Moe);
  for (const char* q : {"q8_0", "mxfp4"}) expect_round_trip(hf, q, d.path, "qwen3moe", kTokens);
  auto h = bs::gguf::read_header((d / "q8_0.gguf").string());
  EXPECT_EQ(h.find("qwen3moe.expert_feed_forward_length")->as_uint(), 96u);
  EXPECT_NE(h.tensor("blk.1.attn_k_norm.weight"), nullptr);
  EXPECT_EQ(h.tensor("output.weight"), nullptr);  // tied
}

// GPT-OSS with its experts in MXFP4: GGML's block_mxfp4 bytes are blueshift's, written and read unchanged, in
// llama.cpp's default form (gate and up apart) and its fused one.
TEST(GgufMoe, GptOssMxfp4ExpertsKeepTheirBytes) {
  TempDir d;
  fs::path hf = bs::testing::synth(d / "go", kGptOss);
  fs::path split = expect_round_trip(hf, "mxfp4", d / "split", "gpt-oss", kTokens);
  fs::path fused = expect_round_trip(hf, "mxfp4", d / "fused", "gpt-oss", kTokens, {"--fuse-gate-up"});
  expect_round_trip(hf, "f16", d / "f16", "gpt-oss", kTokens);
  auto h = bs::gguf::read_header(split.string());
  for (const char* n : {"blk.0.attn_sinks.weight", "blk.0.attn_output.bias", "blk.1.attn_q.bias",
                        "blk.0.post_attention_norm.weight", "blk.0.ffn_gate_inp.bias",
                        "blk.1.ffn_gate_exps.bias", "blk.1.ffn_up_exps.bias", "blk.1.ffn_down_exps.bias"})
    EXPECT_NE(h.tensor(n), nullptr) << n;
  EXPECT_EQ(h.tensor("blk.0.ffn_down_exps.weight")->type, bs::gguf::GgmlType::MXFP4);
  EXPECT_EQ(h.tensor("blk.0.ffn_down_exps.weight")->ne, (std::vector<uint64_t>{96, 128, 4}));
  EXPECT_EQ(h.find("gpt-oss.attention.sliding_window")->as_uint(), 8u);
  EXPECT_EQ(*h.find("gpt-oss.rope.scaling.type")->as_string(), "yarn");
  // The GGUF's MXFP4 down experts are the RDRR bytes exactly.
  EXPECT_EQ(gguf_tensor(split, "blk.1.ffn_down_exps.weight"),
            rdrr_tensor(d / "split" / "orig_mxfp4", "blk.1.ffn_down_exps"));
  auto hf2 = bs::gguf::read_header(fused.string());
  ASSERT_NE(hf2.tensor("blk.0.ffn_gate_up_exps.weight"), nullptr);
  EXPECT_EQ(hf2.tensor("blk.0.ffn_gate_up_exps.weight")->ne, (std::vector<uint64_t>{128, 192, 4}));
  EXPECT_EQ(gguf_tensor(fused, "blk.0.ffn_gate_up_exps.weight"),
            rdrr_tensor(d / "fused" / "orig_mxfp4", "blk.0.ffn_gate_up_exps"));
  auto m = bs::read_manifest(d / "split" / "back_mxfp4");
  EXPECT_TRUE(m.model_config().sliding(0));
  EXPECT_FALSE(m.model_config().sliding(1));
}

// Broken MoE files: exit 3, the key or tensor named with expected vs actual, no output left behind.
TEST(GgufMoe, MalformedExpertFilesAreClearErrors) {
  TempDir d;
  const fs::path go =
      expect_round_trip(bs::testing::synth(d / "go", kGptOss), "f16", d / "go", "gpt-oss", "1,2");
  const fs::path q3 =
      expect_round_trip(bs::testing::synth(d / "q3", kQwen3Moe), "q8_0", d / "q3", "qwen3moe", "1,2");
  int n = 0;
  auto expect_error = [&](const fs::path& file, const std::string& what) {
    bs::testing::expect_convert_refused(file, d / "out", what);
  };
  auto meta = [&](const fs::path& src, const std::string& key, std::optional<Value> v,
                  const std::string& what) {
    fs::path file = d / ("bad" + std::to_string(n++) + ".gguf");
    bs::testing::rewrite(src, file, key, v);
    expect_error(file, what);
  };
  auto drop = [&](const fs::path& src, const std::string& tensor, const std::string& what) {
    fs::path file = d / ("bad" + std::to_string(n++) + ".gguf");
    bs::testing::drop_tensor(src, file, tensor);
    expect_error(file, what);
  };
  drop(go, "blk.1.ffn_up_exps.weight",
       "tensor 'blk.1.ffn_up_exps.weight' is missing (its pair 'blk.1.ffn_gate_exps.weight' is there");
  drop(go, "blk.0.ffn_gate_exps.bias",
       "tensor 'blk.0.ffn_gate_exps.bias' is missing (its pair 'blk.0.ffn_up_exps.bias' is there");
  drop(q3, "blk.1.ffn_down_exps.weight", "no tensor for 'blk.1.ffn_down_exps'");
  {  // llama.cpp's early Mixtral files: one tensor per expert
    fs::path file = d / "per_expert.gguf";
    bs::testing::drop_tensor(q3, file, "blk.0.ffn_gate_exps.weight", "blk.0.ffn_gate.3.weight");
    expect_error(
        file,
        "tensor 'blk.0.ffn_gate.3.weight': one tensor per expert (llama.cpp's early Mixtral layout) is "
        "not imported");
  }
  drop(go, "blk.0.attn_sinks.weight", "no tensor for 'blk.0.attn_sinks'");
  meta(go, "gpt-oss.expert_count", Value::u32(5),
       "tensor 'blk.0.ffn_gate_inp.weight': expected shape [5,128] (ne [128,5]), got [4,128] (ne [128,4])");
  meta(q3, "qwen3moe.expert_count", Value::u32(300),
       "metadata 'qwen3moe.expert_count': expected 1 .. 256 experts, got 300");
  meta(q3, "qwen3moe.expert_used_count", Value::u32(9),
       "metadata 'qwen3moe.expert_used_count': expected 1 .. 7 (min(expert_count, 8)), got 9");
  meta(q3, "qwen3moe.expert_feed_forward_length", std::nullopt,
       "metadata 'qwen3moe.expert_feed_forward_length' is missing");
  meta(q3, "qwen3moe.expert_feed_forward_length", Value::u32(64),
       "tensor 'blk.0.ffn_gate_exps.weight': expected shape [7,64,128] (ne [128,64,7]), got [7,96,128]");
  meta(q3, "qwen3moe.expert_gating_func", Value::u32(2),
       "metadata 'qwen3moe.expert_gating_func': expected 1 (softmax) for a qwen3moe model, got 2");
  meta(q3, "qwen3moe.expert_shared_count", Value::u32(1),
       "metadata 'qwen3moe.expert_shared_count': 1 shared experts are not supported (expected 0)");
  meta(go, "gpt-oss.attention.sliding_window", std::nullopt,
       "metadata 'gpt-oss.attention.sliding_window' is missing");
  meta(go, "gpt-oss.rope.scaling.original_context_length", std::nullopt,
       "metadata 'gpt-oss.rope.scaling.original_context_length' is missing");
  meta(go, "gpt-oss.rope.scaling.factor", Value::f32(0.5f),
       "metadata 'gpt-oss.rope.scaling.factor': expected 1 .. 1e6 for yarn, got 0.5");
  // A GGUF's expert_weights_norm is honoured: false gives Qwen3-MoE's norm_topk_prob false.
  bs::testing::rewrite(q3, d / "nonorm.gguf", "qwen3moe.expert_weights_norm", Value::boolean(false));
  auto r = bs::testing::run_blueshift({"convert", (d / "nonorm.gguf").string(), (d / "nonorm").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(bs::read_manifest(d / "nonorm").model_config().moe_norm_topk);
  EXPECT_TRUE(bs::read_manifest(d / "q3" / "back_q8_0").model_config().moe_norm_topk);
}

// Export refuses what llama.cpp's MoE architectures would compute otherwise.
TEST(GgufMoe, ExportRefusesWhatLlamaCppComputesOtherwise) {
  TempDir d;
  auto expect_refused = [&](json cfg, const std::string& what) {
    SCOPED_TRACE(what);
    fs::path hf = bs::testing::synth(d / std::to_string(what.size()), cfg);
    auto m = d / std::to_string(what.size()) / "m";
    auto r = bs::testing::run_blueshift({"convert", hf.string(), m.string(), "--quant", "f16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = bs::testing::run_blueshift({"export-gguf", "--model", m.string(), "--out", (d / "x.gguf").string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  json c = kQwen3Moe;
  c["norm_topk_prob"] = false;
  expect_refused(c, "unnormalized top-k expert weights");
  c = kMixtral;
  c["sliding_window"] = 12;
  expect_refused(c, "another sliding-window pattern");
  c = kGptOss;
  c["rope_parameters"]["truncate"] = true;
  expect_refused(c, "YaRN with truncated ramp ends");
}

// The fuzz target on mutations of the MoE files' headers (expert keys, stacked tensors' dims and types).
TEST(GgufMoe, FuzzMutationsOfMoeFiles) {
  TempDir d;
  std::vector<fs::path> files = {
      expect_round_trip(bs::testing::synth(d / "go", kGptOss), "mxfp4", d / "go", "gpt-oss", "1,2"),
      expect_round_trip(bs::testing::synth(d / "q3", kQwen3Moe), "q8_0", d / "q3", "qwen3moe", "1,2")};
  std::mt19937_64 r(1816);
  for (const auto& file : files) {
    const size_t end = size_t(bs::gguf::read_header(file.string()).data_offset);
    const uint32_t words[] = {0, 1, 2, 3, 4, 8, 39, 257, 0xFFFFFFFFu};
    bs::testing::fuzz_mutations(bs::testing::file_bytes(file), end, words, r, 1500);
  }
}

}  // namespace
