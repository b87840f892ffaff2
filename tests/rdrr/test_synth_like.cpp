// synth --like: small in-test manifests covering every dtype and layout it writes (spans across shards,
// spans in any shard order, padding, companions, the int4 table's scale range, uncovered bytes), the
// hashes and Merkle roots it recomputes, determinism, refusals; and, with ../shared, DOPPLER's own
// manifests end to end through the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <nlohmann/json.hpp>

#include "rdrr/manifest.h"
#include "rdrr/quant.h"
#include "rdrr/synth_like.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "sharding/hash.h"
#include "sharding/merkle.h"
#include "tests/common/testing.h"

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

ordered_json read_json(const fs::path& p) {
  std::ifstream f(p);
  return ordered_json::parse(f);
}

void write_json(const fs::path& p, const ordered_json& j) { std::ofstream(p) << j.dump(2); }

// A tensor for the manifest builder: DOPPLER packs them back to back, splitting at shard ends.
struct Spec {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t size;
  ordered_json extra = ordered_json::object();  // layout, storage, sourceTransform, role
};

// A manifest of `specs` in shards of `shard_size` bytes, `gap` unused bytes after each tensor, and
// `tail` unused bytes at the end of the last shard.
ordered_json build(const std::vector<Spec>& specs, uint64_t shard_size, uint64_t gap = 0, uint64_t tail = 0,
                   const std::string& alg = "sha256", uint64_t merkle_block = 0) {
  ordered_json m = {{"version", 1}, {"modelId", "synth-like-test"}, {"hashAlgorithm", alg},
                    {"architecture", {{"hiddenSize", 1024}}},
                    {"inference", {{"normalization", {{"rmsNormWeightOffset", false}}}}}};
  ordered_json tensors = ordered_json::object();
  uint64_t at = 0;
  for (const Spec& s : specs) {
    ordered_json t = {{"size", s.size}, {"shape", s.shape}, {"dtype", s.dtype}, {"role", "matmul"}};
    for (auto& [k, v] : s.extra.items()) t[k] = v;
    ordered_json spans = ordered_json::array();
    for (uint64_t put = 0; put < s.size;) {
      uint64_t shard = (at + put) / shard_size, off = (at + put) % shard_size;
      uint64_t n = std::min(s.size - put, shard_size - off);
      spans.push_back({{"shardIndex", shard}, {"offset", off}, {"size", n}});
      put += n;
    }
    if (spans.size() == 1) {
      t["shard"] = spans[0]["shardIndex"];
      t["offset"] = spans[0]["offset"];
    } else {
      t["spans"] = spans;
    }
    tensors[s.name] = t;
    at += s.size + gap;
  }
  at += tail;
  ordered_json shards = ordered_json::array();
  for (uint64_t i = 0; i * shard_size < at; ++i)
    shards.push_back({{"index", i}, {"filename", fmt::format("shard_{:05d}.bin", i)},
                      {"size", std::min(shard_size, at - i * shard_size)}, {"hash", "0"}, {"blake3", "0"},
                      {"offset", i * shard_size}});
  m["shards"] = shards;
  m["tensors"] = tensors;
  m["totalSize"] = at;
  if (merkle_block) {
    ordered_json roots = ordered_json::object();
    for (const Spec& s : specs) roots[s.name] = "sha256:0";
    m["integrityExtensions"] = {{"contractVersion", 1}, {"blockMerkle", {{"blockSize", merkle_block}, {"roots", roots}}}};
  }
  return m;
}

// A tensor's bytes, its spans concatenated in order.
std::vector<uint8_t> tensor_bytes(const fs::path& dir, const ordered_json& m, const ordered_json& loc) {
  ordered_json spans = loc.contains("spans") ? loc["spans"]
                                             : ordered_json::array({{{"shardIndex", loc["shard"]}, {"offset", loc["offset"]},
                                                                     {"size", loc["size"]}}});
  std::vector<uint8_t> out;
  for (auto& sp : spans) {
    auto shard = read_all(dir / m["shards"][sp["shardIndex"].get<size_t>()]["filename"].get<std::string>());
    uint64_t off = sp["offset"], n = sp["size"];
    out.insert(out.end(), shard.begin() + int64_t(off), shard.begin() + int64_t(off + n));
  }
  return out;
}

