// blueshift convert MODEL.gguf OUT_DIR: a synthesized tiny Llama goes RDRR -> export-gguf -> import
// and comes back with the same bytes in every tensor (q/k rows un-permuted) and the same logits on
// lavapipe; malformed or unsupported GGUFs fail with exit 3 naming the field or tensor; the output
// is written like convert's (no overwrite without --force, nothing left behind on failure).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "rdrr/gguf.h"
#include "rdrr/gguf_import.h"
#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "runtime/base/npy.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/trainer.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/gguf/round_trip.h"

namespace {

namespace fs = std::filesystem;
using namespace bs::gguf;
using bs::testing::TempDir;

bs::testing::RunResult run(const std::vector<std::string>& args) { return bs::testing::run_blueshift(args); }

std::map<std::string, std::vector<std::byte>> tensor_bytes_by_internal(const fs::path& model) {
  std::map<std::string, std::vector<std::byte>> out;
  auto m = bs::read_manifest(model);
  bs::load_tensors(m, model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    out[t.internal].assign(b.begin(), b.end());
  });
  return out;
}

TEST(GgufImport, RoundTripThroughExportKeepsBytesAndLogits) {
  TempDir d;
  auto r = bs::testing::synth_into(d.path, bs::testing::tiny_llama_config());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* quant : {"q4_k_m", "f16"}) {
    SCOPED_TRACE(quant);
    fs::path orig = d / (std::string("m_") + quant), gguf = d / (std::string(quant) + ".gguf"),
             back = d / (std::string("back_") + quant);
    r = run({"convert", (d / "hf").string(), orig.string(), "--quant", quant});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({"export-gguf", "--model", orig.string(), "--out", gguf.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({"convert", gguf.string(), back.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"tensors\": 20"), std::string::npos) << r.out;  // embed, 2 x 9, output_norm

    auto a = bs::read_manifest(orig), b = bs::read_manifest(back);
    EXPECT_EQ(b.model_type, "llama");
    EXPECT_EQ(b.metadata["sourceFormat"], "gguf");
    const auto &ca = a.model_config(), &cb = b.model_config();
    EXPECT_EQ(cb.n_layers, ca.n_layers);
    EXPECT_EQ(cb.dim, ca.dim);
    EXPECT_EQ(cb.n_heads, ca.n_heads);
    EXPECT_EQ(cb.n_kv_heads, ca.n_kv_heads);
    EXPECT_EQ(cb.head_dim, ca.head_dim);
    EXPECT_EQ(cb.ffn_dim, ca.ffn_dim);
    EXPECT_EQ(cb.vocab, ca.vocab);
    EXPECT_EQ(cb.tied_embeddings, ca.tied_embeddings);
    EXPECT_FLOAT_EQ(cb.norm_eps, ca.norm_eps);
    EXPECT_FLOAT_EQ(cb.rope.theta, ca.rope.theta);
    EXPECT_EQ(cb.bos_id, ca.bos_id);
    // Every tensor: the same dtype, HF name, shape and bytes (q/k un-permuted back to HF order).
    auto ta = tensor_bytes_by_internal(orig), tb = tensor_bytes_by_internal(back);
    ASSERT_EQ(ta.size(), tb.size());
    for (const auto& [internal, bytes] : ta) {
      ASSERT_TRUE(tb.count(internal)) << internal;
      EXPECT_TRUE(tb[internal] == bytes) << internal;
      const bs::TensorEntry *ea = a.find(internal), *eb = b.find(internal);
      ASSERT_TRUE(ea && eb) << internal;
      EXPECT_EQ(eb->name, ea->name);
      EXPECT_EQ(eb->dtype, ea->dtype) << internal;
      EXPECT_EQ(eb->shape, ea->shape) << internal;
    }
    // The same logits on the GPU (lavapipe here).
    const std::string tokens = "1,17,300,42,7,511,99";
    r = run({"logits", "--model", orig.string(), "--tokens", tokens, "--out", (d / "a.npy").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run({"logits", "--model", back.string(), "--tokens", tokens, "--out", (d / "b.npy").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto la = bs::read_npy_f32(d / "a.npy"), lb = bs::read_npy_f32(d / "b.npy");
    ASSERT_EQ(la.data.size(), lb.data.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < la.data.size(); ++i) {
      num += std::pow(double(la.data[i]) - lb.data[i], 2);
      den += std::pow(double(la.data[i]), 2);
    }
    EXPECT_LE(std::sqrt(num / den), 1e-6) << "rel L2 of the logits";
    EXPECT_GT(den, 0);
  }
}

// Phi-3 as llama.cpp writes it: HF's fused qkv_proj as attn_qkv, gate_up_proj under the name ffn_up, every
// layer sliding. Written here from an F16 conversion of a synthesized Phi-3 (q|k|v and gate|up rows
// concatenated), imported, and split back by rows: the same bytes in every tensor and the same logits.
TEST(GgufImport, Phi3FusedTensorsSplitBackToTheSameModel) {
  TempDir d;
  const nlohmann::json cfg = {{"model_type", "phi3"}, {"architectures", {"Phi3ForCausalLM"}}, {"hidden_size", 128},
                              {"intermediate_size", 192}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                              {"num_hidden_layers", 2}, {"vocab_size", 260}, {"max_position_embeddings", 4096},
                              {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"}, {"rope_theta", 10000.0},
                              {"sliding_window", 7}, {"tie_word_embeddings", false}};
  auto r = bs::testing::synth_into(d.path, cfg.dump());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({"convert", (d / "hf").string(), (d / "orig").string(), "--quant", "f16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto bytes = tensor_bytes_by_internal(d / "orig");
  auto orig = bs::read_manifest(d / "orig");
  {
    Writer w((d / "phi3.gguf").string());
    w.add("general.architecture", Value::str("phi3"));
    w.add("phi3.block_count", Value::u32(2));
    w.add("phi3.embedding_length", Value::u32(128));
    w.add("phi3.feed_forward_length", Value::u32(192));
    w.add("phi3.attention.head_count", Value::u32(4));
    w.add("phi3.attention.head_count_kv", Value::u32(2));
    w.add("phi3.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
    w.add("phi3.rope.freq_base", Value::f32(10000.0f));
    w.add("phi3.context_length", Value::u32(4096));
    w.add("phi3.attention.sliding_window", Value::u32(7));
    std::vector<std::vector<std::byte>> data;
    auto tensor = [&](const std::string& name, std::vector<std::string> parts) {
      std::vector<std::byte> b;
      std::vector<int64_t> shape = orig.find(parts[0])->shape;
      int64_t rows = 0;
      for (auto& part : parts) {
        b.insert(b.end(), bytes.at(part).begin(), bytes.at(part).end());
        rows += orig.find(part)->shape[0];
      }
      shape[0] = rows;
      auto type = orig.find(parts[0])->dtype == bs::DType::F32 ? GgmlType::F32 : GgmlType::F16;
      w.add_tensor(name, std::vector<uint64_t>(shape.rbegin(), shape.rend()), type);
      data.push_back(std::move(b));
    };
    tensor("token_embd.weight", {"embed"});
    for (int l = 0; l < 2; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      tensor(b + "attn_norm.weight", {b + "attn_norm"});
      tensor(b + "attn_qkv.weight", {b + "attn_q", b + "attn_k", b + "attn_v"});
      tensor(b + "attn_output.weight", {b + "attn_out"});
      tensor(b + "ffn_norm.weight", {b + "ffn_norm"});
      tensor(b + "ffn_up.weight", {b + "ffn_gate", b + "ffn_up"});
      tensor(b + "ffn_down.weight", {b + "ffn_down"});
    }
    tensor("output_norm.weight", {"output_norm"});
    tensor("output.weight", {"output"});
    w.write_header();
    for (auto& b : data) w.write_tensor(b);
    w.finish();
  }
  r = run({"convert", (d / "phi3.gguf").string(), (d / "back").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto back = bs::read_manifest(d / "back");
  EXPECT_EQ(back.model_type, "phi3");
  EXPECT_EQ(back.model_config().sliding_window, 7);
  auto again = tensor_bytes_by_internal(d / "back");
  ASSERT_EQ(again.size(), bytes.size());
  for (const auto& [internal, b] : bytes) {
    ASSERT_TRUE(again.count(internal)) << internal;
    EXPECT_TRUE(again[internal] == b) << internal;
    EXPECT_EQ(back.find(internal)->shape, orig.find(internal)->shape) << internal;
    EXPECT_EQ(back.find(internal)->name, orig.find(internal)->name) << internal;
  }
  const std::string tokens = "1,17,200,42,7,59,99,3,250";
  for (auto [model, npy] : {std::pair{"orig", "a.npy"}, std::pair{"back", "b.npy"}}) {
    r = run({"logits", "--model", (d / model).string(), "--tokens", tokens, "--out", (d / npy).string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto la = bs::read_npy_f32(d / "a.npy"), lb = bs::read_npy_f32(d / "b.npy");
  EXPECT_EQ(la.data, lb.data);
  // Phi-3 128k's LongRoPE factors are two tensors in GGUF: one alone is refused, naming the other.
  {
    Writer w((d / "lr.gguf").string());
    for (const char* k : {"general.architecture"}) w.add(k, Value::str("phi3"));
    w.add("phi3.block_count", Value::u32(1));
    w.add("phi3.embedding_length", Value::u32(64));
    w.add("phi3.feed_forward_length", Value::u32(96));
    w.add("phi3.attention.head_count", Value::u32(2));
    w.add("phi3.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
    w.add_tensor("token_embd.weight", {64, 80}, GgmlType::F32);
    w.add_tensor("rope_factors_long.weight", {16}, GgmlType::F32);
    w.write_header();
    for (const auto& t : w.tensors()) w.write_tensor(std::vector<std::byte>(t.size));
    w.finish();
  }
  r = run({"convert", (d / "lr.gguf").string(), (d / "lr").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("tensor 'rope_factors_short.weight' is missing"), std::string::npos) << r.err;
}

// A minimal valid llama GGUF (F32 everywhere), with hooks to break it.
struct TinyGguf {
  std::vector<KeyValue> meta = {
      {"general.architecture", Value::str("llama")},
      {"llama.block_count", Value::u32(1)},
      {"llama.embedding_length", Value::u32(64)},
      {"llama.feed_forward_length", Value::u32(96)},
      {"llama.attention.head_count", Value::u32(2)},
      {"llama.attention.head_count_kv", Value::u32(1)},
      {"llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f)},
      {"llama.rope.freq_base", Value::f32(10000.0f)},
      {"llama.context_length", Value::u32(256)},
  };
  struct T {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type = GgmlType::F32;
  };
  std::vector<T> tensors = {
      {"token_embd.weight", {64, 80}},   {"blk.0.attn_norm.weight", {64}},
      {"blk.0.attn_q.weight", {64, 64}}, {"blk.0.attn_k.weight", {64, 32}},
      {"blk.0.attn_v.weight", {64, 32}}, {"blk.0.attn_output.weight", {64, 64}},
      {"blk.0.ffn_norm.weight", {64}},   {"blk.0.ffn_gate.weight", {64, 96}},
      {"blk.0.ffn_up.weight", {64, 96}}, {"blk.0.ffn_down.weight", {96, 64}},
      {"output_norm.weight", {64}},
  };
  void set(const std::string& key, Value v) {
    for (auto& kv : meta)
      if (kv.key == key) {
        kv.value = std::move(v);
        return;
      }
    meta.push_back({key, std::move(v)});
  }
  void drop(const std::string& key) {
    std::erase_if(meta, [&](const KeyValue& kv) { return kv.key == key; });
  }
  void write(const fs::path& file) const {
    Writer w(file.string());
    for (const auto& kv : meta) w.add(kv.key, kv.value);
    for (const auto& t : tensors) w.add_tensor(t.name, t.ne, t.type);
    w.write_header();
    for (const auto& t : w.tensors()) {
      std::vector<std::byte> b(t.size);
      for (size_t i = 0; i < b.size(); i += 4) {
        float f = float(bs::testing::rng()() % 1000) / 1000.0f - 0.5f;
        if (t.type == GgmlType::F32) std::memcpy(b.data() + i, &f, 4);
      }
      w.write_tensor(b);
    }
    w.finish();
  }
};

TEST(GgufImport, MinimalLlamaImportsAndNormsBecomeF32) {
  TempDir d;
  TinyGguf g;
  g.tensors[1].type = GgmlType::F16;  // an F16 norm
  g.write(d / "t.gguf");
  auto r = run({"convert", (d / "t.gguf").string(), (d / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto m = bs::read_manifest(d / "out");
  EXPECT_TRUE(m.model_config().tied_embeddings);
  EXPECT_EQ(m.model_config().vocab, 80);
  EXPECT_EQ(m.find("blk.0.attn_norm")->dtype, bs::DType::F32);
  EXPECT_EQ(m.find("blk.0.attn_norm")->source_dtype, "F16");
  EXPECT_EQ(m.find("blk.0.attn_q")->dtype, bs::DType::F16);  // F32 matrices are stored F16, as convert does
  EXPECT_EQ(m.find("blk.0.attn_q")->name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(m.find("blk.0.ffn_down")->shape, (std::vector<int64_t>{64, 96}));
  // An existing OUT_DIR is kept without --force (usage error), replaced with it.
  r = run({"convert", (d / "t.gguf").string(), (d / "out").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  r = run({"convert", (d / "t.gguf").string(), (d / "out").string(), "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // --quant is the safetensors path's; a GGUF's tensors keep their types.
  r = run({"convert", (d / "t.gguf").string(), (d / "o2").string(), "--quant", "f16"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--quant"), std::string::npos) << r.err;
}

// qwen3: keys under "qwen3.", q/k norms; its RoPE is NEOX-style, so llama.cpp kept HF's q/k row order.
TEST(GgufImport, Qwen3ImportsWithQkNorms) {
  TempDir d;
  TinyGguf g;
  for (auto& kv : g.meta)
    if (kv.key.starts_with("llama.")) kv.key = "qwen3." + kv.key.substr(6);
  g.set("general.architecture", Value::str("qwen3"));
  g.tensors.push_back({"blk.0.attn_q_norm.weight", {32}});
  g.tensors.push_back({"blk.0.attn_k_norm.weight", {32}});
  g.write(d / "q.gguf");
  auto r = run({"convert", (d / "q.gguf").string(), (d / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto m = bs::read_manifest(d / "out");
  EXPECT_EQ(m.model_type, "qwen3");
  EXPECT_TRUE(m.model_config().qk_norm);
  EXPECT_EQ(m.find("blk.0.attn_q_norm")->name, "model.layers.0.self_attn.q_norm.weight");
  // Without its q/k norms the file does not describe a qwen3 model.
  g.tensors.pop_back();
  g.write(d / "q2.gguf");
  r = run({"convert", (d / "q2.gguf").string(), (d / "out2").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no tensor for 'blk.0.attn_k_norm'"), std::string::npos) << r.err;
}

// tokenizer.ggml.* as llama.cpp's converter writes a byte-level BPE tokenizer.json: tokens in id
// order, control/user-defined types for added tokens, merges as "left right".
void add_vocabulary(TinyGguf& g, const fs::path& tok_dir, const std::string& pre, uint32_t bos,
                    uint32_t eos) {
  auto tok = nlohmann::json::parse(std::ifstream(tok_dir / "tokenizer.json"));
  size_t n = 0;
  for (auto& [text, id] : tok["model"]["vocab"].items()) n = std::max(n, id.get<size_t>() + 1);
  for (auto& a : tok["added_tokens"]) n = std::max(n, a["id"].get<size_t>() + 1);
  std::vector<std::string> tokens(n);
  std::vector<int64_t> types(n, 5);  // ids nobody holds: llama.cpp's "[PADn]", unused
  for (size_t i = 0; i < n; ++i) tokens[i] = "[PAD" + std::to_string(i) + "]";
  for (auto& [text, id] : tok["model"]["vocab"].items()) types[id.get<size_t>()] = 1;
  for (auto& [text, id] : tok["model"]["vocab"].items()) tokens[id.get<size_t>()] = text;
  for (auto& a : tok["added_tokens"]) {
    size_t id = a["id"];
    tokens[id] = a["content"];
    types[id] = a["special"].get<bool>() ? 3 : 4;
  }
  std::vector<std::string> merges;
  for (auto& m : tok["model"]["merges"])
    merges.push_back(m.is_string() ? m.get<std::string>()
                                   : m[0].get<std::string>() + " " + m[1].get<std::string>());
  g.set("tokenizer.ggml.model", Value::str("gpt2"));
  g.set("tokenizer.ggml.pre", Value::str(pre));
  g.set("tokenizer.ggml.token_type", Value::i32_array(types));
  g.set("tokenizer.ggml.merges", Value::str_array(merges));
  g.set("tokenizer.ggml.bos_token_id", Value::u32(bos));
  g.set("tokenizer.ggml.eos_token_id", Value::u32(eos));
  g.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
  if (fs::exists(tok_dir / "tokenizer_config.json")) {
    auto cfg = nlohmann::json::parse(std::ifstream(tok_dir / "tokenizer_config.json"));
    g.set("tokenizer.chat_template", Value::str(cfg["chat_template"]));
  }
  g.tensors[0].ne = {64, tokens.size()};
  g.set("tokenizer.ggml.tokens", Value::str_array(std::move(tokens)));
}

TEST(GgufImport, VocabularyBecomesTheSameTokenizer) {
  TempDir d;
  bs::tok::write_builtin_tokenizer(d / "tok", 700);
  TinyGguf g;
  add_vocabulary(g, d / "tok", "llama-bpe", 0, 1);
  g.write(d / "v.gguf");
  auto r = run({"convert", (d / "v.gguf").string(), (d / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto m = bs::read_manifest(d / "out");
  EXPECT_EQ(m.tokenizer["file"], "tokenizer.json");
  EXPECT_EQ(m.tokenizer["vocabSize"], 700);
  EXPECT_EQ(m.model_config().vocab, 700);
  auto a = bs::tok::Tokenizer::from_dir(d / "tok"), b = bs::tok::Tokenizer::from_dir(d / "out");
  for (std::string text : {"Hello world", "  The 12345 quick\n\nbrown fox's tail, isn't it?",
                           "h\u00e9llo \u4e16\u754c \U0001F600", "<|bos|>inline<|eos|> specials<|start|>",
                           "tabs\tand   spaces  ", ""}) {
    for (bool special : {false, true}) EXPECT_EQ(b.encode(text, special), a.encode(text, special)) << text;
    EXPECT_EQ(b.decode(a.encode(text, false)), text);
  }
  EXPECT_EQ(b.bos_token(), "<|bos|>");
  EXPECT_EQ(b.eos_token(), "<|eos|>");
  nlohmann::ordered_json msgs = {{{"role", "user"}, {"content", "Hi"}}};
  EXPECT_EQ(b.apply_chat_template(msgs, true), a.apply_chat_template(msgs, true));

  // A WordPiece vocabulary is not converted: the weights are, and the manifest and stderr say why.
  TinyGguf spm;
  spm.set("tokenizer.ggml.model", Value::str("bert"));
  spm.write(d / "spm.gguf");
  r = run({"convert", (d / "spm.gguf").string(), (d / "out2").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tokenizer.ggml.model 'bert' is not converted"), std::string::npos) << r.err;
  EXPECT_TRUE(bs::read_manifest(d / "out2").tokenizer.is_null());
  // A malformed vocabulary fails the import, naming the field.
  g.set("tokenizer.ggml.merges", Value::str_array({"nospace"}));
  g.write(d / "m.gguf");
  r = run({"convert", (d / "m.gguf").string(), (d / "out3").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("'tokenizer.ggml.merges[0]': expected \"left right\", got 'nospace'"),
            std::string::npos)
      << r.err;
  g.set("tokenizer.ggml.merges", Value::str_array({}));
  g.set("tokenizer.ggml.token_type", Value::i32_array({1, 2}));
  g.write(d / "t.gguf");
  r = run({"convert", (d / "t.gguf").string(), (d / "out3").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("'tokenizer.ggml.token_type': expected 700 integers"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "out3"));
}

// With ../shared: LFM2.5's real tokenizer.json, as llama.cpp writes it (pre "lfm2"), comes back
// encoding text and its chat markers to the same ids.
TEST(GgufImport, Lfm25VocabularyRoundTrip) {
  BS_REQUIRE_SHARED();
  fs::path dir = bs::testing::shared_dir() / "data/doppler/lfm2-5-1-2b-instruct-q4k-ehf16-af32";
  if (!fs::exists(dir / "tokenizer.json")) GTEST_SKIP() << dir << " has no tokenizer.json";
  TempDir d;
  TinyGguf g;
  add_vocabulary(g, dir, "lfm2", 1, 7);
  g.write(d / "lfm.gguf");
  auto r = run({"convert", (d / "lfm.gguf").string(), (d / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = bs::tok::Tokenizer::from_file(dir / "tokenizer.json"), b = bs::tok::Tokenizer::from_dir(d / "out");
  size_t n = 0;
  for (std::string text :
       {"Hello world", "<|startoftext|><|im_start|>user\nWhat is 12345 + 678?<|im_end|>\n",
        "  d\u00e9j\u00e0 vu \u4e16\u754c\t\n\n  x", "<think>plan</think>answer", "isn't it's"}) {
    for (bool special : {false, true}) EXPECT_EQ(b.encode(text, special), a.encode(text, special)) << text;
    n += a.encode(text, false).size();
  }
  EXPECT_GT(n, 20u);
}

// Each broken GGUF: exit 3, the file and the field or tensor named, no OUT_DIR and no partial left.
TEST(GgufImport, MalformedGgufsAreClearErrors) {
  TempDir d;
  int n = 0;
  auto expect_error = [&](const TinyGguf& g, const std::string& what) {
    fs::path file = d / ("bad" + std::to_string(n++) + ".gguf"), out = d / "out";
    g.write(file);
    auto r = run({"convert", file.string(), out.string()});
    EXPECT_EQ(r.exit_code, 3) << what << ": " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file.filename().string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    for (const auto& e : fs::directory_iterator(d.path))
      EXPECT_EQ(e.path().filename().string().find(".out.partial"), std::string::npos) << e.path();
  };
  TinyGguf g;
  g.drop("llama.block_count");
  expect_error(g, "metadata 'llama.block_count' is missing");
  g = {};
  g.set("llama.embedding_length", Value::str("64"));
  expect_error(g, "metadata 'llama.embedding_length': expected a non-negative integer, got the string '64'");
  g = {};
  g.set("general.architecture", Value::str("mamba"));
  expect_error(g, "general.architecture 'mamba'");
  g = {};
  g.drop("general.architecture");
  expect_error(g, "'general.architecture' is missing");
  g = {};
  g.set("llama.rope.scaling.type", Value::str("yarn"));
  expect_error(g, "rope.scaling.type': 'yarn'");
  g = {};
  g.set("llama.rope.dimension_count", Value::u32(16));
  expect_error(g, "rope.dimension_count': expected 32");
  g = {};
  g.set("llama.embedding_length", Value::u32(128));
  expect_error(
      g, "tensor 'token_embd.weight': expected ne [128, vocab] (llama.embedding_length), got ne [64,80]");
  g = {};
  g.set("llama.block_count", Value::u32(1u << 29));
  expect_error(g, "metadata 'llama.block_count' 536870912: the file has only 11 tensors");
  g = {};
  g.tensors.push_back({"blk.0.attn_gate.weight", {64, 64}});
  expect_error(g, "tensor 'blk.0.attn_gate.weight' is not part of a llama model");
  g = {};
  g.tensors.push_back({"blk.1.attn_norm.weight", {64}});  // block_count is 1
  expect_error(g, "tensor 'blk.1.attn_norm.weight'");
  g = {};
  g.tensors.erase(g.tensors.begin() + 3);  // attn_k
  expect_error(g, "no tensor for 'blk.0.attn_k'");
  g = {};
  g.tensors[2].ne = {64, 48};
  expect_error(g, "tensor 'blk.0.attn_q.weight': expected shape [64,64]");
  g = {};
  g.tensors.push_back({"rope_freqs.weight", {16}});
  expect_error(g, "rope_freqs.weight");
  // Not GGUF at all, and a GGUF cut short: the header reader's errors, exit 3.
  std::ofstream(d / "junk.gguf", std::ios::binary) << "GGUF\x03\0\0\0garbage";
  auto r = run({"convert", (d / "junk.gguf").string(), (d / "out").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("junk.gguf"), std::string::npos) << r.err;
}

// A quantized type import does not read (Q8_K exists only for ggml's dot products; the IQ types are in
// test_gguf_dequant.cpp): exit 3 naming the tensor and the type.
TEST(GgufImport, UnsupportedTypeNamesTensorAndType) {
  TempDir d;
  TinyGguf g;
  g.set("llama.embedding_length", Value::u32(256));
  g.set("llama.attention.head_count", Value::u32(8));
  g.set("llama.attention.head_count_kv", Value::u32(4));
  g.tensors = {{"token_embd.weight", {256, 80}},    {"blk.0.attn_norm.weight", {256}},
               {"blk.0.attn_q.weight", {256, 256}}, {"blk.0.attn_k.weight", {256, 128}},
               {"blk.0.attn_v.weight", {256, 128}}, {"blk.0.attn_output.weight", {256, 256}},
               {"blk.0.ffn_norm.weight", {256}},    {"blk.0.ffn_gate.weight", {256, 96}, GgmlType::Q8_K},
               {"blk.0.ffn_up.weight", {256, 96}},  {"blk.0.ffn_down.weight", {96, 256}},
               {"output_norm.weight", {256}}};
  g.write(d / "q8k.gguf");
  auto r = run({"convert", (d / "q8k.gguf").string(), (d / "out").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("tensor 'blk.0.ffn_gate.weight': type Q8_K is not imported"), std::string::npos)
      << r.err;
}

// The fuzz target (header parser, then the import's plan) on mutations of an importable file.
TEST(GgufImport, FuzzMutationsOfAnImportableFile) {
  TempDir d;
  bs::tok::write_builtin_tokenizer(d / "tok", 300);
  TinyGguf g;
  add_vocabulary(g, d / "tok", "llama-bpe", 0, 1);
  g.write(d / "t.gguf");
  const std::vector<uint8_t> good = bs::testing::file_bytes(d / "t.gguf");
  auto h = read_header((d / "t.gguf").string());
  EXPECT_NO_THROW(bs::plan_gguf_import(h, "t.gguf"));
  std::string why;
  EXPECT_TRUE(bs::gguf_tokenizer(h, "t.gguf", why)) << why;
  std::mt19937_64 r(4242);
  const size_t header = size_t(h.data_offset);
  const uint32_t words[] = {0, 1, 2, 3, 8, 12, 14, 30, 0xFFFFFFFFu, 256};
  bs::testing::fuzz_mutations(good, header, words, r, 3000);  // the header is what the plan reads
}

}  // namespace
