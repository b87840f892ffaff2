// Converted models read back exactly, within stated error for quantized modes, and every kind of
// corruption RDRR.md lists fails verify and load with a message naming the shard or field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "rdrr/manifest.h"
#include "rdrr/quant.h"
#include "rdrr/safetensors.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/rdrr/fixture.h"

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::map<std::string, std::vector<std::byte>> load_all(const Manifest& m, const fs::path& dir, int threads = 2) {
  std::map<std::string, std::vector<std::byte>> out;
  LoadOptions o;
  o.threads = threads;
  load_tensors(m, dir, o, [&](const TensorEntry& t, std::span<const std::byte> b) {
    EXPECT_EQ(b.size(), t.size) << t.name;
    EXPECT_TRUE(out.emplace(t.name, std::vector<std::byte>(b.begin(), b.end())).second) << t.name;
  });
  return out;
}

std::vector<float> source_values(const SafeTensor& t) {
  std::vector<float> v(t.elements());
  dequantize_row(t.dtype, t.data.data(), v.data(), int64_t(v.size()));
  return v;
}

// Expects `fn` to throw bs::Error of `kind` whose message contains every needle.
template <class Fn>
void expect_error(Fn fn, ErrorKind kind, std::vector<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning " << needles[0];
  } catch (const Error& e) {
    EXPECT_EQ(int(e.kind()), int(kind)) << e.what();
    for (auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what() << "\n  missing: " << n;
  }
}

void flip_byte(const fs::path& p, uint64_t at) {
  std::string s = read_file(p);
  s[at % s.size()] ^= 0x5a;
  write_file(p, s);
}

}  // namespace

TEST(ModelFiles, F16RoundTripIsBitExact) {
  TempDir dir;
  for (std::string arch : {"llama", "qwen2", "gemma3_text"}) {
    fs::path hf = make_checkpoint(dir.path / arch, tiny_config(arch));
    for (bool compress : {true, false}) {
      fs::path out = dir.path / arch / (compress ? "rdrr" : "rdrr-plain");
      ConvertResult r = convert_small(hf, out, QuantMode::f16, 32 << 10, compress);
      EXPECT_GT(r.manifest.shards.size(), 3u);
      EXPECT_TRUE(verify_shards(r.manifest, out, {}).empty());
      Checkpoint ck(hf);
      auto loaded = load_all(r.manifest, out);
      size_t spanning = 0;
      for (auto& t : r.manifest.tensors) {
        const SafeTensor* src = ck.find(t.name);
        ASSERT_NE(src, nullptr) << t.name;
        spanning += t.spans.size() > 1;
        auto vals = source_values(*src);
        const auto& got = loaded.at(t.name);
        if (src->shape.size() == 1) {
          ASSERT_EQ(t.dtype, DType::F32) << t.name;
          ASSERT_EQ(0, std::memcmp(got.data(), vals.data(), got.size())) << t.name;
        } else {
          ASSERT_EQ(t.dtype, DType::F16) << t.name;
          for (size_t i = 0; i < vals.size(); ++i) {
            uint16_t h;
            std::memcpy(&h, got.data() + 2 * i, 2);
            ASSERT_EQ(h, float_to_half(vals[i])) << t.name << " [" << i << "]";
          }
        }
      }
      EXPECT_GT(spanning, 0u) << "the test should cover tensors crossing shards";
      EXPECT_EQ(r.manifest.model_config().arch, arch);
    }
  }
}