// Every shard's bytes that no tensor (or listed extra range) covers.
void expect_uncovered_zero(const fs::path& dir, const ordered_json& m, std::vector<ordered_json> extra = {}) {
  std::vector<std::vector<uint8_t>> covered;
  for (auto& s : m["shards"]) covered.emplace_back(s["size"].get<size_t>(), 0);
  auto mark = [&](const ordered_json& loc) {
    ordered_json spans = loc.contains("spans") ? loc["spans"]
                                               : ordered_json::array({{{"shardIndex", loc.contains("shard") ? loc["shard"] : loc["shardIndex"]},
                                                                       {"offset", loc["offset"]}, {"size", loc["size"]}}});
    for (auto& sp : spans)
      for (uint64_t i = 0; i < sp["size"].get<uint64_t>(); ++i) covered[sp["shardIndex"]][sp["offset"].get<uint64_t>() + i] = 1;
  };
  for (auto& [n, t] : m["tensors"].items()) mark(t);
  for (auto& e : extra) mark(e);
  for (size_t s = 0; s < covered.size(); ++s) {
    auto bytes = read_all(dir / m["shards"][s]["filename"].get<std::string>());
    ASSERT_EQ(bytes.size(), m["shards"][s]["size"].get<size_t>());
    for (size_t i = 0; i < bytes.size(); ++i)
      if (!covered[s][i]) {
        ASSERT_EQ(bytes[i], 0) << "shard " << s << " byte " << i;
      }
  }
}

// Dequantizes `rows` rows of a Q4_K / Q6_K tensor laid out with `row_len` values per row (padded to
// whole blocks); checks padding is exactly 0 and real values finite; returns the real values.
std::vector<float> dequant_rows(DType t, const std::vector<uint8_t>& bytes, uint64_t rows, uint64_t row_len) {
  uint64_t blocks = (row_len + 255) / 256, bb = traits(t).block_bytes;
  EXPECT_EQ(bytes.size(), rows * blocks * bb);
  std::vector<float> row(blocks * 256), out;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = 0; b < blocks; ++b) {  // f16 block scales finite
      const uint8_t* blk = bytes.data() + (r * blocks + b) * bb;
      uint16_t d;
      std::memcpy(&d, t == DType::Q4_K ? blk : blk + 208, 2);
      EXPECT_TRUE(std::isfinite(half_to_float(d)));
    }
    dequantize_row(t, bytes.data() + r * blocks * bb, row.data(), int64_t(blocks * 256));
    for (uint64_t i = 0; i < row.size(); ++i) {
      if (i >= row_len) {
        EXPECT_EQ(row[i], 0.0f) << "row " << r << " padding value " << i;
      } else {
        EXPECT_TRUE(std::isfinite(row[i]));
      }
    }
    out.insert(out.end(), row.begin(), row.begin() + int64_t(row_len));
  }
  return out;
}

double stddev(const std::vector<float>& v, double* mean_out = nullptr) {
  double s = 0, q = 0;
  for (float x : v) s += x, q += double(x) * x;
  double mean = s / double(v.size());
  if (mean_out) *mean_out = mean;
  return std::sqrt(std::max(0.0, q / double(v.size()) - mean * mean));
}

