// Manifests as DOPPLER's converter writes them: plain shards packed back to back, tensors crossing
// shards described by spans, fileName/blake3 keys, Q4_K_M row layout, F16/BF16, and the
// architecture/inference blocks instead of x-blueshift.
#include <gtest/gtest.h>

#include <cstring>

#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "sharding/hash.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/rdrr/st_builder.h"

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct DopplerModel {
  json manifest;
  std::map<std::string, std::vector<std::byte>> bytes;  // tensor -> expected bytes
};

// Packs tensors back to back into shards of `shard_size` bytes, DOPPLER's way.
DopplerModel make_doppler(const fs::path& dir, uint64_t shard_size) {
  struct T { std::string name, dtype; std::vector<int64_t> shape; uint64_t size; std::string role, group; };
  std::vector<T> ts = {
      {"model.embed_tokens.weight", "F16", {64, 256}, 64 * 256 * 2, "embedding", "embed"},
      {"model.layers.0.input_layernorm.weight", "F16", {256}, 512, "norm", "layer.0"},
      {"model.layers.0.self_attn.q_proj.weight", "Q4_K_M", {256, 256}, 256 * 144, "matmul", "layer.0"},
      {"model.layers.0.self_attn.k_proj.weight", "BF16", {64, 256}, 64 * 256 * 2, "matmul", "layer.0"},
      {"model.norm.weight", "F32", {256}, 1024, "norm", "head"},
  };
  DopplerModel m;
  std::vector<std::byte> all;
  json tensors = json::object();
  for (auto& t : ts) {
    std::vector<std::byte> b(t.size);
    for (auto& x : b) x = std::byte(rng()() & 0xff);
    uint64_t off = all.size();
    all.insert(all.end(), b.begin(), b.end());
    m.bytes[t.name] = b;
    json e = {{"size", t.size}, {"shape", t.shape}, {"dtype", t.dtype}, {"role", t.role}, {"group", t.group}};
    uint64_t first = off / shard_size, last = (off + t.size - 1) / shard_size;
    if (first == last) {
      e["shard"] = first;
      e["offset"] = off % shard_size;
    } else {
      json spans = json::array();
      for (uint64_t s = first, pos = off; s <= last; ++s) {
        uint64_t end = std::min((s + 1) * shard_size, off + t.size);
        spans.push_back({{"shardIndex", s}, {"offset", pos - s * shard_size}, {"size", end - pos}});
        pos = end;
      }
      e["spans"] = spans;
    }
    tensors[t.name] = e;
  }
  json shards = json::array();
  for (uint64_t s = 0; s * shard_size < all.size(); ++s) {
    uint64_t n = std::min<uint64_t>(shard_size, all.size() - s * shard_size);
    std::span<const std::byte> b(all.data() + s * shard_size, n);
    std::string name = fmt::format("shard_{:05d}.bin", s);
    write_file(dir / name, std::string(reinterpret_cast<const char*>(b.data()), n));
    std::string h = sha256_hex(b);
    shards.push_back({{"index", s}, {"fileName", name}, {"size", n}, {"hash", h}, {"blake3", h}, {"offset", s * shard_size}});
  }
  m.manifest = {
      {"version", 1}, {"modelId", "tiny-doppler"}, {"modelType", "gemma3_text"}, {"quantization", "Q4_K_M"},
      {"hashAlgorithm", "sha256"},
      {"architecture", {{"numLayers", 1}, {"hiddenSize", 256}, {"intermediateSize", 512}, {"numAttentionHeads", 4},
                        {"numKeyValueHeads", 1}, {"headDim", 64}, {"vocabSize", 64}, {"maxSeqLen", 1024}, {"ropeTheta", 1e6}}},
      {"inference", json::parse(R"({
        "attention": {"queryKeyNorm": true, "queryPreAttnScalar": 64, "slidingWindow": 12, "attentionBias": false},
        "normalization": {"rmsNormEps": 1e-06, "rmsNormWeightOffset": true, "postAttentionNorm": true,
                          "preFeedforwardNorm": true, "postFeedforwardNorm": true},
        "ffn": {"activation": "gelu", "gatedActivation": true},
        "rope": {"ropeTheta": 1000000, "ropeLocalTheta": 10000, "ropeScalingType": null, "ropeScalingFactor": 1},
        "output": {"tieWordEmbeddings": true, "scaleEmbeddings": true, "finalLogitSoftcapping": null},
        "layerPattern": {"type": "every_n", "period": 6, "offset": 5},
        "execution": {"kernels": ["whatever DOPPLER keeps here"]}})")},
      {"shards", shards}, {"tensors", tensors}, {"eos_token_id", {1, 50}}, {"totalSize", all.size()}};
  write_file(dir / "manifest.json", m.manifest.dump(2));
  return m;
}

}  // namespace