// LoadOptions::in_parts: the tensors it accepts arrive span by span at their offsets (each byte once, the same
// bytes as assembled); the rest, and every single-span tensor, as before.
TEST(ModelFiles, TensorsInPartsMatchAssembled) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path / "llama", tiny_config("llama"));
  for (bool compress : {true, false}) {
    fs::path out = dir.path / (compress ? "rdrr" : "rdrr-plain");
    ConvertResult r = convert_small(hf, out, QuantMode::f16, 32 << 10, compress);
    auto whole = load_all(r.manifest, out);
    std::map<std::string, std::vector<std::byte>> got;
    std::map<std::string, std::vector<int>> written;  // times each byte arrived
    size_t asked = 0, split = 0;
    LoadOptions o;
    o.threads = 2;
    o.in_parts = [&](const TensorEntry& t) {
      ++asked;
      EXPECT_GT(t.spans.size(), 1u) << t.name;  // asked only of tensors in several spans
      return t.shape.size() == 2;
    };
    o.part_sink = [&](const TensorEntry& t, uint64_t at, std::span<const std::byte> b) {
      auto& g = got[t.name];
      auto& w = written[t.name];
      if (g.empty()) g.resize(t.size), w.resize(t.size);
      ASSERT_LE(at + b.size(), t.size) << t.name;
      std::copy(b.begin(), b.end(), g.begin() + ptrdiff_t(at));
      for (uint64_t i = 0; i < b.size(); ++i) ++w[at + i];
    };
    load_tensors(r.manifest, out, o, [&](const TensorEntry& t, std::span<const std::byte> b) {
      EXPECT_TRUE(got.emplace(t.name, std::vector<std::byte>(b.begin(), b.end())).second) << t.name;
      if (t.spans.size() > 1) ++split;  // declined: assembled
    });
    EXPECT_GT(asked, split) << "some tensor should arrive in parts";
    EXPECT_EQ(got, whole);
    for (auto& [name, w] : written)
      EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](int n) { return n == 1; })) << name;
  }
}

TEST(ModelFiles, QuantizedRoundTripWithinBounds) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama", 256, 8));
  Checkpoint ck(hf);
  for (QuantMode q : {QuantMode::q8_0, QuantMode::q4_k_m}) {
    fs::path out = dir.path / (q == QuantMode::q8_0 ? "q8" : "q4");
    ConvertResult r = convert_small(hf, out, q, 256 << 10);
    auto loaded = load_all(r.manifest, out);
    std::map<DType, double> worst;
    for (auto& t : r.manifest.tensors) {
      auto ref = source_values(*ck.find(t.name));
      std::vector<float> got(ref.size());
      dequantize_row(t.dtype, loaded.at(t.name).data(), got.data(), int64_t(got.size()));
      std::vector<double> refd(ref.begin(), ref.end());
      double e = nmse(got, refd);
      worst[t.dtype] = std::max(worst[t.dtype], e);
    }
    // NMSE bounds per stored type (relative RMSE squared, with margin over test_quant's figures).
    std::map<DType, double> bound = {{DType::F32, 0}, {DType::Q8_0, 4e-5}, {DType::Q6_K, 5e-4}, {DType::Q4_K, 8e-3}};
    for (auto& [dt, e] : worst) {
      std::printf("%s: worst tensor NMSE %s %.2e\n", q == QuantMode::q8_0 ? "q8_0" : "q4_k_m", dtype_name(dt).data(), e);
      EXPECT_LE(e, bound.at(dt)) << dtype_name(dt);
    }
    if (q == QuantMode::q4_k_m) {
      EXPECT_EQ(r.manifest.find("embed")->dtype, DType::Q6_K);
      EXPECT_EQ(r.manifest.find("output")->dtype, DType::Q6_K);
      EXPECT_EQ(r.manifest.find("blk.0.attn_v")->dtype, DType::Q6_K);   // first eighth
      EXPECT_EQ(r.manifest.find("blk.7.ffn_down")->dtype, DType::Q6_K); // last eighth
      EXPECT_EQ(r.manifest.find("blk.3.ffn_down")->dtype, DType::Q6_K); // (3 - 1) % 3 == 2
      EXPECT_EQ(r.manifest.find("blk.2.ffn_down")->dtype, DType::Q4_K);
      EXPECT_EQ(r.manifest.find("blk.2.attn_q")->dtype, DType::Q4_K);
      EXPECT_EQ(r.manifest.find("blk.2.attn_norm")->dtype, DType::F32);
    }
  }
}

TEST(ModelFiles, RowLengthFallbacksAreRecorded) {
  TempDir dir;
  json c = tiny_config("llama", 96, 1);  // K = 96: not whole Q4_K blocks, whole Q8_0 blocks
  c["intermediate_size"] = 512;
  fs::path hf = make_checkpoint(dir.path, c);
  ConvertResult r = convert_small(hf, dir.path / "out", QuantMode::q4_k_m);
  const TensorEntry* q = r.manifest.find("blk.0.attn_q");
  EXPECT_EQ(q->dtype, DType::Q8_0);
  EXPECT_EQ(q->requested_dtype, "Q4_K");
  EXPECT_NE(q->fallback.find("96"), std::string::npos);
  EXPECT_EQ(r.manifest.find("blk.0.ffn_down")->dtype, DType::Q6_K);  // K = 512
  EXPECT_TRUE(r.manifest.find("blk.0.ffn_down")->fallback.empty());
  std::string text = read_file(dir.path / "out/manifest.json");
  EXPECT_NE(text.find("\"fallback\""), std::string::npos);
}

