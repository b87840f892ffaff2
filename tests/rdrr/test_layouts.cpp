// Tensor layouts as DOPPLER writes them today (issue 13): Q4_K rows padded to whole blocks, flat Q4_K
// without a layout key, the transposed "col" Q4_K, 3-D expert tensors, I64 companions, W4A16 with its
// scale and shape companions, the int4 per-row table, and spans in any shard order. Sizes are the
// real manifests' (/work/doppler-manifests); every malformed variant must fail naming the tensor.
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
using nlohmann::json;

namespace {

// A manifest of one shard of `shard_size` bytes holding `tensors` (placed by the caller).
json manifest_with(json tensors, uint64_t shard_size = 1ull << 32) {
  return {{"version", 1},
          {"hashAlgorithm", "sha256"},
          {"shards", {{{"index", 0}, {"filename", "shard_00000.bin"}, {"size", shard_size}, {"hash", std::string(64, 'a')}}}},
          {"tensors", std::move(tensors)}};
}

json tensor(const std::string& dtype, std::vector<int64_t> shape, uint64_t size, uint64_t offset = 0) {
  return {{"shard", 0}, {"offset", offset}, {"size", size}, {"shape", shape}, {"dtype", dtype}};
}

Manifest parse(const json& m) { return parse_manifest(m.dump(), "manifest.json"); }

// Parsing fails with a message containing every one of `parts`.
void expect_rejected(const json& m, std::vector<std::string> parts) {
  try {
    parse(m);
    ADD_FAILURE() << "accepted: " << parts[0];
  } catch (const Error& e) {
    for (auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

// DOPPLER's W4A16 down_proj [3840, 15360] with its companions, in one shard.
json w4a16_tensors(int64_t rows = 40, int64_t k = 150) {
  int64_t groups = (k + 31) / 32;
  json w = tensor("W4A16", {rows, k}, uint64_t(rows * groups * 16));
  w["storage"] = {{"packing", "w4a16"}, {"blockShape", {32}}, {"blockBytes", 16},
                  {"companions", {{{"role", "scales"}, {"tensorId", "w.weight_scale"}}, {{"role", "shape"}, {"tensorId", "w.weight_shape"}}}}};
  uint64_t wb = uint64_t(rows * groups * 16);
  return {{"w.weight", w},
          {"w.weight_scale", tensor("BF16", {rows, groups}, uint64_t(rows * groups * 2), wb)},
          {"w.weight_shape", tensor("I64", {2}, 16, wb + uint64_t(rows * groups * 2))}};
}

// DOPPLER's int4_per_row table (embed_tokens_per_layer): rows x cols nibbles, then rows F32 scales.
json int4_table(int64_t rows = 64, int64_t cols = 90) {
  uint64_t size = uint64_t(rows * cols / 2);
  json t = tensor("F16", {rows, cols}, size);
  t["layout"] = "row";
  t["sourceTransform"] = {{"kind", "litert_axis_dequant"}, {"scheme", "per_axis_affine"}, {"sourceDtype", "INT4"},
                          {"targetDtype", "F16"}, {"storageEncoding", "offset_binary"}, {"scaleSemantics", "step"},
                          {"storageShape", {rows, cols}}, {"quantAxis", 1},
                          {"scaleSource", {{"shard", 0}, {"offset", size}, {"size", rows * 4}}}};
  return {{"ple.weight", t}};
}

TEST(Layouts, Q4KRowsArePaddedToWholeBlocks) {
  // Gemma 3 270M's mlp.down_proj [2048, 640] ... is 2048 x 3 blocks; the MoE expert [128, 2816, 704] 128 x 2816 x 3.
  json t = tensor("Q4_K_M", {2048, 640}, 884736);
  t["layout"] = "row";
  json e = tensor("Q4_K_M", {128, 2816, 704}, 155713536, 884736);
  e["layout"] = "row";
  Manifest m = parse(manifest_with({{"a", t}, {"experts", e}}));
  EXPECT_EQ(m.find("a")->layout, Layout::row);
  EXPECT_EQ(tensor_row_bytes(*m.find("a")), 3u * 144);
  EXPECT_EQ(tensor_row_bytes(*m.find("experts")), 3u * 144);
  t["size"] = 2048 * 640 / 256 * 144;  // the unpadded size: wrong
  expect_rejected(manifest_with({{"a", t}}), {"tensors['a'].size", "needs 884736 bytes", "row layout"});
}

TEST(Layouts, Q4KWithoutLayoutIsFlat) {
  // LFM2's conv weight [2048, 1, 3]: 6144 values in 24 blocks, not 2048 padded rows of 3.
  Manifest m = parse(manifest_with({{"conv", tensor("Q4_K_M", {2048, 1, 3}, 3456)}}));
  EXPECT_EQ(m.find("conv")->layout, Layout::flat);
  expect_rejected(manifest_with({{"conv", tensor("Q4_K_M", {2048, 1, 3}, 2048 * 144)}}), {"needs 3456 bytes", "flat"});
  expect_rejected(manifest_with({{"s", tensor("Q4_K_M", {}, 144)}}), {"tensors['s']", "not a tensor of blocks"});
}

TEST(Layouts, ColIsTheTransposeInPaddedRows) {
  json t = tensor("Q4_K_M", {300, 512}, 512 * 2 * 144);  // 512 columns of 300 values: 2 blocks each
  t["layout"] = "col";
  EXPECT_EQ(parse(manifest_with({{"c", t}})).find("c")->layout, Layout::col);
  t["dtype"] = "F16";
  expect_rejected(manifest_with({{"c", t}}), {"tensors['c'].layout", "'col'"});
  t["dtype"] = "Q4_K_M";
  t["layout"] = "diagonal";
  expect_rejected(manifest_with({{"c", t}}), {"tensors['c'].layout", "diagonal"});
}

TEST(Layouts, PlainTypesOfAnyShape) {
  Manifest m = parse(manifest_with({{"scalar", tensor("F16", {}, 2)},
                                    {"img", tensor("F16", {768, 3, 2, 16, 16}, 2359296, 2)},
                                    {"norm", tensor("BF16", {1152}, 2304, 2359298)},
                                    {"shape", tensor("I64", {2}, 16, 2361602)}}));
  EXPECT_EQ(m.find("shape")->dtype, DType::I64);
  expect_rejected(manifest_with({{"shape", tensor("I64", {2}, 8)}}), {"I64 [2]", "needs 16 bytes"});
  expect_rejected(manifest_with({{"x", tensor("INT4", {2}, 1)}}), {"tensors['x'].dtype", "'INT4'"});
}

TEST(Layouts, W4A16NeedsConsistentCompanions) {
  Manifest m = parse(manifest_with(w4a16_tensors()));
  const TensorEntry* w = m.find("w.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, DType::W4A16);
  EXPECT_EQ(w->size, 40u * 5 * 16);  // 150 values per row: 5 groups of 32, the last padded
  EXPECT_EQ(w->scales, "w.weight_scale");
  EXPECT_EQ(m.find("w.weight_scale")->companion_of, "w.weight");
  EXPECT_EQ(m.find("w.weight_shape")->companion_of, "w.weight");

  json j = w4a16_tensors();
  j.erase("w.weight_scale");
  expect_rejected(manifest_with(j), {"tensors['w.weight']", "scales companion 'w.weight_scale' is not in the manifest"});
  j = w4a16_tensors();
  j["w.weight_scale"]["shape"] = {40, 4};
  j["w.weight_scale"]["size"] = 40 * 4 * 2;
  expect_rejected(manifest_with(j), {"w.weight_scale", "BF16|F16|F32 [40, 5]", "[40,4]"});
  j = w4a16_tensors();
  j["w.weight_shape"]["dtype"] = "F32";
  j["w.weight_shape"]["size"] = 8;
  expect_rejected(manifest_with(j), {"w.weight_shape", "I64|I32 [2]"});
  j = w4a16_tensors();
  j["w.weight"]["storage"]["blockBytes"] = 18;
  expect_rejected(manifest_with(j), {"tensors['w.weight'].storage", "blockBytes 16"});
  j = w4a16_tensors();
  j["w.weight"]["storage"].erase("companions");
  expect_rejected(manifest_with(j), {"tensors['w.weight'].storage", "companions"});
  j = w4a16_tensors();
  j["w.weight"]["size"] = 40 * 150 / 2;  // unpadded
  expect_rejected(manifest_with(j), {"tensors['w.weight'].size", "needs 3200 bytes"});
  j = w4a16_tensors();
  j["v.weight"] = j["w.weight"];  // a second tensor claiming the same companions
  j["v.weight"]["offset"] = 1 << 20;
  expect_rejected(manifest_with(j), {"companion of both"});
  j = w4a16_tensors();
  j["w.weight_shape"]["storage"] = j["w.weight"]["storage"];
  expect_rejected(manifest_with(j), {"tensors['w.weight_shape'].storage", "only W4A16"});
}

TEST(Layouts, Int4PerRowTable) {
  // Gemma 4 E2B's embed_tokens_per_layer: "F16" [262144, 8960] stored in 1/4 of F16's bytes.
  json real = int4_table(262144, 8960);
  Manifest m = parse(manifest_with(real));
  const TensorEntry* t = m.find("ple.weight");
  EXPECT_EQ(t->dtype, DType::I4);
  EXPECT_EQ(t->size, 1174405120u);
  ASSERT_NE(m.find(t->scales), nullptr);
  EXPECT_EQ(m.find(t->scales)->size, 262144u * 4);
  EXPECT_EQ(m.find(t->scales)->companion_of, "ple.weight");

  json j = int4_table();
  j["ple.weight"]["sourceTransform"]["storageEncoding"] = "signed";
  expect_rejected(manifest_with(j), {"tensors['ple.weight'].sourceTransform.storageEncoding", "'signed'"});
  j = int4_table();
  j["ple.weight"]["sourceTransform"]["quantAxis"] = 0;
  expect_rejected(manifest_with(j), {"quantAxis", "expected 1"});
  j = int4_table();
  j["ple.weight"]["sourceTransform"]["storageShape"] = {90, 64};
  expect_rejected(manifest_with(j), {"storageShape", "[64, 90]"});
  j = int4_table();
  j["ple.weight"]["sourceTransform"]["scaleSource"]["size"] = 64 * 2;
  expect_rejected(manifest_with(j), {"scaleSource.size", "64 F32 row scales need 256"});
  j = int4_table();
  j["ple.weight"]["sourceTransform"]["scaleSource"]["offset"] = 100;  // inside the table's bytes
  expect_rejected(manifest_with(j), {"overlap"});
  j = int4_table();
  j["ple.weight"]["sourceTransform"].erase("scaleSource");
  expect_rejected(manifest_with(j), {"sourceTransform", "scaleSource"});
  j = int4_table();
  j["ple.weight"]["size"] = 64 * 90 * 2;  // as if F16
  expect_rejected(manifest_with(j), {"tensors['ple.weight'].size", "int4 per row", "needs 2880 bytes"});
}

TEST(Layouts, SpansInAnyShardOrder) {
  auto spans = [](std::vector<std::array<uint64_t, 3>> v) {
    json a = json::array();
    for (auto& s : v) a.push_back({{"shardIndex", s[0]}, {"offset", s[1]}, {"size", s[2]}});
    return a;
  };
  json m = manifest_with({}, 1000);
  m["shards"].push_back({{"index", 1}, {"filename", "shard_00001.bin"}, {"size", 1000}, {"hash", std::string(64, 'b')}, {"offset", 1000}});
  json t = {{"size", 300}, {"shape", {150}}, {"dtype", "F16"}, {"spans", spans({{1, 0, 100}, {0, 500, 100}, {0, 0, 100}})}};
  m["tensors"]["t"] = t;
  EXPECT_EQ(parse(m).find("t")->spans.size(), 3u);
  m["tensors"]["t"]["spans"] = spans({{1, 0, 100}, {0, 500, 100}, {1, 50, 100}});  // overlaps itself
  expect_rejected(m, {"overlap in shard 1"});
}

// A bundle whose tensor's spans go to shards 2, 0, 1: the reader assembles it in list order.
TEST(Layouts, ReaderAssemblesSpansOutOfShardOrder) {
  TempDir dir;
  const uint64_t n = 512;
  std::vector<std::vector<std::byte>> shard(3, std::vector<std::byte>(n));
  for (auto& s : shard)
    for (auto& b : s) b = std::byte(rng()() & 0xff);
  // "t" (F32 [200], 800 bytes) = shard 2 [0, 300) + shard 0 [100, 400) + shard 1 [12, 212); "u" sits in shard 0.
  std::vector<std::byte> want_t;
  auto take = [&](int s, uint64_t off, uint64_t size) {
    want_t.insert(want_t.end(), shard[s].begin() + off, shard[s].begin() + off + size);
    return json{{"shardIndex", s}, {"offset", off}, {"size", size}};
  };
  json spans = {take(2, 0, 300), take(0, 100, 300), take(1, 12, 200)};
  json m = {{"version", 1}, {"hashAlgorithm", "sha256"}, {"shards", json::array()},
            {"tensors", {{"t", {{"size", 800}, {"shape", {200}}, {"dtype", "F32"}, {"spans", spans}}},
                         {"u", {{"shard", 0}, {"offset", 400}, {"size", 8}, {"shape", {4}}, {"dtype", "BF16"}}}}}};
  for (int s = 0; s < 3; ++s) {
    std::string name = fmt::format("shard_{:05d}.bin", s);
    write_file(dir.path / name, std::string(reinterpret_cast<const char*>(shard[s].data()), n));
    m["shards"].push_back({{"index", s}, {"filename", name}, {"size", n}, {"hash", sha256_hex(shard[s])}, {"offset", s * n}});
  }
  write_file(dir.path / "manifest.json", m.dump());
  Manifest man = read_manifest(dir.path);
  std::map<std::string, int> seen;
  for (int threads : {1, 3}) {
    load_tensors(man, dir.path, {threads, {}}, [&](const TensorEntry& t, std::span<const std::byte> b) {
      ++seen[t.name];
      if (t.name == "t") {
        ASSERT_EQ(b.size(), want_t.size());
        EXPECT_EQ(0, std::memcmp(b.data(), want_t.data(), b.size()));
      } else {
        EXPECT_EQ(0, std::memcmp(b.data(), shard[0].data() + 400, 8));
      }
    });
  }
  EXPECT_EQ(seen["t"], 2);  // once per load
  EXPECT_EQ(seen["u"], 2);
}

}  // namespace
