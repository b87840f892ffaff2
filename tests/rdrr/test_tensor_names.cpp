#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "rdrr/tensor_names.h"
#include "rdrr/safetensors.h"
#include "rdrr/hf_config.h"
#include "tests/common/testing.h"

using namespace bs;

TEST(TensorNames, LlamaVsGemmaNorms) {
  TensorNames llama("llama", false), gemma("gemma3_text", false);
  EXPECT_EQ(llama.to_internal("model.layers.3.post_attention_layernorm.weight").internal, "blk.3.ffn_norm");
  EXPECT_EQ(gemma.to_internal("model.layers.3.post_attention_layernorm.weight").internal, "blk.3.attn_post_norm");
  EXPECT_EQ(gemma.to_internal("model.layers.3.pre_feedforward_layernorm.weight").internal, "blk.3.ffn_norm");
  EXPECT_EQ(gemma.to_internal("model.layers.12.post_feedforward_layernorm.weight").internal, "blk.12.ffn_post_norm");
  EXPECT_EQ(llama.to_internal("model.layers.3.pre_feedforward_layernorm.weight").kind, TensorNames::Kind::unknown);
  EXPECT_EQ(llama.to_internal("model.embed_tokens.weight").internal, "embed");
  EXPECT_EQ(llama.to_internal("lm_head.weight").internal, "output");
  EXPECT_EQ(llama.to_internal("model.norm.weight").internal, "output_norm");
  EXPECT_EQ(llama.to_internal("model.layers.0.self_attn.q_proj.bias").internal, "blk.0.attn_q_bias");
  EXPECT_EQ(llama.to_internal("model.layers.x.self_attn.q_proj.weight").kind, TensorNames::Kind::unknown);
  EXPECT_EQ(llama.to_internal("model.layers.01.self_attn.q_proj.weight").kind, TensorNames::Kind::unknown);
  EXPECT_EQ(llama.to_internal("model.layers.0.self_attn.rotary_emb.inv_freq").kind, TensorNames::Kind::skipped);
  EXPECT_EQ(llama.to_hf("blk.7.ffn_norm"), "model.layers.7.post_attention_layernorm.weight");
  EXPECT_EQ(gemma.to_hf("blk.7.ffn_norm"), "model.layers.7.pre_feedforward_layernorm.weight");
}

TEST(TensorNames, MultimodalGemma) {
  TensorNames g("gemma3_text", true);
  EXPECT_EQ(g.to_internal("language_model.model.layers.1.mlp.down_proj.weight").internal, "blk.1.ffn_down");
  EXPECT_EQ(g.to_internal("model.language_model.embed_tokens.weight").internal, "embed");
  EXPECT_EQ(g.to_internal("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight").kind,
            TensorNames::Kind::skipped);
  EXPECT_EQ(g.to_internal("model.multi_modal_projector.mm_input_projection_weight").kind,
            TensorNames::Kind::skipped);
  EXPECT_EQ(g.to_internal("model.layers.1.mlp.down_proj.weight").kind, TensorNames::Kind::unknown);
}