bool have_blake3() {
  try {
    blake3_hex({});
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The int4 table, W4A16 and its companions, Q4_K in its three layouts, Q6_K, plain types.
std::vector<Spec> every_layout() {
  ordered_json w4 = {{"storage", {{"packing", "w4a16"}, {"blockShape", {32}}, {"blockBytes", 16},
                                  {"companions", {{{"role", "scales"}, {"tensorId", "w.weight_scale"}},
                                                  {{"role", "shape"}, {"tensorId", "w.weight_shape"}}}}}}};
  ordered_json ple = {{"layout", "row"}, {"role", "embedding"},
                      {"sourceTransform", {{"kind", "litert_axis_dequant"}, {"scheme", "per_axis_affine"},
                                           {"sourceDtype", "INT4"}, {"targetDtype", "F16"},
                                           {"storageEncoding", "offset_binary"}, {"scaleSemantics", "step"},
                                           {"storageShape", {40, 17}}, {"quantAxis", 1}}}};
  return {
      {"model.embed_tokens.weight", "F16", {300, 64}, 300 * 64 * 2, {{"role", "embedding"}}},
      {"model.norm.weight", "BF16", {64}, 128, {{"role", "norm"}}},
      {"gate.weight", "Q4_K_M", {48, 640}, 48 * 3 * 144, {{"layout", "row"}}},
      {"conv.weight", "Q4_K_M", {64, 1, 3}, 144, ordered_json::object()},  // flat: 192 values in one block
      {"col.weight", "Q4_K_M", {300, 16}, 16 * 2 * 144, {{"layout", "col"}}},
      {"q6.weight", "Q6_K", {8, 300}, 8 * 2 * 210, {{"layout", "row"}}},
      {"w.weight", "W4A16", {24, 80}, 24 * 3 * 16, w4},
      {"w.weight_scale", "BF16", {24, 3}, 24 * 3 * 2, {{"role", "other"}}},
      {"w.weight_shape", "I64", {2}, 16, {{"role", "other"}}},
      {"ple.weight", "F16", {40, 17}, 40 * 9, ple},
      {"bias.bias", "F32", {33}, 33 * 4, {{"role", "other"}}},
  };
}

// every_layout() in shards of 4 KiB with the int4 table's row scales in the last shard's tail.
ordered_json every_layout_manifest(const std::string& alg = "sha256", uint64_t merkle_block = 1000) {
  ordered_json m = build(every_layout(), 4096, 3, 200, alg, merkle_block);
  uint64_t last = m["shards"].size() - 1, size = m["shards"][last]["size"];
  m["tensors"]["ple.weight"]["sourceTransform"]["scaleSource"] = {{"shard", last}, {"offset", size - 170}, {"size", 160}};
  return m;
}

SynthLikeResult run(const ordered_json& m, const fs::path& dir, uint64_t seed = 1, int threads = 2, bool force = false) {
  fs::create_directories(dir.parent_path() / "in");
  write_json(dir.parent_path() / "in" / "manifest.json", m);
  SynthLikeOptions o;
  o.seed = seed;
  o.threads = threads;
  o.force = force;
  return synth_like(dir.parent_path() / "in" / "manifest.json", dir, o);
}

}  // namespace

TEST(SynthLike, EveryLayout) {
  TempDir tmp;
  ordered_json in = every_layout_manifest();
  auto r = run(in, tmp / "out");
  EXPECT_EQ(r.tensors, in["tensors"].size());
  EXPECT_EQ(r.merkle_roots, in["tensors"].size());
  ordered_json m = read_json(tmp / "out/manifest.json");

  // The manifest is the input's, but for the hashes and the note that says its weights are random.
  ordered_json a = in, b = m;
  for (auto* x : {&a, &b}) {
    for (auto& s : (*x)["shards"]) s.erase("hash"), s.erase("blake3");
    (*x)["integrityExtensions"]["blockMerkle"].erase("roots");
    if (x->contains("metadata")) (*x)["metadata"].erase("x-blueshift-synth");
    if (x->contains("metadata") && (*x)["metadata"].empty()) x->erase("metadata");
  }
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_EQ(m["metadata"]["x-blueshift-synth"]["like"], "synth-like-test");
  for (auto& s : m["shards"]) {
    auto bytes = read_all(tmp / "out" / s["filename"].get<std::string>());
    std::string h = sha256_hex({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
    EXPECT_EQ(s["hash"], h);
    EXPECT_EQ(s["blake3"], h);  // the older manifests' duplicate key follows
  }
  ASSERT_GT(m["shards"].size(), 3u);
  expect_uncovered_zero(tmp / "out", m, {m["tensors"]["ple.weight"]["sourceTransform"]["scaleSource"]});

  auto bytes = [&](const std::string& n) { return tensor_bytes(tmp / "out", m, m["tensors"][n]); };
  // Merkle roots over the tensors' bytes (1000-byte blocks: many straddle the 4 KiB shards).
  for (auto& [n, root] : m["integrityExtensions"]["blockMerkle"]["roots"].items()) {
    auto t = bytes(n);
    EXPECT_EQ(root, block_merkle_root({reinterpret_cast<const std::byte*>(t.data()), t.size()}, 1000)) << n;
  }

  // Plain types: weights N(0, 0.02), norms around 1.
  auto floats = [&](const std::string& n, DType t) {
    auto raw = bytes(n);
    std::vector<float> v(raw.size() / (t == DType::F32 ? 4 : 2));
    dequantize_row(t, raw.data(), v.data(), int64_t(v.size()));
    return v;
  };
  double mean = 0;
  EXPECT_NEAR(stddev(floats("model.embed_tokens.weight", DType::F16), &mean), 0.02, 0.002);
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_NEAR(stddev(floats("model.norm.weight", DType::BF16), &mean), 0.1, 0.03);
  EXPECT_NEAR(mean, 1.0, 0.05);
  EXPECT_NEAR(stddev(floats("bias.bias", DType::F32)), 0.1, 0.04);

  // Block types: finite scales, padding exactly 0, values about N(0, 0.02).
  auto gate = dequant_rows(DType::Q4_K, bytes("gate.weight"), 48, 640);
  EXPECT_NEAR(stddev(gate, &mean), 0.02, 0.005);
  EXPECT_NEAR(mean, 0.0, 0.002);
  dequant_rows(DType::Q4_K, bytes("conv.weight"), 1, 192);
  dequant_rows(DType::Q4_K, bytes("col.weight"), 16, 300);
  EXPECT_NEAR(stddev(dequant_rows(DType::Q6_K, bytes("q6.weight"), 8, 300)), 0.02, 0.005);

  // W4A16: codes offset-binary, each row's last group padded with 8s; positive scales; the real shape.
  auto w = bytes("w.weight");
  for (int r = 0; r < 24; ++r)
    for (int lane = 80; lane < 96; ++lane) {
      uint8_t b = w[size_t(r * 48 + lane / 2)];
      EXPECT_EQ(lane % 2 ? b >> 4 : b & 15, 8) << "row " << r << " lane " << lane;
    }
  for (float s : floats("w.weight_scale", DType::BF16)) EXPECT_TRUE(s > 0 && s < 0.02f) << s;
  auto shape = bytes("w.weight_shape");
  int64_t dims[2];
  std::memcpy(dims, shape.data(), 16);
  EXPECT_EQ(dims[0], 24);
  EXPECT_EQ(dims[1], 80);

  // The int4 table: codes in [1, 15] (offset-binary [-7, 7]), odd rows' last nibble 8 (= 0), f32 scales > 0.
  auto ple = bytes("ple.weight");
  for (int r = 0; r < 40; ++r)
    for (int c = 0; c < 18; ++c) {
      uint8_t b = ple[size_t(r * 9 + c / 2)], code = c % 2 ? b >> 4 : b & 15;
      if (c == 17) {
        EXPECT_EQ(code, 8);
      } else {
        EXPECT_TRUE(code >= 1 && code <= 15) << int(code);
      }
    }
  auto sc = tensor_bytes(tmp / "out", m, {{"shard", m["shards"].size() - 1}, {"offset", m["shards"].back()["size"].get<uint64_t>() - 170}, {"size", 160}});
  for (int r = 0; r < 40; ++r) {
    float s;
    std::memcpy(&s, sc.data() + 4 * r, 4);
    EXPECT_TRUE(std::isfinite(s) && s > 0) << s;
  }
}

// A tensor's bytes depend on the seed and its name only: spans listed in any shard order, other
// tensors, the shard size and the thread count change where they lie, not what they are.
TEST(SynthLike, SpansInAnyOrderAndDeterminism) {
  TempDir tmp;
  ordered_json in = build({{"a.weight", "F16", {3000}, 6000, ordered_json::object()},
                           {"b.weight", "Q4_K_M", {4, 300}, 4 * 2 * 144, {{"layout", "row"}}}},
                          4096, 0, 0, "sha256", 512);
  // The same tensors, a.weight's first 4096 bytes in the last shard and its rest in the first.
  ordered_json ooo = in;
  ooo["shards"] = ordered_json::array();
  for (uint64_t i = 0; i < 3; ++i)
    ooo["shards"].push_back({{"index", i}, {"filename", fmt::format("shard_{:05d}.bin", i)}, {"size", 4096},
                             {"hash", ""}, {"offset", 4096 * i}});
  ooo["tensors"]["a.weight"].erase("spans");
  ooo["tensors"]["a.weight"]["spans"] = {{{"shardIndex", 2}, {"offset", 0}, {"size", 4096}},
                                         {{"shardIndex", 0}, {"offset", 100}, {"size", 1904}}};
  ooo["tensors"]["b.weight"].erase("spans");
  ooo["tensors"]["b.weight"]["shard"] = 1;
  ooo["tensors"]["b.weight"]["offset"] = 100;

  run(in, tmp / "x/in_order", 9, 1);
  run(ooo, tmp / "y/out_of_order", 9, 3);
  ordered_json m1 = read_json(tmp / "x/in_order/manifest.json"), m2 = read_json(tmp / "y/out_of_order/manifest.json");
  for (std::string n : {"a.weight", "b.weight"}) {
    EXPECT_EQ(tensor_bytes(tmp / "x/in_order", m1, m1["tensors"][n]), tensor_bytes(tmp / "y/out_of_order", m2, m2["tensors"][n])) << n;
    EXPECT_EQ(m1["integrityExtensions"]["blockMerkle"]["roots"][n], m2["integrityExtensions"]["blockMerkle"]["roots"][n]);
  }
  expect_uncovered_zero(tmp / "y/out_of_order", m2);

  // Same seed, other thread count: the same files. Another seed: other bytes.
  run(in, tmp / "z/again", 9, 4);
  EXPECT_EQ(read_json(tmp / "z/again/manifest.json").dump(), m1.dump());
  run(in, tmp / "w/seed10", 10, 1);
  EXPECT_NE(read_json(tmp / "w/seed10/manifest.json")["shards"][0]["hash"], m1["shards"][0]["hash"]);
}

TEST(SynthLike, Blake3Manifest) {
  if (!have_blake3()) GTEST_SKIP() << "BLAKE3 is not in this build yet";
  TempDir tmp;
  run(every_layout_manifest("blake3", 0), tmp / "out");
  ordered_json m = read_json(tmp / "out/manifest.json");
  for (auto& s : m["shards"]) {
    auto bytes = read_all(tmp / "out" / s["filename"].get<std::string>());
    EXPECT_EQ(s["hash"], blake3_hex({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}));
  }
}

TEST(SynthLike, RefusesOverwriteUnlessForced) {
  TempDir tmp;
  ordered_json in = build({{"a.weight", "F16", {100}, 200, ordered_json::object()}}, 4096);
  run(in, tmp / "out");
  try {
    run(in, tmp / "out", 2);
    FAIL() << "overwrote";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  // Never over the manifest's own directory, even with --force.
  SynthLikeOptions forced;
  forced.force = true;
  EXPECT_THROW(synth_like(tmp / "in/manifest.json", tmp / "in", forced), Error);
  EXPECT_TRUE(fs::exists(tmp / "in/manifest.json"));
  auto before = read_json(tmp / "out/manifest.json")["shards"][0]["hash"];
  run(in, tmp / "out", 2, 2, true);
  EXPECT_NE(read_json(tmp / "out/manifest.json")["shards"][0]["hash"], before);
  for (auto& e : fs::directory_iterator(tmp.path / "out"))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos);
}

// What it cannot write, it refuses naming the tensor, its dtype and layout; nothing is left behind.
TEST(SynthLike, RefusesWhatItCannotWrite) {
  struct Case {
    Spec spec;
    std::string expect;
  };
  std::vector<Case> cases = {
      {{"q8.weight", "Q8_0", {64}, 68, ordered_json::object()}, "tensor 'q8.weight': synth --like cannot write dtype Q8_0 with layout (none)"},
      {{"k.weight", "Q4_K_M", {4, 300}, 4 * 144, {{"layout", "row"}}}, "is 1152 bytes, the manifest says 576"},
      {{"t.weight", "F16", {8}, 16, {{"layout", "tiled"}}}, "dtype F16 with layout tiled: unknown layout"},
      {{"w.weight", "W4A16", {4, 64}, 128, {{"storage", {{"packing", "w4a16"}, {"blockShape", {32}}, {"blockBytes", 16}}}}},
       "needs storage.companions"},
      {{"i.weight", "I64", {2}, 16, ordered_json::object()}, "cannot write dtype I64"},
  };
  for (auto& c : cases) {
    TempDir tmp;
    try {
      run(build({c.spec}, 4096), tmp / "out");
      ADD_FAILURE() << "accepted " << c.spec.name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(tmp / "out"));
  }
  // Overlapping tensors and a span leaving its shard.
  TempDir tmp;
  ordered_json m = build({{"a", "F16", {8}, 16, ordered_json::object()}, {"b", "F16", {8}, 16, ordered_json::object()}}, 4096);
  m["tensors"]["b"]["offset"] = 8;
  EXPECT_THROW(run(m, tmp / "o1"), Error);
  m["tensors"]["b"]["offset"] = 4090;
  EXPECT_THROW(run(m, tmp / "o2"), Error);
}

TEST(SynthLike, Cli) {
  TempDir tmp;
  write_json(tmp / "manifest.json", every_layout_manifest());
  std::ofstream(tmp / "tokenizer.json") << R"({"model": {"type": "BPE"}})";
  auto r = run_blueshift({"synth", "--like", (tmp / "manifest.json").string(), (tmp / "out").string(), "--json", "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tensors"], 11);
  EXPECT_EQ(j["tokenizer"], true);
  EXPECT_TRUE(fs::exists(tmp / "out/tokenizer.json"));
  EXPECT_EQ(run_blueshift({"synth", "--like", (tmp / "manifest.json").string(), (tmp / "out").string()}).exit_code, 2);
  r = run_blueshift({"synth", "--like", (tmp / "manifest.json").string(), (tmp / "dry").string(), "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("would write"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(tmp / "dry"));
  EXPECT_EQ(run_blueshift({"synth", (tmp / "out2").string()}).exit_code, 2);
  EXPECT_EQ(run_blueshift({"synth", "--like", (tmp / "manifest.json").string(), "--dtype", "f16", (tmp / "o3").string()}).exit_code, 2);

  // A partial no live process holds (as a killed run leaves it): --keep-partial reports it, a plain run
  // removes it and says so (tests/rdrr/test_cli_partial.cpp kills a real convert).
  fs::create_directory(tmp / ".o4.partial-dead01");
  std::ofstream(tmp / ".o4.partial-dead01/shard_00000.bin") << "0123456789";
  r = run_blueshift({"synth", "--like", (tmp / "manifest.json").string(), (tmp / "o4").string(), "--keep-partial"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("found stale partial .o4.partial-dead01 (10 bytes)"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(tmp / ".o4.partial-dead01"));
  r = run_blueshift({"synth", "--like", (tmp / "manifest.json").string(), (tmp / "o4").string(), "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed stale partial .o4.partial-dead01 (10 bytes)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / ".o4.partial-dead01"));
  EXPECT_EQ(run_blueshift({"synth", "--config", "c.json", (tmp / "o5").string(), "--keep-partial"}).exit_code, 2);
}

// The int4 table's row scales (sourceTransform.scaleSource) are loaded as an entry of their own, but
// they are not one of the manifest's tensors: `info` counts and lists the manifest's 11, `verify --deep`
// checks 11 roots with none missing, and a flipped byte in the scales is still caught by the shard hash.
TEST(SynthLike, ImpliedScalesAreNotATensor) {
  TempDir tmp;
  ordered_json in = every_layout_manifest();
  run(in, tmp / "out");
  const std::string dir = (tmp / "out").string();
  auto info = run_blueshift({"info", dir});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find(", 11 tensors"), std::string::npos) << info.out;
  info = run_blueshift({"info", dir, "--json", "--tensors"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["tensors"].size(), 11u);
  size_t by_dtype = 0;
  for (auto& [k, v] : j["dtypes"].items()) by_dtype += v["tensors"].get<size_t>();
  EXPECT_EQ(by_dtype, 11u);
  for (auto& t : j["tensors"]) EXPECT_EQ(t["name"].get<std::string>().find('#'), std::string::npos) << t;

  auto v = run_blueshift({"verify", dir, "--deep", "--json"});
  ASSERT_EQ(v.exit_code, 0) << v.err << v.out;
  auto vj = nlohmann::json::parse(v.out);
  EXPECT_EQ(vj["deep"]["checked"], 11);
  EXPECT_EQ(vj["deep"]["withoutRoot"], 0);
  v = run_blueshift({"verify", dir, "--deep"});
  EXPECT_EQ(v.out.find("without a root"), std::string::npos) << v.out;
  v = run_blueshift({"verify", dir, "--loader"});
  EXPECT_NE(v.out.find(", 11 tensors"), std::string::npos) << v.out;

  // The scales' bytes: the last shard's tail (every_layout_manifest); flip one.
  const ordered_json& src = in["tensors"]["ple.weight"]["sourceTransform"]["scaleSource"];
  fs::path shard = tmp / "out" / in["shards"][src["shard"].get<size_t>()]["filename"].get<std::string>();
  std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(src["offset"].get<uint64_t>() + 5));
  char c = 0x5a;
  f.write(&c, 1);
  f.close();
  v = run_blueshift({"verify", dir});
  EXPECT_EQ(v.exit_code, 4) << v.out << v.err;
}

int fuzz_synth_like(const uint8_t* data, size_t size);

// The fuzz target on deterministic mutations of a manifest with every layout (CI runs it without
// libFuzzer): byte flips, cuts, and numbers replaced by edge values.
TEST(SynthLike, FuzzMutations) {
  const std::string seed = every_layout_manifest().dump();
  static const char* kTokens[] = {"-1", "0", "1", "18446744073709551615", "1e308", "null", "[]", "{}", "\"\"",
                                  "\"row\"", "\"col\"", "4611686018427387904", "\"W4A16\"", "\"I64\"", "4097"};
  std::mt19937_64 r(20261124);
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    for (int k = 0, n = 1 + int(r() % 3); k < n && !s.empty(); ++k) {
      size_t at = r() % s.size();
      switch (r() % 4) {
        case 0: s[at] = char(s[at] ^ (1 << (r() % 8))); break;
        case 1: s.resize(at); break;
        case 2: {
          size_t b = s.find_first_of("0123456789", at);
          if (b == std::string::npos) break;
          size_t e = s.find_first_not_of("0123456789", b);
          s.replace(b, e == std::string::npos ? std::string::npos : e - b, kTokens[r() % std::size(kTokens)]);
          break;
        }
        default: s.insert(at, kTokens[r() % std::size(kTokens)]); break;
      }
    }
    fuzz_synth_like(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}

// DOPPLER's manifests in ../shared: synth --like each through the CLI, then check it as a user would:
// verify, info, and generate 8 tokens where blueshift has the architecture; where it does not, info
// and generate say so in one line naming the manifest field (`unsupported`). The large ones
// (gemma-4-12b: 8.1 GB, gemma-4-e2b: 4.0 GB; ~2.5 min of disk writes together) are skipped with
// BS_SYNTH_LIKE_LARGE=0.
struct SharedCase {
  const char* name;
  const char* unsupported;  // the field info and generate must name; nullptr when the model runs
};
void PrintTo(const SharedCase& c, std::ostream* os) { *os << c.name; }
class SynthLikeShared : public ::testing::TestWithParam<SharedCase> {};

TEST_P(SynthLikeShared, SynthThenVerify) {
  BS_REQUIRE_SHARED();
  const SharedCase& cs = GetParam();
  const fs::path src = shared_dir() / "data/doppler" / cs.name;
  ordered_json in = read_json(src / "manifest.json");
  uint64_t total = in["totalSize"];
  const char* large = std::getenv("BS_SYNTH_LIKE_LARGE");
  if (total > (2ull << 30) && large && *large == '0') GTEST_SKIP() << cs.name << " is large and BS_SYNTH_LIKE_LARGE=0";
  if (in.value("hashAlgorithm", "sha256") == "blake3" && !have_blake3()) GTEST_SKIP() << "BLAKE3 is not in this build yet";
  TempDir tmp;
  const fs::path out = tmp / cs.name;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_blueshift({"synth", "--like", (src / "manifest.json").string(), out.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %.1f MB in %.1f s\n", cs.name, double(total) / 1e6, s);

  ordered_json m = read_json(out / "manifest.json");
  EXPECT_EQ(m["tensors"].dump(), in["tensors"].dump());
  EXPECT_EQ(m["shards"].size(), in["shards"].size());
  for (size_t i = 0; i < m["shards"].size(); ++i)
    EXPECT_EQ(fs::file_size(out / m["shards"][i]["filename"].get<std::string>()), in["shards"][i]["size"].get<uint64_t>());
  EXPECT_EQ(fs::exists(out / "tokenizer.json"), fs::exists(src / "tokenizer.json"));

  // blueshift's manifest parser learns DOPPLER's layouts (padded rows, W4A16, the int4 table) in its
  // own change; until it reads this manifest, the shards are checked here and the CLI checks skip.
  try {
    read_manifest(out);
  } catch (const Error& e) {
    auto alg = *parse_hash_algorithm(m.value("hashAlgorithm", "sha256"));
    for (auto& sh : m["shards"]) {
      auto bytes = read_all(out / sh["filename"].get<std::string>());
      EXPECT_EQ(sh["hash"], hash_hex(alg, {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}));
    }
    GTEST_SKIP() << "shards hash as the manifest says; the manifest parser does not read it yet: " << e.what();
  }
  auto v = run_blueshift({"verify", out.string()});
  EXPECT_EQ(v.exit_code, 0) << "verify: " << v.err << v.out;
  auto info = run_blueshift({"info", out.string()});
  EXPECT_EQ(info.exit_code, 0) << "info: " << info.err << info.out;
  // Token ids inside every vocabulary here (LFM2.5's is 65536); one JSON line per token (the text of
  // random tokens need not split into 8 words).
  auto gen = run_blueshift({"generate", "--model", out.string(), "--prompt-tokens", "2,106,1645,4099", "--max-tokens",
                            "8", "--temperature", "0", "--ignore-eos", "--json"});
  if (!cs.unsupported) {
    EXPECT_EQ(info.out.find("not runnable"), std::string::npos) << info.out;
    EXPECT_EQ(info.out.find("without a blueshift name"), std::string::npos) << info.out;
    // Gemma 4 E2B (2.8 GB of weights) and 12B exceed lavapipe's 2 GiB: the runtime says so (exit 6,
    // resources) instead of generating; a device with the memory runs them.
    if (gen.exit_code == 6 && gen.err.find("GiB of GPU memory") != std::string::npos)
      GTEST_SKIP() << "synth, verify and info ran; generate needs a larger device: " << gen.err;
    ASSERT_EQ(gen.exit_code, 0) << "generate: " << gen.err;
    std::istringstream lines(gen.out);
    int n = 0;
    for (std::string line; std::getline(lines, line);) n += ordered_json::parse(line).contains("id");
    EXPECT_EQ(n, 8) << gen.out;
  } else {
    // One line naming the field and its value, from both commands; nothing else went wrong first.
    EXPECT_NE(info.out.find(std::string("not runnable: ") + (out / "manifest.json").string() + ": " + cs.unsupported),
              std::string::npos) << info.out;
    EXPECT_EQ(gen.exit_code, 3) << gen.err;
    EXPECT_NE(gen.err.find(cs.unsupported), std::string::npos) << gen.err;
    EXPECT_EQ(std::count(gen.err.begin(), gen.err.end(), '\n'), 1) << gen.err;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Doppler, SynthLikeShared,
    ::testing::Values(
        SharedCase{"gemma-3-270m-it-q4k-ehf16-af32", nullptr}, SharedCase{"gemma-3-1b-it-q4k-ehf16-af32", nullptr},
        SharedCase{"google-embeddinggemma-300m-q4k-ehf16-af32", "inference.attention.causal = false is not supported"},
        SharedCase{"lfm2-5-1-2b-instruct-q4k-ehf16-af32", nullptr},
        SharedCase{"qwen-3-5-0-8b-q4k-ehaf16", nullptr},
        SharedCase{"gemma-4-e2b-it-q4k-ehf16-af32-int4ple", nullptr},
        SharedCase{"gemma-4-12b-it-text-q4k-ehf16-af16", nullptr}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& c : n)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });
