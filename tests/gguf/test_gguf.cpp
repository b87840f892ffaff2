// GGUF: the writer's files parse back (metadata, tensor infos, data), the parser rejects malformed
// headers with a clear error and never reads out of bounds, and `blueshift export-gguf` writes a
// Llama RDRR model with llama.cpp's names, dims order, types and q/k row permutation.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "rdrr/gguf.h"
#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"

int fuzz_gguf(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;
using namespace bs::gguf;
using bs::testing::TempDir;

std::vector<std::byte> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

std::vector<std::byte> random_bytes(size_t n) {
  std::vector<std::byte> b(n);
  for (auto& x : b) x = std::byte(bs::testing::rng()());
  return b;
}

// A small file with every kind of metadata value and tensors of three types; returns its data.
std::vector<std::vector<std::byte>> write_sample(const fs::path& file) {
  Writer w(file.string());
  w.add("general.architecture", Value::str("llama"));
  w.add("llama.block_count", Value::u32(3));
  w.add("big", Value::u64(1ull << 40));
  w.add("neg", Value::i32(-7));
  w.add("eps", Value::f32(1e-5f));
  w.add("flag", Value::boolean(true));
  w.add("words", Value::str_array({"a", "", "\xc4\x8a"}));
  w.add("ints", Value::i32_array({1, -2, 3}));
  w.add("floats", Value::f32_array({0.5, -1.25}));
  w.add("empty", Value::str_array({}));
  w.add_tensor("norm", {7}, GgmlType::F32);                // 28 bytes: the next offset must be padded
  w.add_tensor("q8", {64, 3}, GgmlType::Q8_0);             // 3 rows of 2 blocks
  w.add_tensor("q4k", {256, 2, 1}, GgmlType::Q4_K);
  std::vector<std::vector<std::byte>> data = {random_bytes(28), random_bytes(3 * 2 * 34), random_bytes(2 * 144)};
  w.write_header();
  for (const auto& d : data) w.write_tensor(d);
  uint64_t size = w.finish();
  EXPECT_EQ(size, fs::file_size(file));
  return data;
}

TEST(Gguf, WrittenFileParsesBack) {
  TempDir d;
  auto data = write_sample(d / "a.gguf");
  auto h = read_header((d / "a.gguf").string());
  auto bytes = read_file(d / "a.gguf");
  EXPECT_EQ(std::memcmp(bytes.data(), "GGUF", 4), 0);
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.alignment, 32u);
  EXPECT_EQ(h.data_offset % 32, 0u);
  ASSERT_EQ(h.metadata.size(), 10u);
  EXPECT_EQ(*h.find("general.architecture")->as_string(), "llama");
  EXPECT_EQ(h.find("llama.block_count")->type, ValueType::u32);
  EXPECT_EQ(h.find("llama.block_count")->as_uint(), 3u);
  EXPECT_EQ(h.find("big")->as_uint(), 1ull << 40);
  EXPECT_EQ(h.find("neg")->as_int(), -7);
  EXPECT_FLOAT_EQ(float(*h.find("eps")->as_float()), 1e-5f);
  EXPECT_EQ(h.find("flag")->type, ValueType::boolean);
  EXPECT_EQ(h.find("flag")->as_uint(), 1u);
  EXPECT_EQ(std::get<std::vector<std::string>>(h.find("words")->v), (std::vector<std::string>{"a", "", "\xc4\x8a"}));
  EXPECT_EQ(h.find("ints")->elem, ValueType::i32);
  EXPECT_EQ(std::get<std::vector<int64_t>>(h.find("ints")->v), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(std::get<std::vector<double>>(h.find("floats")->v), (std::vector<double>{0.5, -1.25}));
  EXPECT_TRUE(std::get<std::vector<std::string>>(h.find("empty")->v).empty());
  ASSERT_EQ(h.tensors.size(), 3u);
  const char* names[] = {"norm", "q8", "q4k"};
  for (size_t i = 0; i < 3; ++i) {
    const auto& t = h.tensors[i];
    EXPECT_EQ(t.name, names[i]);
    EXPECT_EQ(t.offset % 32, 0u) << t.name;
    ASSERT_EQ(t.size, data[i].size()) << t.name;
    EXPECT_EQ(std::memcmp(bytes.data() + h.data_offset + t.offset, data[i].data(), t.size), 0) << t.name;
  }
  EXPECT_EQ(h.tensors[1].ne, (std::vector<uint64_t>{64, 3}));
  EXPECT_EQ(h.tensors[2].type, GgmlType::Q4_K);
  EXPECT_EQ(h.tensors[1].offset, 32u);  // 28 bytes of "norm", padded
  // The same bytes through parse_header, and a prefix that stops inside the header is an error.
  EXPECT_EQ(parse_header(bytes, bytes.size(), "a").tensors.size(), 3u);
  EXPECT_THROW(parse_header(std::span(bytes).first(100), bytes.size(), "a"), bs::Error);
}

TEST(Gguf, TypeTablesMatchBlueshiftDTypes) {
  for (auto [d, g] : {std::pair{bs::DType::Q4_K, GgmlType::Q4_K}, {bs::DType::Q6_K, GgmlType::Q6_K},
                      {bs::DType::Q8_0, GgmlType::Q8_0}, {bs::DType::F16, GgmlType::F16}, {bs::DType::F32, GgmlType::F32}}) {
    EXPECT_EQ(ggml_type_of(d), g);
    EXPECT_EQ(dtype_of(g), d);
    EXPECT_EQ(ggml_traits(g)->block_bytes, bs::traits(d).block_bytes);
    EXPECT_EQ(ggml_traits(g)->block_elems, bs::traits(d).block_elems);
  }
  EXPECT_FALSE(ggml_traits(GgmlType(4)));  // Q4_2, removed from ggml
  uint64_t ne[] = {100, 2};
  EXPECT_FALSE(tensor_bytes(GgmlType::Q4_K, ne));  // not whole blocks
}

// Malformed headers: each names the problem; none crashes.
TEST(Gguf, MalformedHeadersAreClearErrors) {
  TempDir d;
  write_sample(d / "a.gguf");
  const auto good = read_file(d / "a.gguf");
  auto expect_error = [](std::vector<std::byte> b, const std::string& what) {
    try {
      parse_header(b, b.size(), "x.gguf");
      ADD_FAILURE() << "accepted: " << what;
    } catch (const bs::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("x.gguf"), std::string::npos) << e.what();
    }
  };
  auto patch = [&](size_t at, auto v) {
    auto b = good;
    std::memcpy(b.data() + at, &v, sizeof(v));
    return b;
  };
  expect_error(patch(0, uint32_t(0x46554746)), "not a GGUF file");
  expect_error(patch(4, uint32_t(4)), "version 4");
  expect_error(patch(8, uint64_t(1) << 60), "tensor count");
  expect_error(patch(16, uint64_t(1) << 60), "metadata count");
  // The first key ("general.architecture", 20 bytes) is at 24; its value type at 52.
  expect_error(patch(52, uint32_t(13)), "value type 13");
  expect_error(patch(24, uint64_t(1) << 62), "truncated");
  // Tensor infos: find "q8"'s record and break its fields.
  auto at = [&](const char* name) {
    std::string s(reinterpret_cast<const char*>(good.data()), good.size());
    return s.find(std::string("\x02\0\0\0\0\0\0\0", 8) + name);
  };
  size_t q8 = at("q8") + 8 + 2;  // n_dims
  expect_error(patch(q8, uint32_t(0)), "n_dims 0");
  expect_error(patch(q8, uint32_t(5)), "n_dims 5");
  expect_error(patch(q8 + 4, uint64_t(33)), "not a whole number");
  expect_error(patch(q8 + 4 + 16, uint32_t(99)), "ggml type 99");
  expect_error(patch(q8 + 4 + 16 + 4, uint64_t(8)), "not a multiple of the alignment");
  expect_error(patch(q8 + 4 + 16 + 4, uint64_t(1) << 40), "past the end of the file");
  expect_error(patch(q8 + 4 + 8, uint64_t(1) << 61), "overflows");  // 2^61 rows of 68 bytes
  // Data cut short: the last tensor ends past the file.
  auto cut = good;
  cut.resize(cut.size() - 40);
  expect_error(cut, "past the end of the file");
  // Every truncation inside the header is an error, never a crash.
  auto h = parse_header(good, good.size(), "x.gguf");
  for (size_t n = 0; n < h.data_offset; ++n) {
    std::vector<std::byte> b(good.begin(), good.begin() + long(n));
    EXPECT_THROW(parse_header(b, b.size(), "x.gguf"), bs::Error) << n;
  }
}

TEST(Gguf, AlignmentKeyIsHonoredAndChecked) {
  TempDir d;
  Writer w((d / "b.gguf").string(), 64);
  w.add_tensor("a", {3}, GgmlType::F32);
  w.add_tensor("b", {3}, GgmlType::F32);
  w.write_header();
  auto x = random_bytes(12);
  w.write_tensor(x);
  w.write_tensor(x);
  w.finish();
  auto h = read_header((d / "b.gguf").string());
  EXPECT_EQ(h.alignment, 64u);
  EXPECT_EQ(h.data_offset % 64, 0u);
  EXPECT_EQ(h.tensors[1].offset, 64u);
  EXPECT_THROW(Writer((d / "c.gguf").string(), 48), bs::Error);
  // A writer that gets the wrong bytes or too few tensors says so.
  Writer v((d / "d.gguf").string());
  v.add_tensor("a", {4}, GgmlType::F32);
  v.write_header();
  EXPECT_THROW(v.write_tensor(x), bs::Error);
  EXPECT_THROW(v.finish(), bs::Error);
}

TEST(Gguf, FuzzMutations) {
  TempDir d;
  write_sample(d / "a.gguf");
  auto good = read_file(d / "a.gguf");
  std::mt19937_64 r(777);
  for (int i = 0; i < 3000; ++i) {
    auto b = good;
    for (int k = 1 + int(r() % 4); k > 0; --k) {
      size_t at = r() % b.size();
      switch (r() % 4) {
        case 0: b[at] ^= std::byte(1 << (r() % 8)); break;
        case 1: b[at] = std::byte(r()); break;
        case 2: b.resize(at); break;
        default: {  // an interesting integer over 8 bytes
          uint64_t v[] = {0, 1, 31, 32, 33, 255, 1ull << 32, ~0ull, 1ull << 63};
          if (at + 8 <= b.size()) std::memcpy(b.data() + at, &v[r() % std::size(v)], 8);
        }
      }
      if (b.empty()) break;
    }
    fuzz_gguf(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  }
}

// export-gguf on a synthesized tiny Llama: llama.cpp's names, reversed dims, the same block bytes,
// q/k rows permuted per head (HF halves -> llama.cpp pairs), metadata from the config.
TEST(Gguf, ExportWritesLlamaCppLayout) {
  TempDir d;
  auto r = bs::testing::synth_into(d.path, bs::testing::tiny_llama_config());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* quant : {"q4_k_m", "f16"}) {
    auto model = d / (std::string("m_") + quant);
    r = bs::testing::run_blueshift({"convert", (d / "hf").string(), model.string(), "--quant", quant});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto out = d / (std::string(quant) + ".gguf");
    r = bs::testing::run_blueshift({"export-gguf", "--model", model.string(), "--out", out.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto h = read_header(out.string());
    auto bytes = read_file(out);
    EXPECT_EQ(*h.find("general.architecture")->as_string(), "llama");
    EXPECT_EQ(h.find("llama.block_count")->as_uint(), 2u);
    EXPECT_EQ(h.find("llama.embedding_length")->as_uint(), 128u);
    EXPECT_EQ(h.find("llama.feed_forward_length")->as_uint(), 256u);
    EXPECT_EQ(h.find("llama.attention.head_count")->as_uint(), 4u);
    EXPECT_EQ(h.find("llama.attention.head_count_kv")->as_uint(), 2u);
    EXPECT_EQ(h.find("llama.rope.dimension_count")->as_uint(), 32u);
    EXPECT_EQ(std::get<std::vector<std::string>>(h.find("tokenizer.ggml.tokens")->v).size(), 512u);
    EXPECT_EQ(*h.find("tokenizer.ggml.model")->as_string(), "gpt2");
    EXPECT_FALSE(h.tensor("output.weight"));  // tied: llama.cpp reads token_embd
    for (const char* n : {"token_embd.weight", "output_norm.weight", "blk.1.attn_norm.weight", "blk.1.attn_output.weight",
                          "blk.0.ffn_gate.weight", "blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "blk.0.ffn_norm.weight"})
      EXPECT_TRUE(h.tensor(n)) << n;
    EXPECT_EQ(h.tensor("blk.0.ffn_down.weight")->ne, (std::vector<uint64_t>{256, 128}));  // HF [128, 256]
    // Every tensor's bytes: the RDRR tensor's, q/k rows permuted.
    auto m = bs::read_manifest(model);
    bs::load_tensors(m, model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
      std::string name = t.internal == "embed" ? "token_embd" : t.internal == "blk.0.attn_out" ? "blk.0.attn_output" : t.internal;
      const TensorInfo* g = h.tensor(name + ".weight");
      if (t.internal.find("attn_out") != std::string::npos || !g) return;
      ASSERT_EQ(g->type, *ggml_type_of(t.dtype)) << name;
      ASSERT_EQ(g->size, b.size()) << name;
      const std::byte* gb = bytes.data() + h.data_offset + g->offset;
      bool q = name.ends_with("attn_q"), k = name.ends_with("attn_k");
      if (!q && !k) {
        EXPECT_EQ(std::memcmp(gb, b.data(), b.size()), 0) << name;
        return;
      }
      size_t rows = size_t(t.shape[0]), row = b.size() / rows, hd = 32;
      for (size_t out = 0; out < rows; ++out) {
        size_t head = out / hd, i = out % hd / 2, j = out % 2;
        EXPECT_EQ(std::memcmp(gb + out * row, b.data() + (head * hd + j * hd / 2 + i) * row, row), 0) << name << " row " << out;
      }
    });
  }
}

// A model llama.cpp's llama architecture would compute differently is refused, naming what differs.
TEST(Gguf, ExportRefusesOtherArchitectures) {
  TempDir d;
  auto r = bs::testing::synth_into(d.path, R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
    "hidden_size": 128, "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
    "num_hidden_layers": 1, "head_dim": 32, "vocab_size": 256, "max_position_embeddings": 512, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0, "tie_word_embeddings": true, "hidden_act": "silu"})");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = bs::testing::run_blueshift({"convert", (d / "hf").string(), (d / "m").string(), "--quant", "f16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = bs::testing::run_blueshift({"export-gguf", "--model", (d / "m").string(), "--out", (d / "x.gguf").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("llama architecture, which would compute it differently: it has q/k norms"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "x.gguf"));
}

}  // namespace
