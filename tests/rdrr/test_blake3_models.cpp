// Models whose shards are hashed with BLAKE3 (convert --hash blake3, DOPPLER's newer manifests) and
// DOPPLER's per-tensor block Merkle roots checked by `verify --deep`: conversion, loading, a flipped
// byte named by shard, a tampered tensor named by tensor, malformed integrityExtensions.
#include <gtest/gtest.h>

#include <map>

#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "sharding/hash.h"
#include "sharding/merkle.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"
#include "tests/rdrr/fixture.h"

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

ConvertResult convert_with(const fs::path& hf, const fs::path& out, HashAlgorithm hash, bool compress) {
  ConvertOptions o;
  o.quant = QuantMode::q8_0;
  o.threads = 2;
  o.shards.shard_size = 32 << 10;
  o.shards.compress = compress;
  o.shards.min_saving = 0;
  o.shards.hash = hash;
  return convert_model(hf, out, o);
}

std::map<std::string, std::vector<std::byte>> load_all(const Manifest& m, const fs::path& dir) {
  std::map<std::string, std::vector<std::byte>> out;
  LoadOptions o;
  o.threads = 2;
  load_tensors(m, dir, o, [&](const TensorEntry& t, std::span<const std::byte> b) {
    out.emplace(t.name, std::vector<std::byte>(b.begin(), b.end()));
  });
  return out;
}

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

}  // namespace

