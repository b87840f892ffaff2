// GGUF import of Qwen 3.5 (llama.cpp's qwen35, issue 18): a synthesized Gated DeltaNet hybrid written as
// llama.cpp's converter writes it (1 + w norms but the gated one, ssm_a = -exp(A_log), v heads tiled where
// there are fewer k heads, the conv kernel squeezed) and imported back to the same bytes (A_log included) and
// logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "rdrr/gguf.h"
#include "rdrr/manifest.h"
#include "rdrr/quant.h"
#include "runtime/base/half.h"
#include "runtime/base/npy.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/gguf/round_trip.h"

namespace {

namespace fs = std::filesystem;
using bs::gguf::Value;
using bs::testing::expect_round_trip;
using bs::testing::TempDir;
using nlohmann::json;

// 2 k heads and 4 v heads (so llama.cpp tiles the v heads), k and v heads 32 wide (llama.cpp's qwen35 takes
// both from ssm.state_size), every second layer full attention, partial rotary 0.25 of 64.
const json kQwen35 = {
    {"model_type", "qwen3_5_text"},
    {"architectures", {"Qwen3_5ForCausalLM"}},
    {"hidden_size", 192},
    {"intermediate_size", 320},
    {"num_attention_heads", 3},
    {"num_key_value_heads", 1},
    {"head_dim", 64},
    {"num_hidden_layers", 4},
    {"vocab_size", 311},
    {"max_position_embeddings", 1024},
    {"rms_norm_eps", 1e-6},
    {"hidden_act", "silu"},
    {"layer_types", {"linear_attention", "full_attention", "linear_attention", "full_attention"}},
    {"linear_num_key_heads", 2},
    {"linear_num_value_heads", 4},
    {"linear_key_head_dim", 32},
    {"linear_value_head_dim", 32},
    {"linear_conv_kernel_dim", 4},
    {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.25}}},
    {"tie_word_embeddings", false},
    {"bos_token_id", 1},
    {"eos_token_id", 2}};

const char* kTokens = "1,7,9,30,2,100,4,5,6,7,8,9,10,11";

std::vector<float> gguf_floats(const fs::path& file, const std::string& name) {
  auto h = bs::gguf::read_header(file.string());
  const auto* t = h.tensor(name);
  if (!t || t->type != bs::gguf::GgmlType::F32) return {};
  std::ifstream in(file, std::ios::binary);
  in.seekg(std::streamoff(h.data_offset + t->offset));
  std::vector<float> f(t->size / 4);
  in.read(reinterpret_cast<char*>(f.data()), std::streamsize(t->size));
  return f;
}

std::vector<float> rdrr_floats(const fs::path& model, const std::string& internal) {
  std::vector<float> out;
  auto m = bs::read_manifest(model);
  bs::load_tensors(m, model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    if (t.internal != internal) return;
    out.resize(b.size() / 4);
    std::memcpy(out.data(), b.data(), b.size());
  });
  return out;
}