TEST(Doppler, UncompressedSpansManifestLoads) {
  TempDir dir;
  DopplerModel d = make_doppler(dir.path, 20000);  // small shards: embed and q_proj cross them
  Manifest m = read_manifest(dir.path);
  EXPECT_GE(m.shards.size(), 4u);
  EXPECT_FALSE(m.shards[0].compressed);
  EXPECT_EQ(m.find("model.layers.0.self_attn.q_proj.weight")->dtype, DType::Q4_K);
  EXPECT_GT(m.find("model.embed_tokens.weight")->spans.size(), 1u);
  ASSERT_TRUE(m.config.has_value()) << m.config_error;
  ASSERT_NE(m.find("blk.0.attn_q"), nullptr);  // internal names derived from the HF names
  EXPECT_EQ(m.find("blk.0.attn_q")->name, "model.layers.0.self_attn.q_proj.weight");
  const ModelConfig& c = m.model_config();
  EXPECT_TRUE(c.norm_offset && c.qk_norm && c.sandwich_norm && c.tied_embeddings);
  EXPECT_EQ(c.act, Activation::gelu_tanh);
  EXPECT_FLOAT_EQ(c.attn_scale, 0.125f);
  EXPECT_FLOAT_EQ(c.rope.local_theta, 10000.0f);
  EXPECT_FLOAT_EQ(c.embed_scale, 16.0f);
  EXPECT_EQ(c.layer_types[0], AttentionType::sliding);
  EXPECT_EQ(c.eos_ids, (std::vector<int32_t>{1, 50}));
  EXPECT_TRUE(verify_shards(m, dir.path, {}).empty());
  size_t n = 0;
  load_tensors(m, dir.path, {}, [&](const TensorEntry& t, std::span<const std::byte> b) {
    const auto& want = d.bytes.at(t.name);
    ASSERT_EQ(b.size(), want.size()) << t.name;
    EXPECT_EQ(0, std::memcmp(b.data(), want.data(), b.size())) << t.name;
    ++n;
  });
  EXPECT_EQ(n, d.bytes.size());
  // The CLI reads it too.
  auto r = run_blueshift({"verify", dir.path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_blueshift({"info", dir.path.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["config"]["sliding_window"], 12);
}

TEST(Doppler, UnsupportedFeaturesAreNamed) {
  TempDir dir;
  DopplerModel d = make_doppler(dir.path, 1 << 20);
  json j = d.manifest;
  // llama3 RoPE without its factors: the files still verify, but there is no runnable config.
  j = d.manifest;
  j["inference"]["rope"]["ropeScalingType"] = "llama3";
  Manifest m = parse_manifest(j.dump(), "manifest.json");
  EXPECT_FALSE(m.config.has_value());
  EXPECT_NE(m.config_error.find("llama3"), std::string::npos) << m.config_error;
  EXPECT_THROW(m.model_config(), Error);
  // blake3 is read (tests/rdrr/test_blake3_models.cpp); anything else is named with its value.
  j = d.manifest;
  j["hashAlgorithm"] = "md5";
  try {
    parse_manifest(j.dump(), "manifest.json");
    ADD_FAILURE() << "md5 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hashAlgorithm: expected \"sha256\" or \"blake3\", got \"md5\""),
              std::string::npos) << e.what();
  }
}