TEST(Blake3Models, ConvertWritesAndLoadsBlake3Shards) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama"));
  auto sha = convert_with(hf, dir / "sha", HashAlgorithm::sha256, true);
  for (bool compress : {false, true}) {
    fs::path out = dir / (compress ? "zst" : "plain");
    auto r = convert_with(hf, out, HashAlgorithm::blake3, compress);
    EXPECT_EQ(r.manifest.hash_algorithm, "blake3");
    Manifest m = read_manifest(out);
    ASSERT_EQ(m.hash_algorithm, "blake3");
    ASSERT_GT(m.shards.size(), 2u);
    bool any_compressed = false;
    for (auto& s : m.shards) {
      std::string file = read_file(out / s.filename);
      EXPECT_EQ(s.file_hash(), blake3_hex(bytes_of(file))) << s.filename;
      any_compressed |= s.compressed;
    }
    EXPECT_EQ(any_compressed, compress);
    EXPECT_TRUE(verify_shards(m, out, {}).empty());
    EXPECT_EQ(load_all(m, out), load_all(sha.manifest, dir / "sha"));  // same tensors, only the hash differs
    // A BLAKE3 manifest whose hash is malformed is named as BLAKE3, not SHA-256.
    json j = json::parse(read_file(out / "manifest.json"));
    j["shards"][1]["hash"] = "xyz";
    try {
      parse_manifest(j.dump(), "manifest.json");
      ADD_FAILURE() << "bad hash accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("shards[1].hash: expected 64 lowercase hex digits (BLAKE3)"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Blake3Models, FlippedByteInABlake3ShardFailsVerify) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("qwen3"));
  auto r = run_blueshift({"convert", hf.string(), (dir / "m").string(), "--quant", "q8_0", "--shard-size",
                          "0.05", "--hash", "blake3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["hash_algorithm"], "blake3");
  r = run_blueshift({"verify", (dir / "m").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(blake3)"), std::string::npos) << r.out;
  json manifest = json::parse(read_file(dir / "m/manifest.json"));
  EXPECT_EQ(manifest["hashAlgorithm"], "blake3");
  std::string s1 = manifest["shards"][1]["filename"];
  std::string bytes = read_file(dir / "m" / s1);
  bytes[bytes.size() / 3] ^= 0x20;
  write_file(dir / "m" / s1, bytes);
  r = run_blueshift({"verify", (dir / "m").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find(s1), std::string::npos) << r.err;
  r = run_blueshift({"verify", (dir / "m").string(), "--json"});
  EXPECT_EQ(r.exit_code, 4);
  json v = json::parse(r.out);
  EXPECT_EQ(v["hashAlgorithm"], "blake3");
  ASSERT_EQ(v["problems"].size(), 1u);
  EXPECT_EQ(v["problems"][0]["file"], s1);
  r = run_blueshift({"convert", hf.string(), (dir / "x").string(), "--hash", "md5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--hash: expected sha256 or blake3, got 'md5'"), std::string::npos) << r.err;
}

TEST(Blake3Models, DeepVerifyNamesATamperedTensor) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama"));
  fs::path out = dir / "m";
  auto conv = convert_with(hf, out, HashAlgorithm::blake3, /*compress=*/false);
  auto r = run_blueshift({"verify", out.string(), "--deep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no integrityExtensions.blockMerkle"), std::string::npos) << r.out;

  // Roots as DOPPLER writes them, with a small block so that trees have several levels.
  const uint64_t block = 1000;
  json j = json::parse(read_file(out / "manifest.json"));
  json roots = json::object();
  for (auto& [name, bytes] : load_all(conv.manifest, out)) roots[name] = block_merkle_root(bytes, block);
  j["integrityExtensions"] = {{"contractVersion", 1},
                              {"blockMerkle", {{"blockSize", block}, {"roots", roots}}}};
  write_file(out / "manifest.json", j.dump(1));
  r = run_blueshift({"verify", out.string(), "--deep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("{} of {} tensor roots match", roots.size(), roots.size())),
            std::string::npos)
      << r.out;

  // Tamper one byte deep inside a multi-block tensor, then fix the shard's hash: only the root can tell.
  const TensorEntry* victim = nullptr;
  for (auto& t : conv.manifest.tensors)
    if (t.spans.size() == 1 && t.size > 3 * block) victim = &t;
  ASSERT_NE(victim, nullptr);
  const ShardInfo& shard = conv.manifest.shards[victim->spans[0].shard];
  std::string bytes = read_file(out / shard.filename);
  bytes[victim->spans[0].offset + 2 * block + 7] ^= 1;
  write_file(out / shard.filename, bytes);
  j["shards"][shard.index]["hash"] = blake3_hex(bytes_of(bytes));
  write_file(out / "manifest.json", j.dump(1));
  r = run_blueshift({"verify", out.string()});
  EXPECT_EQ(r.exit_code, 0) << "shard hashes were fixed: " << r.err;
  r = run_blueshift({"verify", out.string(), "--deep"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("tensor '" + victim->name + "': blockMerkle root mismatch"), std::string::npos)
      << r.err;
  r = run_blueshift({"verify", out.string(), "--deep", "--json"});
  EXPECT_EQ(r.exit_code, 4);
  json v = json::parse(r.out);
  EXPECT_FALSE(v["ok"].get<bool>());
  ASSERT_EQ(v["deep"]["mismatches"].size(), 1u);
  EXPECT_EQ(v["deep"]["mismatches"][0]["tensor"], victim->name);
  r = run_blueshift({"verify", out.string(), "--deep", "--loader"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find(victim->name), std::string::npos) << r.err;

  // Malformed integrityExtensions: exit 3 naming the field.
  auto expect_bad = [&](json bm, const std::string& needle) {
    json k = j;
    k["integrityExtensions"]["blockMerkle"] = bm;
    write_file(out / "manifest.json", k.dump(1));
    auto rr = run_blueshift({"verify", out.string(), "--deep"});
    EXPECT_EQ(rr.exit_code, 3) << rr.err;
    EXPECT_NE(rr.err.find(needle), std::string::npos) << rr.err;
  };
  json extra = roots;
  extra["no.such.tensor"] = roots[victim->name];
  expect_bad({{"blockSize", block}, {"roots", extra}}, "the manifest has no tensor 'no.such.tensor'");
  expect_bad({{"blockSize", 0}, {"roots", roots}}, "blockMerkle.blockSize: expected a positive integer");
  json prefixed = roots;
  prefixed[victim->name] = "blake3:" + std::string(64, '0');
  expect_bad({{"blockSize", block}, {"roots", prefixed}},
             "expected \"sha256:\" followed by 64 lowercase hex digits");
  r = run_blueshift({"verify", out.string(), "--deep", "--quick"});
  EXPECT_EQ(r.exit_code, 2);
}

// Every blockMerkle block DOPPLER ships among the shared manifests parses: 1 MiB blocks, a "sha256:"
// root for every tensor.
TEST(Blake3Models, DopplerBlockMerkleBlocksParse) {
  BS_REQUIRE_SHARED();
  size_t with = 0;
  for (auto& e : fs::directory_iterator(shared_dir() / "data/doppler")) {
    fs::path p = e.path() / "manifest.json";
    if (!fs::exists(p)) continue;
    json j = json::parse(read_file(p));
    auto bm =
        parse_block_merkle(j, p.string(), [&](const std::string& n) { return j["tensors"].contains(n); });
    if (!bm) continue;
    ++with;
    EXPECT_EQ(bm->block_size, 1u << 20) << p;
    EXPECT_EQ(bm->roots.size(), j["tensors"].size()) << p;
  }
  EXPECT_GE(with, 6u);
}

namespace {

// Rewrites the manifest of a converted bundle so that every shard's `hash` is DOPPLER's variant of
// BLAKE3 (what DOPPLER's converter writes under "hashAlgorithm": "blake3"), except the shards in
// `spec_shards`, which get spec BLAKE3. Returns the rewritten manifest.
json dopplerize(const fs::path& dir, std::initializer_list<size_t> spec_shards = {}) {
  const Manifest m = read_manifest(dir);
  json j = json::parse(read_file(dir / "manifest.json"));
  for (size_t i = 0; i < j["shards"].size(); ++i) {
    const bool spec = std::find(spec_shards.begin(), spec_shards.end(), i) != spec_shards.end();
    // The raw bytes' hash (decompressed where the shard is stored zstd; storedHash stays spec).
    std::vector<std::byte> raw = read_verified_shard(m, m.shards[i], dir);
    j["shards"][i]["hash"] = blake3_hex(raw, 1, spec ? Blake3Variant::spec : Blake3Variant::doppler);
  }
  write_file(dir / "manifest.json", j.dump(1));
  return j;
}

}  // namespace

// A bundle whose shard hashes are DOPPLER's "blake3" verifies and loads, says so, learns the variant
// on the first shard, and still names a shard with a flipped byte (exit 4, the spec hash as actual).
TEST(Blake3Models, DopplerVariantShardHashesVerifyAndLoad) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama"));
  fs::path out = dir / "m";
  auto conv = convert_with(hf, out, HashAlgorithm::blake3, /*compress=*/false);
  const auto want = load_all(conv.manifest, out);
  json j = dopplerize(out);
  Manifest m = read_manifest(out);
  ASSERT_GT(m.shards.size(), 2u);
  EXPECT_NE(m.shards[0].hash, conv.manifest.shards[0].hash);

  ShardHashCheck check(HashAlgorithm::blake3);
  LoadOptions o;
  o.threads = 1;  // one worker: the second hash is paid on the first shard only
  o.hash_check = &check;
  EXPECT_TRUE(verify_shards(m, out, o).empty());
  EXPECT_EQ(check.matched(Blake3Variant::doppler), m.shards.size());
  EXPECT_EQ(check.matched(Blake3Variant::spec), 0u);
  EXPECT_EQ(check.hashes_computed(), m.shards.size() + 1);
  EXPECT_EQ(load_all(m, out), want);  // a fresh check per load when none is given

  auto r = run_blueshift({"verify", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("blake3 (DOPPLER's variant, doppler-gpu <= 0.5.1)"), std::string::npos) << r.out;
  r = run_blueshift({"verify", out.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["hashVariant"], "doppler");
  r = run_blueshift({"verify", out.string(), "--loader"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("DOPPLER's variant"), std::string::npos) << r.out;

  // One shard left spec: accepted, reported as mixed.
  dopplerize(out, {1});
  r = run_blueshift({"verify", out.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["hashVariant"], "mixed");
  dopplerize(out);

  const std::string victim = j["shards"][1]["filename"];
  std::string bytes = read_file(out / victim);
  bytes[bytes.size() / 2] ^= 0x01;
  write_file(out / victim, bytes);
  r = run_blueshift({"verify", out.string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find(victim + ": hash mismatch"), std::string::npos) << r.err;
  r = run_blueshift({"verify", out.string(), "--json"});
  EXPECT_EQ(r.exit_code, 4);
  json v = json::parse(r.out);
  ASSERT_EQ(v["problems"].size(), 1u);
  EXPECT_EQ(v["problems"][0]["file"], victim);
  EXPECT_EQ(v["problems"][0]["actual"], blake3_hex(bytes_of(bytes)));  // named by the spec hash
  EXPECT_EQ(v["hashVariant"], "doppler");                              // the other shards
  try {
    load_all(m, out);
    ADD_FAILURE() << "a flipped byte loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::integrity);
    EXPECT_NE(std::string(e.what()).find(victim), std::string::npos) << e.what();
  }
}

// storedHash is blueshift's own extension, always spec BLAKE3: DOPPLER's variant there is a mismatch,
// while the raw `hash` of a compressed shard may be either.
TEST(Blake3Models, StoredHashIsSpecOnly) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama"));
  fs::path out = dir / "m";
  auto conv = convert_with(hf, out, HashAlgorithm::blake3, /*compress=*/true);
  json j = dopplerize(out);
  size_t z = 0;
  while (z < j["shards"].size() && !j["shards"][z].contains("storedHash")) ++z;
  ASSERT_LT(z, j["shards"].size());
  auto r = run_blueshift({"verify", out.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["hashVariant"], "doppler");
  const std::string file = j["shards"][z]["filename"];
  j["shards"][z]["storedHash"] = blake3_hex(bytes_of(read_file(out / file)), 1, Blake3Variant::doppler);
  write_file(out / "manifest.json", j.dump(1));
  r = run_blueshift({"verify", out.string(), "--json"});
  EXPECT_EQ(r.exit_code, 4);
  json v = json::parse(r.out);
  ASSERT_EQ(v["problems"].size(), 1u);
  EXPECT_EQ(v["problems"][0]["check"], "storedHash");
  EXPECT_EQ(v["problems"][0]["file"], file);
}
