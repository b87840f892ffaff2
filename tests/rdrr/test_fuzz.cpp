// Runs the fuzz targets on a few thousand deterministic mutations of valid inputs, so CI exercises
// them without clang/libFuzzer (and under AddressSanitizer in the ASan build).
#include <gtest/gtest.h>

#include <random>

#include "rdrr/manifest.h"
#include "tests/rdrr/st_builder.h"

int fuzz_safetensors(const uint8_t* data, size_t size);
int fuzz_manifest(const uint8_t* data, size_t size);

using nlohmann::json;

namespace {

// Byte-level and token-level mutations; the token list steers JSON toward interesting values.
std::string mutate(const std::string& seed, std::mt19937_64& r) {
  static const char* kTokens[] = {"-1", "0", "18446744073709551615", "18446744073709551616", "1e308", "null", "[]",
                                  "{}", "\"\"", "\"../x\"", "true", "4611686018427387904", "\"Q4_K_M\"", "\"col\"", "9",
                                  "\"W4A16\"", "\"I64\"", "\"row\"", "3", "32"};
  std::string s = seed;
  int n = 1 + int(r() % 4);
  for (int k = 0; k < n && !s.empty(); ++k) {
    size_t at = r() % s.size();
    switch (r() % 7) {
      case 0: s[at] = char(s[at] ^ (1 << (r() % 8))); break;
      case 1: s[at] = char(r()); break;
      case 2: s.erase(at, 1 + r() % 16); break;
      case 3: s.insert(at, s.substr(r() % s.size(), r() % 32)); break;
      case 4: s.resize(at); break;
      case 5: {  // replace a number with an interesting token
        size_t b = s.find_first_of("0123456789", at);
        if (b == std::string::npos) break;
        size_t e = s.find_first_not_of("0123456789", b);
        s.replace(b, e == std::string::npos ? std::string::npos : e - b, kTokens[r() % std::size(kTokens)]);
        break;
      }
      default: s.insert(at, kTokens[r() % std::size(kTokens)]); break;
    }
  }
  return s;
}

}  // namespace

TEST(Fuzz, SafetensorsHeaderMutations) {
  std::string seed = bs::testing::st_file({{"a", "F32", {2, 3}, std::vector<uint8_t>(24, 1)},
                                           {"b", "BF16", {4}, std::vector<uint8_t>(8, 2)},
                                           {"c", "F16", {0}, {}}});
  std::mt19937_64 r(12345);
  for (int i = 0; i < 4000; ++i) {
    std::string s = mutate(seed, r);
    fuzz_safetensors(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}

TEST(Fuzz, ManifestMutations) {
  json t = {{"shard", 0}, {"offset", 0}, {"size", 8}, {"shape", {2, 2}}, {"dtype", "F16"}, {"role", "matmul"}};
  json q = {{"spans", {{{"shardIndex", 0}, {"offset", 256}, {"size", 100}}, {{"shardIndex", 1}, {"offset", 0}, {"size", 188}}}},
            {"size", 288}, {"shape", {2, 256}}, {"dtype", "Q4_K_M"}};
  json m = {{"version", 1},
            {"hashAlgorithm", "sha256"},
            {"architecture", {{"numLayers", 1}, {"hiddenSize", 256}, {"intermediateSize", 512}, {"numAttentionHeads", 4},
                              {"numKeyValueHeads", 1}, {"headDim", 64}, {"vocabSize", 64}}},
            {"shards", {{{"index", 0}, {"filename", "shard_00000.bin"}, {"size", 356}, {"hash", std::string(64, 'a')}, {"offset", 0}},
                        {{"index", 1}, {"fileName", "shard_00001.bin.zst"}, {"size", 188}, {"hash", std::string(64, 'b')},
                         {"offset", 356}, {"compression", "zstd"}, {"storedSize", 90}, {"storedHash", std::string(64, 'c')}}}},
            {"tensors", {{"w", t}, {"q", q}}},
            {"eos_token_id", {1, 2}}};
  std::string seed = m.dump();
  ASSERT_EQ(fuzz_manifest(reinterpret_cast<const uint8_t*>(seed.data()), seed.size()), 0);
  std::mt19937_64 r(54321);
  for (int i = 0; i < 4000; ++i) {
    std::string s = mutate(seed, r);
    fuzz_manifest(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}

// DOPPLER's newer layouts (test_layouts.cpp): padded and flat Q4_K, W4A16 with companions, the int4
// table with its scaleSource, spans out of shard order.
TEST(Fuzz, ManifestLayoutMutations) {
  json w = {{"shard", 0}, {"offset", 0}, {"size", 160}, {"shape", {2, 150}}, {"dtype", "W4A16"},
            {"storage", {{"packing", "w4a16"}, {"blockShape", {32}}, {"blockBytes", 16},
                         {"companions", {{{"role", "scales"}, {"tensorId", "s"}}, {{"role", "shape"}, {"tensorId", "h"}}}}}}};
  json t = {{"size", 150}, {"shape", {10, 30}}, {"dtype", "F16"}, {"layout", "row"},
            {"spans", {{{"shardIndex", 1}, {"offset", 0}, {"size", 100}}, {{"shardIndex", 0}, {"offset", 300}, {"size", 50}}}},
            {"sourceTransform", {{"kind", "litert_axis_dequant"}, {"sourceDtype", "INT4"}, {"targetDtype", "F16"},
                                 {"storageEncoding", "offset_binary"}, {"scaleSemantics", "step"}, {"storageShape", {10, 30}},
                                 {"quantAxis", 1}, {"scaleSource", {{"shard", 1}, {"offset", 100}, {"size", 40}}}}}};
  json m = {{"version", 1},
            {"shards", {{{"index", 0}, {"filename", "a"}, {"size", 2000}, {"hash", std::string(64, 'a')}},
                        {{"index", 1}, {"filename", "b"}, {"size", 1000}, {"hash", std::string(64, 'b')}, {"offset", 2000}}}},
            {"tensors", {{"w", w}, {"s", {{"shard", 0}, {"offset", 160}, {"size", 20}, {"shape", {2, 5}}, {"dtype", "BF16"}}},
                         {"h", {{"shard", 0}, {"offset", 180}, {"size", 16}, {"shape", {2}}, {"dtype", "I64"}}},
                         {"t", t},
                         {"q", {{"shard", 0}, {"offset", 400}, {"size", 864}, {"shape", {3, 300}}, {"dtype", "Q4_K_M"}, {"layout", "row"}}},
                         {"c", {{"shard", 1}, {"offset", 200}, {"size", 288}, {"shape", {8, 1, 40}}, {"dtype", "Q4_K_M"}}}}}};
  std::string seed = m.dump();
  ASSERT_NO_THROW(bs::parse_manifest(seed, "seed.json"));
  std::mt19937_64 r(777);
  for (int i = 0; i < 4000; ++i) {
    std::string s = mutate(seed, r);
    fuzz_manifest(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}
