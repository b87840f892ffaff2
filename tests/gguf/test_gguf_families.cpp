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

int fuzz_gguf(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;
using bs::testing::TempDir;

bs::testing::RunResult run(const std::vector<std::string>& args) { return bs::testing::run_blueshift(args); }

std::map<std::string, std::vector<std::byte>> tensor_bytes(const fs::path& model) {
  std::map<std::string, std::vector<std::byte>> out;
  auto m = bs::read_manifest(model);
  bs::load_tensors(m, model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    out[t.internal].assign(b.begin(), b.end());
  });
  return out;
}

std::vector<float> floats(const std::vector<std::byte>& b) {
  std::vector<float> f(b.size() / 4);
  std::memcpy(f.data(), b.data(), f.size() * 4);
  return f;
}

// hf -> convert (quant) -> export-gguf -> convert back; checks config, bytes and logits. Returns the GGUF
// path.
fs::path expect_round_trip(const fs::path& hf, const std::string& quant, const fs::path& work,
                           const std::string& arch, const std::string& tokens) {
  SCOPED_TRACE(hf.filename().string() + " " + quant);
  const fs::path orig = work / ("orig_" + quant), gguf = work / (quant + ".gguf"),
                 back = work / ("back_" + quant);
  auto r = run({"convert", hf.string(), orig.string(), "--quant", quant});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({"export-gguf", "--model", orig.string(), "--out", gguf.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"architecture\":\"" + arch + "\""), std::string::npos) << r.out;
  EXPECT_EQ(*bs::gguf::read_header(gguf.string()).find("general.architecture")->as_string(), arch);
  r = run({"convert", gguf.string(), back.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return gguf;

  auto a = bs::read_manifest(orig), b = bs::read_manifest(back);
  const auto &ca = a.model_config(), &cb = b.model_config();
  EXPECT_EQ(cb.arch, ca.arch);
  EXPECT_EQ(cb.n_layers, ca.n_layers);
  EXPECT_EQ(cb.head_dim, ca.head_dim);
  EXPECT_EQ(cb.n_kv_heads, ca.n_kv_heads);
  EXPECT_EQ(cb.norm_offset, ca.norm_offset);
  EXPECT_EQ(cb.qk_norm, ca.qk_norm);
  EXPECT_EQ(cb.sandwich_norm, ca.sandwich_norm);
  EXPECT_EQ(cb.act, ca.act);
  EXPECT_EQ(cb.tied_embeddings, ca.tied_embeddings);
  EXPECT_FLOAT_EQ(cb.embed_scale, ca.embed_scale);
  EXPECT_FLOAT_EQ(cb.softmax_scale(), ca.softmax_scale());
  EXPECT_FLOAT_EQ(cb.attn_softcap, ca.attn_softcap);
  EXPECT_FLOAT_EQ(cb.final_softcap, ca.final_softcap);
  EXPECT_EQ(cb.layer_types, ca.layer_types);
  EXPECT_EQ(cb.sliding_window, ca.sliding_window);
  EXPECT_FLOAT_EQ(cb.rope.theta, ca.rope.theta);
  EXPECT_FLOAT_EQ(cb.rope.local_theta, ca.rope.local_theta);
  EXPECT_EQ(cb.rope.scaling, ca.rope.scaling);
  EXPECT_EQ(cb.rope.short_factor, ca.rope.short_factor);
  EXPECT_EQ(cb.rope.long_factor, ca.rope.long_factor);
  EXPECT_EQ(cb.rope.original_max_position, ca.rope.original_max_position);
  EXPECT_FLOAT_EQ(cb.rope.attention_factor, ca.rope.attention_factor);
  EXPECT_EQ(cb.max_seq, ca.max_seq);

  auto ta = tensor_bytes(orig), tb = tensor_bytes(back);
  EXPECT_EQ(ta.size(), tb.size());
  for (const auto& [internal, bytes] : ta) {
    const bs::TensorEntry *ea = a.find(internal), *eb = b.find(internal);
    if (!ea || !eb || !tb.count(internal)) {
      ADD_FAILURE() << internal << " is missing after the round trip";
      continue;
    }
    EXPECT_EQ(eb->name, ea->name);
    EXPECT_EQ(eb->dtype, ea->dtype) << internal;
    EXPECT_EQ(eb->shape, ea->shape) << internal;
    if (ca.norm_offset && internal.ends_with("norm")) {
      // The GGUF held fl(1 + w); the import stored fl(fl(1 + w) - 1), which the runtime's 1 + w turns back
      // into the same fl(1 + w) the original model computes.
      auto fa = floats(bytes), fb = floats(tb[internal]);
      EXPECT_EQ(fa.size(), fb.size()) << internal;
      for (size_t i = 0; i < std::min(fa.size(), fb.size()); ++i)
        EXPECT_EQ(1.0f + fb[i], 1.0f + fa[i]) << internal << "[" << i << "]";
    } else {
      EXPECT_TRUE(tb[internal] == bytes) << internal << ": bytes differ";
    }
  }
  for (auto [model, npy] : {std::pair{orig, "a.npy"}, std::pair{back, "b.npy"}}) {
    r = run({"logits", "--model", model.string(), "--tokens", tokens, "--out", (work / npy).string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  auto la = bs::read_npy_f32(work / "a.npy"), lb = bs::read_npy_f32(work / "b.npy");
  EXPECT_EQ(la.shape, lb.shape);
  if (la.data.size() != lb.data.size() || la.shape.size() != 2) return gguf;
  double num = 0, den = 0;
  for (size_t i = 0; i < la.data.size(); ++i) {
    num += std::pow(double(la.data[i]) - lb.data[i], 2);
    den += std::pow(double(la.data[i]), 2);
  }
  EXPECT_GT(den, 0);
  EXPECT_LE(std::sqrt(num / den), 1e-6) << "rel L2 of the logits";
  const size_t vocab = size_t(la.shape[1]);
  for (size_t row = 0; row < size_t(la.shape[0]); ++row) {
    auto ia = std::max_element(la.data.begin() + row * vocab, la.data.begin() + (row + 1) * vocab);
    auto ib = std::max_element(lb.data.begin() + row * vocab, lb.data.begin() + (row + 1) * vocab);
    EXPECT_EQ(ia - la.data.begin(), ib - lb.data.begin()) << "argmax of row " << row;
  }
  return gguf;
}

fs::path synth(const fs::path& dir, const nlohmann::json& cfg) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << cfg.dump();
  auto r = run({"synth", "--config", (dir / "config.json").string(), (dir / "hf").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir / "hf";
}

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

// `src` written again with metadata `key` set to `v` (or dropped when v is null) and, where `tensor` is
// named, its first 4 bytes set to `first`.
void rewrite(const fs::path& src, const fs::path& dst, const std::string& key,
             std::optional<bs::gguf::Value> v, const std::string& tensor = "", float first = 0) {
  auto h = bs::gguf::read_header(src.string());
  std::ifstream in(src, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bs::gguf::Writer w(dst.string(), h.alignment);
  bool set = false;
  for (const auto& kv : h.metadata) {
    if (kv.key == "general.alignment") continue;
    if (kv.key == key) {
      set = true;
      if (v) w.add(kv.key, *v);
    } else {
      w.add(kv.key, kv.value);
    }
  }
  if (!set && v) w.add(key, *v);
  for (const auto& t : h.tensors) w.add_tensor(t.name, t.ne, t.type);
  w.write_header();
  for (const auto& t : h.tensors) {
    std::vector<std::byte> b(t.size);
    std::memcpy(b.data(), bytes.data() + h.data_offset + t.offset, t.size);
    if (t.name == tensor) std::memcpy(b.data(), &first, 4);
    w.write_tensor(b);
  }
  w.finish();
}

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
    auto r = run({"convert", file.string(), (d / "out").string()});
    EXPECT_EQ(r.exit_code, 3) << what << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "out"));
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
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto h = bs::gguf::read_header(file.string());
    size_t end = size_t(h.data_offset);
    if (const auto* t = h.tensor("rope_factors_short.weight"))
      end = size_t(h.data_offset + t->offset + t->size);
    for (int i = 0; i < 1500; ++i) {
      auto b = good;
      for (int k = 1 + int(r() % 3); k > 0; --k) {
        size_t at = r() % end;
        if (r() % 2) {
          b[at] ^= uint8_t(1 << (r() % 8));
        } else if (at + 4 <= b.size()) {
          uint32_t v[] = {0, 1, 6, 46, 62, 0x7F800000u, 0xFFFFFFFFu, 0x80000000u};
          std::memcpy(b.data() + at, &v[r() % std::size(v)], 4);
        }
      }
      fuzz_gguf(b.data(), b.size());
    }
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