TEST(TensorNames, ExpectedTensorsRoundTripThroughHfNames) {
  ModelConfig c;
  c.n_layers = 2;
  c.dim = 64;
  c.ffn_dim = 128;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.vocab = 100;
  for (auto [arch, sandwich] : {std::pair{"llama", false}, {"gemma3_text", true}}) {
    c.sandwich_norm = sandwich;
    c.qk_norm = sandwich;
    c.qkv_bias = !sandwich;
    c.tied_embeddings = sandwich;
    TensorNames names(arch, false);
    std::set<std::string> seen;
    for (auto& n : expected_tensors(c)) {
      EXPECT_TRUE(seen.insert(n).second) << n;
      EXPECT_EQ(names.to_internal(names.to_hf(n)).internal, n);
      auto shape = expected_shape(c, n);
      EXPECT_EQ(shape.size(), tensor_role(n) == "matmul" || tensor_role(n) == "embedding" || tensor_role(n) == "lm_head" ? 2u : 1u) << n;
    }
    EXPECT_EQ(seen.count("output"), sandwich ? 0u : 1u);
    EXPECT_EQ(seen.count("blk.1.attn_post_norm"), sandwich ? 1u : 0u);
  }
  EXPECT_EQ(expected_shape(c, "blk.1.attn_out"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(expected_shape(c, "blk.1.attn_k"), (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(expected_shape(c, "blk.0.ffn_down"), (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(tensor_group("blk.12.attn_q"), "layer.12");
  EXPECT_EQ(tensor_group("output_norm"), "head");
  EXPECT_EQ(tensor_role("blk.0.attn_q_norm"), "norm");
}

TEST(TensorNames, Gemma2SandwichAndPhi3Fused) {
  TensorNames g2("gemma2", false), phi3("phi3", false), llama("llama", false);
  EXPECT_EQ(g2.to_internal("model.layers.3.post_attention_layernorm.weight").internal, "blk.3.attn_post_norm");
  EXPECT_EQ(g2.to_internal("model.layers.3.pre_feedforward_layernorm.weight").internal, "blk.3.ffn_norm");
  EXPECT_EQ(phi3.to_internal("model.layers.2.self_attn.qkv_proj.weight").internal, "blk.2.attn_qkv");
  EXPECT_EQ(phi3.to_internal("model.layers.2.mlp.gate_up_proj.weight").internal, "blk.2.ffn_gate_up");
  EXPECT_EQ(phi3.to_internal("model.layers.2.post_attention_layernorm.weight").internal, "blk.2.ffn_norm");
  EXPECT_EQ(llama.to_internal("model.layers.2.self_attn.qkv_proj.weight").kind, TensorNames::Kind::unknown);
  // Split parts are written under the names an unfused checkpoint uses.
  EXPECT_EQ(phi3.to_hf("blk.2.attn_k"), "model.layers.2.self_attn.k_proj.weight");

  ModelConfig c;
  c.n_heads = 8;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.dim = 96;
  c.ffn_dim = 200;
  c.n_layers = 6;
  EXPECT_EQ(expected_shape(c, "blk.0.attn_qkv"), (std::vector<int64_t>{128 + 2 * 32, 96}));
  EXPECT_EQ(expected_shape(c, "blk.0.ffn_gate_up"), (std::vector<int64_t>{400, 96}));
  auto qkv = fused_parts(c, "blk.5.attn_qkv");
  ASSERT_EQ(qkv.size(), 3u);
  EXPECT_EQ(qkv[0].internal, "blk.5.attn_q");
  EXPECT_EQ(qkv[1].internal, "blk.5.attn_k");
  EXPECT_EQ(qkv[2].internal, "blk.5.attn_v");
  EXPECT_EQ(qkv[1].row0, 128);
  EXPECT_EQ(qkv[2].row0, 160);
  EXPECT_EQ(qkv[2].rows, 32);
  auto gu = fused_parts(c, "blk.0.ffn_gate_up");  // Phi3MLP: gate, up = gate_up.chunk(2)
  ASSERT_EQ(gu.size(), 2u);
  EXPECT_EQ(gu[0].internal, "blk.0.ffn_gate");
  EXPECT_EQ(gu[1].internal, "blk.0.ffn_up");
  EXPECT_EQ(gu[1].row0, 200);
  EXPECT_TRUE(fused_parts(c, "blk.0.attn_q").empty());
  EXPECT_TRUE(fused_parts(c, "embed").empty());
}

TEST(TensorNames, SharedTinyModelsMapCompletely) {
  BS_REQUIRE_SHARED();
  for (auto m : {"llama-tiny", "qwen3-tiny", "gemma3-tiny", "gemma2-tiny", "phi3-tiny", "lfm2-tiny", "qwen35-tiny"}) {
    auto dir = bs::testing::shared_dir() / "data/models" / m;
    ModelConfig c = load_hf_config(dir, DType::BF16);
    Checkpoint ck(dir);
    TensorNames names(c.arch, false);
    std::set<std::string> got;
    for (auto& t : ck.tensors()) {
      auto r = names.to_internal(t.name);
      ASSERT_EQ(r.kind, TensorNames::Kind::mapped) << m << " " << t.name;
      EXPECT_EQ(t.shape, expected_shape(c, r.internal)) << m << " " << t.name;
      auto parts = fused_parts(c, r.internal);
      if (parts.empty()) got.insert(r.internal);
      for (auto& p : parts) got.insert(p.internal);
    }
    auto want = expected_tensors(c);
    EXPECT_EQ(got, std::set<std::string>(want.begin(), want.end())) << m;
  }
}

// LFM2: its own names for everything, the final norm is embedding_norm, conv layers carry conv.* in
// place of self_attn.*; HF names round-trip, and Llama's names are not LFM2's.
TEST(TensorNames, Lfm2) {
  TensorNames n("lfm2", false);
  EXPECT_EQ(n.to_internal("model.embedding_norm.weight").internal, "output_norm");
  EXPECT_EQ(n.to_internal("model.layers.0.operator_norm.weight").internal, "blk.0.attn_norm");
  EXPECT_EQ(n.to_internal("model.layers.0.conv.conv.weight").internal, "blk.0.conv_kernel");
  EXPECT_EQ(n.to_internal("model.layers.3.feed_forward.w1.weight").internal, "blk.3.ffn_gate");
  EXPECT_EQ(n.to_internal("model.layers.3.feed_forward.w2.weight").internal, "blk.3.ffn_down");
  EXPECT_EQ(n.to_internal("model.layers.2.self_attn.out_proj.weight").internal, "blk.2.attn_out");
  EXPECT_EQ(n.to_internal("model.norm.weight").kind, TensorNames::Kind::unknown);
  EXPECT_EQ(n.to_internal("model.layers.2.self_attn.o_proj.weight").kind, TensorNames::Kind::unknown);
  ModelConfig c = config_from_hf(nlohmann::json::parse(R"({"model_type": "lfm2", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
      "vocab_size": 100, "conv_L_cache": 3, "layer_types": ["conv", "full_attention", "conv"]})"),
                                 nullptr, DType::BF16);
  auto want = expected_tensors(c);
  EXPECT_EQ(std::count(want.begin(), want.end(), "blk.0.conv_kernel"), 1);
  EXPECT_EQ(std::count(want.begin(), want.end(), "blk.0.attn_q"), 0);
  EXPECT_EQ(std::count(want.begin(), want.end(), "blk.1.attn_q_norm"), 1);
  EXPECT_EQ(expected_shape(c, "blk.2.conv_kernel"), (std::vector<int64_t>{64, 1, 3}));
  EXPECT_EQ(expected_shape(c, "blk.2.conv_in"), (std::vector<int64_t>{192, 64}));
  for (auto& t : want) EXPECT_EQ(n.to_internal(n.to_hf(t)).internal, t) << t;
}