class Corruption : public ::testing::Test {
 protected:
  void SetUp() override {
    hf = make_checkpoint(dir.path, tiny_config("qwen2"));
    model = dir.path / "model";
    manifest = convert_small(hf, model, QuantMode::f16).manifest;
    ASSERT_GE(manifest.shards.size(), 4u);
    pristine = dir.path / "pristine";
    fs::copy(model, pristine);
  }
  void restore() {
    fs::remove_all(model);
    fs::copy(pristine, model);
  }
  // verify names exactly this shard, and loading fails naming it.
  void expect_only_bad(size_t i, const std::string& check) {
    auto problems = verify_shards(manifest, model, {});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].index, i);
    EXPECT_EQ(problems[0].check, check) << problems[0].message;
    EXPECT_NE(problems[0].message.find(manifest.shards[i].filename), std::string::npos) << problems[0].message;
    expect_error([&] { load_all(manifest, model); }, ErrorKind::integrity, {manifest.shards[i].filename, check});
  }
  TempDir dir;
  fs::path hf, model, pristine;
  Manifest manifest;
};

TEST_F(Corruption, FlippedByteInEachShard) {
  for (size_t i = 0; i < manifest.shards.size(); ++i) {
    flip_byte(model / manifest.shards[i].filename, rng()());
    expect_only_bad(i, "storedHash");
    restore();
  }
  EXPECT_TRUE(verify_shards(manifest, model, {}).empty());
}

TEST_F(Corruption, TruncatedShards) {
  for (size_t i : {size_t(0), manifest.shards.size() / 2, manifest.shards.size() - 1}) {
    const auto& s = manifest.shards[i];
    for (uint64_t len : {uint64_t(0), uint64_t(1), s.stored_size / 2, s.stored_size - 1}) {
      fs::resize_file(model / s.filename, len);
      expect_only_bad(i, "size");
      restore();
    }
    std::string grown = read_file(model / s.filename) + "x";  // longer than declared
    write_file(model / s.filename, grown);
    expect_only_bad(i, "size");
    restore();
  }
}

TEST_F(Corruption, MissingShard) {
  fs::remove(model / manifest.shards[1].filename);
  expect_only_bad(1, "missing");
}

TEST_F(Corruption, RawHashAndFrameSizeMismatch) {
  // The stored file is intact but the manifest's raw hash is wrong: caught after decompression.
  json j = json::parse(read_file(model / "manifest.json"));
  j["shards"][2]["hash"] = std::string(64, 'a');
  Manifest m = parse_manifest(j.dump(), "manifest.json");
  auto problems = verify_shards(m, model, {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].check, "hash");
  EXPECT_TRUE(verify_shards(m, model, {}, /*decompress=*/false).empty());  // --quick checks files only
  expect_error([&] { load_all(m, model); }, ErrorKind::integrity, {m.shards[2].filename, "hash"});
  // A shard file swapped for another valid zstd file whose frame decodes to a different size.
  fs::copy_file(model / manifest.shards.back().filename, model / manifest.shards[0].filename,
                fs::copy_options::overwrite_existing);
  j = json::parse(read_file(model / "manifest.json"));
  j["shards"][0]["storedSize"] = manifest.shards.back().stored_size;
  j["shards"][0]["storedHash"] = manifest.shards.back().stored_hash;
  m = parse_manifest(j.dump(), "manifest.json");
  problems = verify_shards(m, model, {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].check, "rawSize") << problems[0].message;
}

