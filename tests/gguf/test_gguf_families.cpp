// GGUF import of the families whose GGUF differs from HF beyond names: Gemma 2 / 3 (norms stored as 1 + w;
// attention scale, sliding pattern and local RoPE base implied by the architecture) and Phi-3 128k (LongRoPE
// factors as tensors). Each model goes safetensors -> convert -> export-gguf (written as llama.cpp's
// converter writes it) -> convert FILE.gguf and must come back with the same config, the same bytes in every
// copied tensor, norms that give the same 1 + w, and the same logits on lavapipe (rel L2 <= 1e-6, same
// argmax).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "rdrr/gguf.h"
#include "rdrr/manifest.h"
#include "runtime/base/npy.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/gguf/round_trip.h"

namespace {

namespace fs = std::filesystem;
using bs::testing::TempDir;
using bs::testing::expect_round_trip;
using bs::testing::rewrite;
using bs::testing::synth;
bs::testing::RunResult run(const std::vector<std::string>& args) { return bs::testing::run_blueshift(args); }

const nlohmann::json kGemma2 = {{"model_type", "gemma2"},
                                {"architectures", {"Gemma2ForCausalLM"}},
                                {"hidden_size", 256},
                                {"intermediate_size", 512},
                                {"num_attention_heads", 4},
                                {"num_key_value_heads", 2},
                                {"head_dim", 64},
                                {"num_hidden_layers", 4},
                                {"vocab_size", 300},
                                {"max_position_embeddings", 1024},
                                {"rms_norm_eps", 1e-6},
                                {"hidden_activation", "gelu_pytorch_tanh"},
                                {"rope_theta", 10000.0},
                                {"query_pre_attn_scalar", 64},
                                {"sliding_window", 4},
                                {"attn_logit_softcapping", 50.0},
                                {"final_logit_softcapping", 30.0},
                                {"bos_token_id", 2},
                                {"eos_token_id", 1}};

const nlohmann::json kGemma3 = {{"model_type", "gemma3_text"},
                                {"architectures", {"Gemma3ForCausalLM"}},
                                {"hidden_size", 256},
                                {"intermediate_size", 512},
                                {"num_attention_heads", 4},
                                {"num_key_value_heads", 1},
                                {"head_dim", 64},
                                {"num_hidden_layers", 7},
                                {"vocab_size", 300},
                                {"max_position_embeddings", 1024},
                                {"rms_norm_eps", 1e-6},
                                {"hidden_activation", "gelu_pytorch_tanh"},
                                {"rope_theta", 1000000.0},
                                {"rope_local_base_freq", 10000.0},
                                {"query_pre_attn_scalar", 64},
                                {"sliding_window", 4},
                                {"bos_token_id", 2},
                                {"eos_token_id", 1}};

const nlohmann::json kLfm2 = {{"model_type", "lfm2"},
                              {"architectures", {"Lfm2ForCausalLM"}},
                              {"hidden_size", 256},
                              {"intermediate_size", 512},
                              {"block_auto_adjust_ff_dim", false},
                              {"num_attention_heads", 4},
                              {"num_key_value_heads", 2},
                              {"num_hidden_layers", 4},
                              {"layer_types", {"conv", "full_attention", "conv", "full_attention"}},
                              {"conv_L_cache", 3},
                              {"vocab_size", 300},
                              {"max_position_embeddings", 1024},
                              {"norm_eps", 1e-5},
                              {"rope_theta", 1000000.0},
                              {"bos_token_id", 1},
                              {"eos_token_id", 2}};

const char* kTokens = "2,17,200,42,7,59,99,3,250,11,12,13";

TEST(GgufFamilies, Gemma2RoundTripKeepsLogits) {
  TempDir d;
  fs::path hf = synth(d / "g2", kGemma2);
  for (const char* q : {"q4_k_m", "f16"}) expect_round_trip(hf, q, d.path, "gemma2", kTokens);
  // The norms in the file are 1 + w, as llama.cpp's converter writes them.
  auto h = bs::gguf::read_header((d / "f16.gguf").string());
  EXPECT_NE(h.tensor("blk.0.post_attention_norm.weight"), nullptr);
  EXPECT_NE(h.tensor("blk.3.post_ffw_norm.weight"), nullptr);
  EXPECT_FLOAT_EQ(float(*h.find("gemma2.attn_logit_softcapping")->as_float()), 50.0f);
}

TEST(GgufFamilies, Gemma3RoundTripKeepsLogits) {
  TempDir d;
  fs::path hf = synth(d / "g3", kGemma3);
  for (const char* q : {"q4_k_m", "f16"}) expect_round_trip(hf, q, d.path, "gemma3", kTokens);
  auto h = bs::gguf::read_header((d / "f16.gguf").string());
  EXPECT_NE(h.tensor("blk.6.attn_q_norm.weight"), nullptr);
  EXPECT_EQ(h.find("gemma3.attn_logit_softcapping"), nullptr);
}

// LFM2 as llama.cpp names it: shortconv.{in_proj,conv,out_proj} (the kernel squeezed to 2-D), the final norm
// as token_embd_norm, and head_count_kv per layer with 0 for the conv layers.
TEST(GgufFamilies, Lfm2RoundTripKeepsLogits) {
  TempDir d;
  fs::path hf = synth(d / "lfm2", kLfm2);
  for (const char* q : {"q4_k_m", "f16"}) expect_round_trip(hf, q, d.path, "lfm2", kTokens);
  auto h = bs::gguf::read_header((d / "f16.gguf").string());
  EXPECT_NE(h.tensor("token_embd_norm.weight"), nullptr);
  ASSERT_NE(h.tensor("blk.0.shortconv.conv.weight"), nullptr);
  EXPECT_EQ(h.tensor("blk.0.shortconv.conv.weight")->ne, (std::vector<uint64_t>{3, 256}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(h.find("lfm2.attention.head_count_kv")->v),
            (std::vector<int64_t>{0, 2, 0, 2}));
  auto m = bs::read_manifest(d / "back_f16");
  EXPECT_EQ(m.model_config().kind(0), bs::LayerKind::short_conv);
  EXPECT_EQ(m.model_config().kind(1), bs::LayerKind::attention);
  EXPECT_EQ(m.model_config().conv_kernel, 3);
  // Per-layer counts are checked: length, equal non-zero counts, and only LFM2 has them.
  using bs::gguf::Value;
  rewrite(d / "f16.gguf", d / "bad1.gguf", "lfm2.attention.head_count_kv", Value::i32_array({0, 2, 0}));
  auto r = run({"convert", (d / "bad1.gguf").string(), (d / "x").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("'lfm2.attention.head_count_kv': expected 4 integers (one per layer), got 3"),
            std::string::npos)
      << r.err;
  rewrite(d / "f16.gguf", d / "bad2.gguf", "lfm2.attention.head_count_kv", Value::i32_array({0, 2, 0, 1}));
  r = run({"convert", (d / "bad2.gguf").string(), (d / "x").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("'lfm2.attention.head_count_kv[3]': expected 0 or the other layers' count 2, got 1"),
            std::string::npos)
      << r.err;
  rewrite(d / "f16.gguf", d / "bad3.gguf", "lfm2.shortconv.l_cache", std::nullopt);
  r = run({"convert", (d / "bad3.gguf").string(), (d / "x").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("metadata 'lfm2.shortconv.l_cache' is missing"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "x"));
}

// Values llama.cpp would not reproduce are refused at export, naming what differs.
TEST(GgufFamilies, ExportRefusesWhatLlamaCppDerivesOtherwise) {
  TempDir d;
  auto expect_refused = [&](nlohmann::json cfg, const std::string& what) {
    SCOPED_TRACE(what);
    fs::path hf = synth(d / what, cfg);
    auto r = run({"convert", hf.string(), (d / what / "m").string(), "--quant", "f16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({"export-gguf", "--model", (d / what / "m").string(), "--out", (d / what / "x.gguf").string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  auto g = kGemma2;
  g["query_pre_attn_scalar"] = 128;
  expect_refused(g, "another attention scale");
  g = kGemma3;
  g["rope_local_base_freq"] = 20000.0;
  expect_refused(g, "a local RoPE base other than 10000");
  g = kGemma3;
  g["sliding_window_pattern"] = 4;
  expect_refused(g, "another sliding-window pattern");
}

// Phi-3 128k's LongRoPE: the committed golden (HF-made) through a GGUF with rope_factors_long/short.
TEST(GgufFamilies, Phi3LongRopeRoundTripKeepsLogits) {
  TempDir d;
  const fs::path golden = bs::testing::source_dir() / "tests/model/goldens/phi3-longrope";
  fs::path gguf = expect_round_trip(golden, "f16", d.path, "phi3", "1,17,100,42,7,59,99,3,25,11");
  auto h = bs::gguf::read_header(gguf.string());
  ASSERT_NE(h.tensor("rope_factors_long.weight"), nullptr);
  EXPECT_EQ(h.tensor("rope_factors_short.weight")->ne, (std::vector<uint64_t>{8}));
  EXPECT_EQ(h.find("phi3.rope.scaling.original_context_length")->as_uint(), 32u);
  auto m = bs::read_manifest(d / "back_f16");
  EXPECT_EQ(m.model_config().rope.scaling, bs::RopeScaling::longrope);
  EXPECT_FLOAT_EQ(m.model_config().rope.long_factor[7], 12.9f);
  EXPECT_EQ(m.model_config().sliding_window, 0);
}

// Broken Gemma / LongRoPE metadata: exit 3 naming the key or tensor, expected vs actual.
TEST(GgufFamilies, MalformedGemmaAndLongRopeMetadataAreClearErrors) {
  TempDir d;
  using bs::gguf::Value;
  const fs::path g2 = expect_round_trip(synth(d / "g2", kGemma2), "f16", d / "g2", "gemma2", "2,3");
  const fs::path lr = expect_round_trip(bs::testing::source_dir() / "tests/model/goldens/phi3-longrope",
                                        "f16", d.path, "phi3", "1,2");
  int n = 0;
  auto expect_error = [&](const fs::path& src, const std::string& key, std::optional<Value> v,
                          const std::string& what, const std::string& tensor = "", float first = 0) {
    fs::path file = d / ("bad" + std::to_string(n++) + ".gguf");
    rewrite(src, file, key, v, tensor, first);
    bs::testing::expect_convert_refused(file, d / "out", what);
  };
  expect_error(g2, "gemma2.attn_logit_softcapping", Value::f32(0),
               "metadata 'gemma2.attn_logit_softcapping': expected a positive softcap (llama.cpp divides by "
               "it), got 0");
  expect_error(g2, "gemma2.final_logit_softcapping", Value::str("30"),
               "metadata 'gemma2.final_logit_softcapping': expected a number, got the string '30'");
  expect_error(g2, "gemma2.attention.sliding_window", Value::u32(0),
               "metadata 'gemma2.attention.sliding_window': expected 1 .. 2^30, got 0");
  expect_error(lr, "phi3.rope.scaling.original_context_length", std::nullopt,
               "metadata 'phi3.rope.scaling.original_context_length' is missing");
  expect_error(lr, "phi3.rope.scaling.attn_factor", Value::f32(-1),
               "metadata 'phi3.rope.scaling.attn_factor': expected a positive factor, got -1");
  expect_error(lr, "", std::nullopt,
               "tensor 'rope_factors_long.weight'[0]: expected a positive finite factor, got -2",
               "rope_factors_long.weight", -2.0f);
  expect_error(lr, "", std::nullopt,
               "tensor 'rope_factors_short.weight'[0]: expected a positive finite factor, got nan",
               "rope_factors_short.weight", std::nanf(""));
  // The gemma files in the fuzz test below and these all parse back when nothing is changed.
  rewrite(g2, d / "same.gguf", "", std::nullopt);
  EXPECT_EQ(run({"convert", (d / "same.gguf").string(), (d / "same").string()}).exit_code, 0);
}

// The fuzz target on mutations of the Gemma 3, LFM2 and Phi-3 LongRoPE files (their metadata keys and the
// factor tensors' data, which the plan reads).
TEST(GgufFamilies, FuzzMutationsOfGemmaLfm2AndLongRopeFiles) {
  TempDir d;
  std::vector<fs::path> files = {
      expect_round_trip(synth(d / "l2", kLfm2), "f16", d / "l2", "lfm2", "2,3"),
      expect_round_trip(synth(d / "g3", kGemma3), "f16", d / "g3", "gemma3", "2,3"),
      expect_round_trip(bs::testing::source_dir() / "tests/model/goldens/phi3-longrope", "f16", d.path,
                        "phi3", "1,2")};
  std::mt19937_64 r(1818);
  for (const auto& file : files) {
    const auto h = bs::gguf::read_header(file.string());
    size_t end = size_t(h.data_offset);
    if (const auto* t = h.tensor("rope_factors_short.weight"))
      end = size_t(h.data_offset + t->offset + t->size);
    const uint32_t words[] = {0, 1, 6, 46, 62, 0x7F800000u, 0xFFFFFFFFu, 0x80000000u};
    bs::testing::fuzz_mutations(bs::testing::file_bytes(file), end, words, r, 1500);
  }
}

// With ../shared: the HF-made tiny Gemma 2 / 3 and LFM2 through GGUF, and the imported model still matches
// HF's logits.
TEST(GgufFamilies, SharedGemmaModelsRoundTrip) {
  BS_REQUIRE_SHARED();
  for (auto [name, arch] :
       {std::pair{"gemma2-tiny", "gemma2"}, {"gemma3-tiny", "gemma3"}, {"lfm2-tiny", "lfm2"}}) {
    TempDir d;
    const fs::path dir = bs::testing::shared_dir() / "data/models" / name;
    expect_round_trip(dir, "f16", d.path, arch, "2,651,17,300,42,7,511,99,3");
  }
}

}  // namespace
