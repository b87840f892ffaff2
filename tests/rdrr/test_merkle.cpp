// DOPPLER's block Merkle roots: the tree rules (leaf/node hashing, odd levels, empty tensors) checked
// against a direct SHA-256 construction, against roots DOPPLER itself wrote, and the manifest block
// parsed as untrusted input.
#include <gtest/gtest.h>

#include <random>

#include "runtime/base/error.h"
#include "sharding/hash.h"
#include "sharding/merkle.h"

using namespace bs;
using nlohmann::json;

namespace {

std::vector<std::byte> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = std::byte(rng());
  return v;
}

std::vector<std::byte> unhex(const std::string& h) {
  std::vector<std::byte> v(h.size() / 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::byte(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return v;
}

std::string sha(std::span<const std::byte> b) { return sha256_hex(b); }

// H(a || b) over two hex digests: an independent spelling of DOPPLER's combineHashes.
std::string node(const std::string& a, const std::string& b) {
  auto bytes = unhex(a + b);
  return sha(bytes);
}

}  // namespace

TEST(Merkle, SingleBlockRootIsTheLeaf) {
  auto b = random_bytes(100, 1);
  EXPECT_EQ(block_merkle_root(b, 100), "sha256:" + sha(b));
  EXPECT_EQ(block_merkle_root(b, 1 << 20), "sha256:" + sha(b));
}

TEST(Merkle, EmptyTensorIsOneEmptyBlock) {
  EXPECT_EQ(block_merkle_root({}, 4), "sha256:" + sha({}));
  BlockMerkleBuilder m(4);
  EXPECT_EQ(m.root(), "sha256:" + sha({}));
}

TEST(Merkle, OddLevelsPairTheLastNodeWithItself) {
  // 5 blocks of 4 bytes (the last one short): levels 5 -> 3 -> 2 -> 1.
  auto b = random_bytes(19, 2);
  std::span<const std::byte> s(b);
  std::string l[5];
  for (int i = 0; i < 5; ++i) l[i] = sha(s.subspan(4 * i, std::min<size_t>(4, 19 - 4 * i)));
  std::string n0 = node(l[0], l[1]), n1 = node(l[2], l[3]), n2 = node(l[4], l[4]);
  std::string m0 = node(n0, n1), m1 = node(n2, n2);
  EXPECT_EQ(block_merkle_root(b, 4), "sha256:" + node(m0, m1));
  // Two blocks exactly: one level.
  auto c = random_bytes(8, 3);
  std::span<const std::byte> t(c);
  EXPECT_EQ(block_merkle_root(c, 4), "sha256:" + node(sha(t.first(4)), sha(t.last(4))));
}

TEST(Merkle, BuilderInPiecesEqualsOneShot) {
  auto b = random_bytes(10000, 4);
  for (uint64_t bs : {1ull, 7ull, 64ull, 1000ull, 4096ull, 10000ull, 20000ull}) {
    for (size_t piece : {1u, 3u, 999u, 4096u, 10000u}) {
      BlockMerkleBuilder m(bs);
      for (size_t off = 0; off < b.size(); off += piece)
        m.add(std::span<const std::byte>(b).subspan(off, std::min(piece, b.size() - off)));
      EXPECT_EQ(m.root(), block_merkle_root(b, bs)) << "blockSize " << bs << " piece " << piece;
    }
  }
}

TEST(Merkle, MatchesRootsDopplerWrote) {
  // Two-byte F16 tensors of DOPPLER's gemma-4-12b-it-text-q4k-ehf16-af16 manifest (blockSize 1 MiB):
  // their values were found by searching all 65536 two-byte strings for the manifest's root. They pin
  // the leaf form (plain SHA-256 of the bytes, no prefix byte) and the "sha256:" spelling; multi-block
  // roots cannot be checked without DOPPLER's shard bytes, which are not available here.
  struct Case {
    const char* tensor;
    const char* bytes;
    const char* root;
  };
  const Case cases[] = {
      {"model.language_model.layers.0.layer_scalar", "c82a",
       "sha256:389b9528592a9735000a8157bb1ad0cd7555529f13ac807c37b6a3c08c790093"},
      {"model.language_model.layers.1.layer_scalar", "5031",
       "sha256:fbeae7c18667b6987518f3ae61ed8b19038e5961e8e7368597428eff76e4842a"},
      {"model.language_model.layers.10.layer_scalar", "a82e",
       "sha256:bef7846931ed4f779677cfbe23ed9936f0a35683833e76f847d3ec559c201fac"},
  };
  for (auto& c : cases) EXPECT_EQ(block_merkle_root(unhex(c.bytes), 1 << 20), c.root) << c.tensor;
}

TEST(Merkle, ParsesTheManifestBlock) {
  auto known = [](const std::string& n) { return n == "a" || n == "b"; };
  std::string r = "sha256:" + std::string(64, 'a');
  json j = {{"integrityExtensions",
             {{"contractVersion", 1}, {"blockMerkle", {{"blockSize", 1048576}, {"roots", {{"a", r}}}}}}}};
  auto bm = parse_block_merkle(j, "m.json", known);
  ASSERT_TRUE(bm);
  EXPECT_EQ(bm->block_size, 1048576u);
  EXPECT_EQ(bm->roots.at("a"), r);
  EXPECT_FALSE(parse_block_merkle(json::object(), "m.json", known));
  EXPECT_FALSE(parse_block_merkle(json{{"integrityExtensions", {{"contractVersion", 1}}}}, "m.json", known));
}

TEST(Merkle, RejectsMalformedBlocks) {
  auto known = [](const std::string& n) { return n == "a"; };
  std::string r = "sha256:" + std::string(64, 'a');
  auto with = [](json bm) { return json{{"integrityExtensions", {{"blockMerkle", bm}}}}; };
  auto expect_error = [&](const json& j, const std::string& needle) {
    try {
      parse_block_merkle(j, "m.json", known);
      ADD_FAILURE() << "accepted: " << j.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
    }
  };
  expect_error(json{{"integrityExtensions", 3}}, "integrityExtensions: expected an object");
  expect_error(with("x"), "blockMerkle: expected an object");
  expect_error(with({{"roots", json::object()}}), "missing field 'blockSize'");
  for (json bad : {json(0), json(-1), json(1.5), json("1024"), json(uint64_t(1) << 41)})
    expect_error(with({{"blockSize", bad}, {"roots", json::object()}}),
                 "blockSize: expected a positive integer");
  expect_error(with({{"blockSize", 4}}), "missing field 'roots'");
  expect_error(with({{"blockSize", 4}, {"roots", json::array()}}), "roots: expected an object");
  expect_error(with({{"blockSize", 4}, {"roots", {{"a", 5}}}}), "roots['a']: expected a string");
  expect_error(with({{"blockSize", 4}, {"roots", {{"a", "blake3:" + std::string(64, 'a')}}}}), "roots['a']");
  expect_error(with({{"blockSize", 4}, {"roots", {{"a", std::string(64, 'a')}}}}), "expected \"sha256:\"");
  expect_error(with({{"blockSize", 4}, {"roots", {{"a", "sha256:" + std::string(63, 'a')}}}}), "roots['a']");
  expect_error(with({{"blockSize", 4}, {"roots", {{"a", "sha256:" + std::string(64, 'A')}}}}), "roots['a']");
  expect_error(with({{"blockSize", 4}, {"roots", {{"z", r}}}}), "the manifest has no tensor 'z'");
}

int fuzz_block_merkle(const uint8_t* data, size_t size);

TEST(Merkle, FuzzTargetSurvivesMutations) {
  json seed_json = {
      {"integrityExtensions",
       {{"contractVersion", 1},
        {"blockMerkle",
         {{"blockSize", 1048576},
          {"roots",
           {{"t.a", "sha256:" + std::string(64, '1')}, {"t.b", "sha256:" + std::string(64, '2')}}}}}}}};
  std::string seed = seed_json.dump();
  ASSERT_EQ(fuzz_block_merkle(reinterpret_cast<const uint8_t*>(seed.data()), seed.size()), 0);
  std::mt19937_64 r(777);
  const char kBytes[] = "{}[]\":,0123456789-.eatsh ";
  for (int i = 0; i < 4000; ++i) {
    std::string s = seed;
    for (int k = 0, n = 1 + int(r() % 4); k < n && !s.empty(); ++k) {
      size_t at = r() % s.size();
      switch (r() % 4) {
        case 0:
          s[at] = kBytes[r() % (sizeof(kBytes) - 1)];
          break;
        case 1:
          s.erase(at, 1 + r() % 8);
          break;
        case 2:
          s.insert(at, 1, kBytes[r() % (sizeof(kBytes) - 1)]);
          break;
        default:
          s.resize(at);
          break;
      }
    }
    fuzz_block_merkle(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}