TEST(GgufQwen35, RoundTripKeepsBytesAndLogits) {
  TempDir d;
  fs::path hf = bs::testing::synth(d / "q35", kQwen35);
  for (const char* q : {"q8_0", "f16"}) expect_round_trip(hf, q, d.path, "qwen35", kTokens);
  const fs::path gguf = d / "f16.gguf", orig = d / "orig_f16";
  auto h = bs::gguf::read_header(gguf.string());
  EXPECT_EQ(h.find("qwen35.ssm.group_count")->as_uint(), 2u);
  EXPECT_EQ(h.find("qwen35.ssm.time_step_rank")->as_uint(), 4u);
  EXPECT_EQ(h.find("qwen35.ssm.inner_size")->as_uint(), 128u);
  EXPECT_EQ(h.find("qwen35.full_attention_interval")->as_uint(), 2u);
  EXPECT_EQ(h.find("qwen35.rope.dimension_count")->as_uint(), 16u);
  EXPECT_EQ(h.tensor("blk.0.ssm_conv1d.weight")->ne, (std::vector<uint64_t>{4, 256}));
  EXPECT_EQ(h.tensor("blk.1.attn_q.weight")->ne, (std::vector<uint64_t>{192, 384}));  // q and its gate
  EXPECT_EQ(h.tensor("blk.1.ssm_a"), nullptr);
  // ssm_a = -exp(A_log) with the v heads tiled: the file's head v * 2 + g is HF's head g * 2 + v.
  auto a = gguf_floats(gguf, "blk.2.ssm_a"), a_log = rdrr_floats(orig, "blk.2.linear_a_log");
  auto dt = gguf_floats(gguf, "blk.2.ssm_dt.bias"), dt_bias = rdrr_floats(orig, "blk.2.linear_dt_bias");
  ASSERT_EQ(a.size(), 4u);
  ASSERT_EQ(a_log.size(), 4u);
  for (int g = 0; g < 2; ++g)
    for (int v = 0; v < 2; ++v) {
      EXPECT_EQ(a[size_t(v * 2 + g)], -std::exp(a_log[size_t(g * 2 + v)]));
      EXPECT_EQ(dt[size_t(v * 2 + g)], dt_bias[size_t(g * 2 + v)]);
    }
  // Norms are 1 + w, the gated DeltaNet norm plain w.
  auto n = gguf_floats(gguf, "blk.0.post_attention_norm.weight"), w = rdrr_floats(orig, "blk.0.ffn_norm");
  ASSERT_FALSE(n.empty());
  EXPECT_EQ(n[5], 1.0f + w[5]);
  EXPECT_EQ(gguf_floats(gguf, "blk.0.ssm_norm.weight"), rdrr_floats(orig, "blk.0.linear_norm"));
  auto m = bs::read_manifest(d / "back_f16");
  EXPECT_EQ(m.model_config().kind(0), bs::LayerKind::linear_attention);
  EXPECT_EQ(m.model_config().kind(3), bs::LayerKind::attention);
  EXPECT_EQ(m.model_config().rotary_dim, 16);
}

// Q4_K's 256-value blocks span two of llama.cpp's tiled 64-wide v heads in out_proj's rows: that tensor is
// dequantized to F16 and its columns moved back (the rounding stated), the rest keep their bytes.
TEST(GgufQwen35, Q4KColumnsSharingBlocksAreDequantized) {
  TempDir d;
  json c = kQwen35;
  c.update({{"hidden_size", 256},
            {"num_attention_heads", 4},
            {"intermediate_size", 512},
            {"linear_key_head_dim", 64},
            {"linear_value_head_dim", 64}});
  fs::path hf = bs::testing::synth(d / "q35", c);
  const fs::path orig = d / "orig", gguf = d / "m.gguf", back = d / "back";
  auto r = bs::testing::run_blueshift({"convert", hf.string(), orig.string(), "--quant", "q4_k_m"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = bs::testing::run_blueshift({"export-gguf", "--model", orig.string(), "--out", gguf.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = bs::testing::run_blueshift({"convert", gguf.string(), back.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 tensors Q4_K -> F16 (v-head columns)"), std::string::npos) << r.err;
  auto ma = bs::read_manifest(orig), mb = bs::read_manifest(back);
  ASSERT_EQ(ma.find("blk.0.linear_out")->dtype, bs::DType::Q4_K);
  EXPECT_EQ(mb.find("blk.0.linear_out")->dtype, bs::DType::F16);
  EXPECT_EQ(mb.find("blk.0.linear_z")->dtype, ma.find("blk.0.linear_z")->dtype);
  // The imported F16 values are the GGUF's Q4_K values (llama.cpp's tiled order), rounded, in HF's order.
  std::vector<std::byte> hb;
  bs::load_tensors(mb, back, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    if (t.internal == "blk.0.linear_out") hb.assign(b.begin(), b.end());
  });
  const auto h = bs::gguf::read_header(gguf.string());
  const auto* ti = h.tensor("blk.0.ssm_out.weight");
  ASSERT_NE(ti, nullptr);
  ASSERT_EQ(ti->type, bs::gguf::GgmlType::Q4_K);
  std::vector<std::byte> q(ti->size);
  {
    std::ifstream in(gguf, std::ios::binary);
    in.seekg(std::streamoff(h.data_offset + ti->offset));
    in.read(reinterpret_cast<char*>(q.data()), std::streamsize(q.size()));
  }
  const size_t n = 256 * 256;
  std::vector<float> tiled(n);
  bs::dequantize_row(bs::DType::Q4_K, q.data(), tiled.data(), int64_t(n));
  ASSERT_EQ(hb.size(), 2 * n);
  for (size_t row = 0; row < 256; ++row)
    for (int g = 0; g < 2; ++g)
      for (int v = 0; v < 2; ++v)
        for (size_t i = 0; i < 64; ++i) {
          uint16_t got;
          std::memcpy(&got, hb.data() + 2 * (row * 256 + size_t(g * 2 + v) * 64 + i), 2);
          ASSERT_EQ(got, bs::float_to_half(tiled[row * 256 + size_t(v * 2 + g) * 64 + i]))
              << "row " << row << ", HF head " << g * 2 + v << ", column " << i;
        }
  std::vector<std::vector<float>> logits;
  for (const fs::path& m : {orig, back}) {
    r = bs::testing::run_blueshift(
        {"logits", "--model", m.string(), "--tokens", kTokens, "--out", (m.string() + ".npy")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    logits.push_back(bs::read_npy_f32(m.string() + ".npy").data);
  }
  double num = 0, den = 0;
  for (size_t i = 0; i < logits[0].size(); ++i) {
    num += std::pow(double(logits[0][i]) - logits[1][i], 2);
    den += std::pow(double(logits[0][i]), 2);
  }
  // The export re-quantized that tensor in llama.cpp's order (as its converter quantizes HF's values): the
  // logits are near, not equal.
  EXPECT_LE(std::sqrt(num / den), 3e-2);
  const size_t vocab = 311;
  for (size_t row = 0; row < logits[0].size() / vocab; ++row)
    EXPECT_EQ(std::max_element(logits[0].begin() + row * vocab, logits[0].begin() + (row + 1) * vocab) -
                  logits[0].begin(),
              std::max_element(logits[1].begin() + row * vocab, logits[1].begin() + (row + 1) * vocab) -
                  logits[1].begin())
        << "row " << row;
}

// As many v heads as k heads: nothing is reordered.
TEST(GgufQwen35, EqualHeadsRoundTrip) {
  TempDir d;
  json c = kQwen35;
  c["linear_num_value_heads"] = 2;
  expect_round_trip(bs::testing::synth(d / "q35", c), "f16", d.path, "qwen35", kTokens);
}

// Multi-token-prediction blocks after the decoder's (nextn_predict_layers) are left out, and said so.
TEST(GgufQwen35, MtpBlocksAreLeftOut) {
  TempDir d;
  const fs::path src =
      expect_round_trip(bs::testing::synth(d / "q35", kQwen35), "f16", d.path, "qwen35", "1,2");
  auto h = bs::gguf::read_header(src.string());
  std::ifstream in(src, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path file = d / "mtp.gguf";
  {
    bs::gguf::Writer w(file.string(), h.alignment);
    for (const auto& kv : h.metadata)
      if (kv.key != "general.alignment")
        w.add(kv.key, kv.key == "qwen35.block_count" ? Value::u32(5) : kv.value);
    w.add("qwen35.nextn_predict_layers", Value::u32(1));
    for (const auto& t : h.tensors) w.add_tensor(t.name, t.ne, t.type);
    w.add_tensor("blk.4.nextn.enorm.weight", {192}, bs::gguf::GgmlType::F32);
    w.add_tensor("blk.4.attn_norm.weight", {192}, bs::gguf::GgmlType::F32);
    w.write_header();
    for (const auto& t : h.tensors)
      w.write_tensor(std::as_bytes(std::span(bytes.data() + h.data_offset + t.offset, t.size)));
    std::vector<float> ones(192, 1.0f);
    for (int i = 0; i < 2; ++i) w.write_tensor(std::as_bytes(std::span(ones)));
    w.finish();
  }
  auto r = bs::testing::run_blueshift({"convert", file.string(), (d / "mtp").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 tensors of multi-token-prediction blocks left out"), std::string::npos) << r.err;
  EXPECT_EQ(bs::read_manifest(d / "mtp").model_config().n_layers, 4);
}

TEST(GgufQwen35, MalformedFilesAreClearErrors) {
  TempDir d;
  const fs::path src =
      expect_round_trip(bs::testing::synth(d / "q35", kQwen35), "f16", d.path, "qwen35", "1,2");
  int n = 0;
  auto expect_error = [&](const fs::path& file, const std::string& what) {
    bs::testing::expect_convert_refused(file, d / "out", what);
  };
  auto meta = [&](const std::string& key, std::optional<Value> v, const std::string& what,
                  const std::string& t = "", float first = 0) {
    fs::path file = d / ("bad" + std::to_string(n++) + ".gguf");
    bs::testing::rewrite(src, file, key, v, t, first);
    expect_error(file, what);
  };
  meta("qwen35.ssm.group_count", std::nullopt, "metadata 'qwen35.ssm.group_count' is missing");
  meta("qwen35.ssm.inner_size", Value::u32(130),
       "ssm.time_step_rank' 4 / ssm.group_count 2 / ssm.inner_size 130: expected v heads a multiple of k "
       "heads");
  meta("qwen35.full_attention_interval", Value::u32(0),
       "metadata 'qwen35.full_attention_interval': expected 1 .. 4 (block_count), got 0");
  meta("qwen35.full_attention_interval", Value::u32(3), "no tensor for 'blk.1.linear_qkv'");
  meta("qwen35.rope.dimension_count", Value::u32(15),
       "metadata 'qwen35.rope.dimension_count': expected an even count of 2 .. 64 (key_length), got 15");
  meta("qwen35.ssm.state_size", Value::u32(16),
       "tensor 'blk.0.attn_qkv.weight': expected shape [192,192] (ne [192,192]), got [256,192]");
  meta("qwen35.nextn_predict_layers", Value::u32(4),
       "metadata 'qwen35.nextn_predict_layers': expected fewer than block_count 4, got 4");
  meta("", std::nullopt, "tensor 'blk.0.ssm_a'[0]: expected A = -exp(A_log) < 0, got 0.5", "blk.0.ssm_a",
       0.5f);
  fs::path file = d / "drop.gguf";
  bs::testing::drop_tensor(src, file, "blk.2.ssm_out.weight");
  expect_error(file, "no tensor for 'blk.2.linear_out'");
}

// export-gguf refuses what llama.cpp's qwen35 cannot hold.
TEST(GgufQwen35, ExportRefusesWhatLlamaCppCannotHold) {
  TempDir d;
  auto expect_refused = [&](json cfg, const std::string& what, const std::string& dir) {
    SCOPED_TRACE(what);
    fs::path hf = bs::testing::synth(d / dir, cfg);
    auto r = bs::testing::run_blueshift({"convert", hf.string(), (d / dir / "m").string(), "--quant", "f16"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = bs::testing::run_blueshift(
        {"export-gguf", "--model", (d / dir / "m").string(), "--out", (d / dir / "x.gguf").string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  };
  json c = kQwen35;
  c["linear_value_head_dim"] = 48;
  expect_refused(c, "DeltaNet v heads of another width than k heads", "a");
  c = kQwen35;
  c["layer_types"] = {"linear_attention", "full_attention", "full_attention", "linear_attention"};
  expect_refused(c, "layer kinds that are not every n-th layer full attention", "b");
}

TEST(GgufQwen35, FuzzMutationsOfTheHeader) {
  TempDir d;
  const fs::path file =
      expect_round_trip(bs::testing::synth(d / "q35", kQwen35), "f16", d.path, "qwen35", "1,2");
  const size_t end = size_t(bs::gguf::read_header(file.string()).data_offset);
  std::mt19937_64 r(1835);
  const uint32_t words[] = {0, 1, 2, 3, 4, 5, 16, 32, 0xFFFFFFFFu};
  bs::testing::fuzz_mutations(bs::testing::file_bytes(file), end, words, r, 1500);
}

}  // namespace