TEST_F(Corruption, BadManifestFields) {
  const json good = json::parse(read_file(model / "manifest.json"));
  std::string some = good["tensors"].begin().key();
  struct Case { std::function<void(json&)> edit; std::vector<std::string> needles; };
  std::vector<Case> cases = {
      {[](json& j) { j["version"] = 2; }, {"version", "expected 1, got 2"}},
      {[](json& j) { j.erase("version"); }, {"version"}},
      {[](json& j) { j["shards"][1]["filename"] = "../shard_00001.bin.zst"; }, {"shards[1].filename", "../"}},
      {[](json& j) { j["shards"][1]["filename"] = "/etc/passwd"; }, {"shards[1].filename", "plain file name"}},
      {[](json& j) { j["shards"][1]["index"] = 5; }, {"shards[1].index", "expected 1, got 5"}},
      {[](json& j) { j["shards"][1]["offset"] = 3; }, {"shards[1].offset"}},
      {[](json& j) { j["shards"][0]["hash"] = "xyz"; }, {"shards[0].hash", "hex"}},
      {[](json& j) { j["shards"][0]["compression"] = "lz4"; }, {"shards[0].compression", "lz4"}},
      {[](json& j) { j["hashAlgorithm"] = "md5"; }, {"hashAlgorithm", "md5"}},
      {[&](json& j) {
         auto& t = j["tensors"]["model.layers.0.self_attn.q_proj.weight"];
         t["offset"] = j["shards"][t["shard"].get<int>()]["size"].get<uint64_t>() - 8;
       }, {"model.layers.0.self_attn.q_proj.weight", "leave shard"}},
      {[](json& j) { j["tensors"]["model.embed_tokens.weight"]["spans"][0]["shardIndex"] = 999; },
       {"model.embed_tokens.weight", "shard 999 does not exist"}},
      {[](json& j) { j["tensors"]["model.norm.weight"]["dtype"] = "F16"; }, {"model.norm.weight", "size", "needs"}},
      {[](json& j) { j["tensors"]["model.norm.weight"]["shape"] = {7}; }, {"model.norm.weight", "needs"}},
      {[](json& j) { j["tensors"]["model.norm.weight"]["dtype"] = "Q9"; }, {"model.norm.weight", "Q9"}},
      {[](json& j) { j["tensors"]["model.norm.weight"]["offset"] = 18446744073709551615ull; },
       {"model.norm.weight", "leave shard"}},
      {[](json& j) { j["tensors"]["model.norm.weight"]["shape"] = {4611686018427387904ull, 4}; },
       {"model.norm.weight", "overflows"}},
      {[](json& j) { j["tensors"]["model.norm.weight"]["layout"] = "col"; }, {"model.norm.weight", "col", "transposed Q4_K"}},
      {[&](json& j) {
         auto& a = j["tensors"]["model.layers.0.self_attn.k_proj.bias"];
         auto& b = j["tensors"]["model.layers.0.self_attn.v_proj.bias"];
         b["shard"] = a["shard"];
         b["offset"] = a["offset"];
       }, {"overlap"}},
      {[](json& j) { j["tensors"]["model.embed_tokens.weight"]["spans"][0]["size"] = 4; }, {"model.embed_tokens.weight"}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    json j = good;
    cases[i].edit(j);
    SCOPED_TRACE("case " + std::to_string(i));
    write_file(model / "manifest.json", j.dump(1));
    expect_error([&] { read_manifest(model); }, ErrorKind::input, cases[i].needles);
    auto r = run_blueshift({"verify", model.string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("manifest.json"), std::string::npos) << r.err;
  }
  // Duplicate tensor keys are caught although JSON parsers usually keep the last.
  std::string text = good.dump();
  std::string norm = "\"model.norm.weight\":" + good["tensors"]["model.norm.weight"].dump();
  text.insert(text.find("\"tensors\":{") + 11, norm + ",");
  expect_error([&] { parse_manifest(text, "manifest.json"); }, ErrorKind::input, {"model.norm.weight", "twice"});
}

// Shards where zstd saves under min_saving are written plain: Q4_K nibbles are near random (zstd saves
// 1-2% and costs the reader a decode and a second hash), f16 weights are not. The model's identity
// (raw size and hash per shard) does not depend on it, and a model of mixed shards verifies and loads.
TEST(ModelFiles, ShardsZstdBarelyShrinksAreWrittenPlain) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama"));
  for (QuantMode q : {QuantMode::f16, QuantMode::q4_k_m}) {
    std::string name = q == QuantMode::f16 ? "f16" : "q4_k_m";
    ConvertResult every = convert_small(hf, dir.path / (name + "-zstd"), q);  // min_saving 0
    const double min_saving = ShardWriterOptions{}.min_saving;  // the default
    ASSERT_EQ(min_saving, 0.05);
    fs::path out = dir.path / name;
    ConvertResult r = convert_small(hf, out, q, 32 << 10, true, min_saving);
    ASSERT_EQ(r.manifest.shards.size(), every.manifest.shards.size());
    size_t plain = 0;
    for (size_t i = 0; i < r.manifest.shards.size(); ++i) {
      const ShardInfo &s = r.manifest.shards[i], &z = every.manifest.shards[i];
      EXPECT_EQ(s.size, z.size) << s.filename;
      EXPECT_EQ(s.hash, z.hash) << s.filename;
      // min_saving 0 still stores plain a shard whose frame would be larger than its raw bytes.
      double saving = z.compressed ? 1.0 - double(z.stored_size) / double(z.size) : -1.0;
      EXPECT_EQ(s.compressed, saving >= 0.05) << s.filename << " saves " << saving;
      EXPECT_EQ(s.filename, fmt::format("shard_{:05d}.bin{}", i, s.compressed ? ".zst" : ""));
      plain += !s.compressed;
    }
    std::printf("%s: %zu of %zu shards plain\n", name.c_str(), plain, r.manifest.shards.size());
    if (q == QuantMode::q4_k_m) {
      EXPECT_GT(plain, 0u);
    } else {
      EXPECT_LT(plain, r.manifest.shards.size());
    }
    EXPECT_TRUE(verify_shards(r.manifest, out, {}).empty());
    auto a = load_all(r.manifest, out), b = load_all(every.manifest, dir.path / (name + "-zstd"));
    EXPECT_TRUE(a == b);
  }
}

TEST(ModelFiles, ConvertRejectsBadCheckpoints) {
  TempDir dir;
  json c = tiny_config("llama");
  fs::path hf = make_checkpoint(dir.path, c);
  // A config whose sizes disagree with the tensors.
  json wrong = c;
  wrong["intermediate_size"] = 512;
  write_file(hf / "config.json", wrong.dump());
  expect_error([&] { convert_small(hf, dir.path / "o1", QuantMode::f16); }, ErrorKind::input,
               {"mlp.gate_proj.weight", "expected shape [512,128]"});
  write_file(hf / "config.json", c.dump());
  EXPECT_FALSE(fs::exists(dir.path / "o1"));
  // Existing output needs --force.
  fs::create_directories(dir.path / "o2");
  expect_error([&] { convert_small(hf, dir.path / "o2", QuantMode::f16); }, ErrorKind::usage, {"--force"});
  ConvertOptions o;
  o.force = true;
  o.quant = QuantMode::f16;
  convert_model(hf, dir.path / "o2", o);
  EXPECT_TRUE(fs::exists(dir.path / "o2/manifest.json"));
  // No temporary directories left behind.
  for (auto& e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
}

TEST(ModelFiles, SharedTinyModelsConvertAndLoad) {
  BS_REQUIRE_SHARED();
  TempDir dir;
  for (auto name : {"llama-tiny", "qwen3-tiny", "gemma3-tiny"}) {
    fs::path hf = shared_dir() / "data/models" / name;
    ConvertResult r = convert_small(hf, dir.path / name, QuantMode::f16, 1 << 20);
    Checkpoint ck(hf);
    EXPECT_EQ(r.manifest.tensors.size(), ck.tensors().size()) << name;
    auto loaded = load_all(r.manifest, dir.path / name);
    EXPECT_EQ(loaded.size(), ck.tensors().size());
    const ModelConfig& c = r.manifest.model_config();
    EXPECT_EQ(c.vocab, 1024);
    if (std::string(name) == "gemma3-tiny") {
      EXPECT_TRUE(c.norm_offset && c.sandwich_norm);
      EXPECT_EQ(r.manifest.find("blk.0.attn_post_norm")->name, "model.layers.0.post_attention_layernorm.weight");
      EXPECT_EQ(r.manifest.find("blk.0.ffn_norm")->name, "model.layers.0.pre_feedforward_layernorm.weight");
    }
  }
}
