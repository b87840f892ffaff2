// blueshift verify MODEL_DIR [--json] [--deep]: re-hash every shard against the manifest (with its
// hashAlgorithm, SHA-256 or BLAKE3, where a "blake3" hash may also be DOPPLER's variant of it, and the
// output says which the shards matched). Exit 0 when all match; otherwise every bad shard is named with
// expected vs actual, and the exit code is 4 (integrity). --deep also recomputes DOPPLER's per-tensor
// block Merkle roots (integrityExtensions.blockMerkle) and names every tensor whose root differs.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/command.h"
#include "runtime/base/error.h"
#include "runtime/base/progress.h"
#include "sharding/hash.h"
#include "sharding/merkle.h"
#include "sharding/reader.h"

namespace {

namespace fs = std::filesystem;

struct Args {
  std::string dir;
  bool json = false, quick = false, loader = false, deep = false;
  int threads = 0;
};

// The manifest's blockMerkle block, checked against the tensors the manifest lists.
std::optional<bs::BlockMerkle> read_block_merkle(const bs::Manifest& m, const fs::path& dir) {
  fs::path p = dir / "manifest.json";
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);  // read_manifest parsed it already
  return bs::parse_block_merkle(j, p.string(), [&m](const std::string& name) {
    for (auto& t : m.tensors)
      if (t.name == name) return true;
    return false;
  });
}

// The deep check's tally: which tensors' roots differ.
struct DeepCheck {
  const bs::BlockMerkle* bm = nullptr;
  size_t checked = 0, without_root = 0;
  struct Bad {
    std::string tensor, expected, actual;
  };
  std::vector<Bad> bad;

  void tensor(const bs::TensorEntry& t, std::span<const std::byte> bytes) {
    // An entry the parser added (an int4 table's row scales) has no root of its own: DOPPLER roots the
    // manifest's tensors. Its bytes are checked by its shard's hash.
    if (t.implied) return;
    auto it = bm->roots.find(t.name);
    if (it == bm->roots.end()) {
      ++without_root;
      return;
    }
    ++checked;
    std::string root = bs::block_merkle_root(bytes, bm->block_size);
    if (root != it->second) bad.push_back({t.name, it->second, root});
  }
  nlohmann::ordered_json to_json() const {
    nlohmann::ordered_json j = {
        {"blockSize", bm->block_size}, {"checked", checked}, {"withoutRoot", without_root}};
    auto& b = j["mismatches"] = nlohmann::ordered_json::array();
    for (auto& x : bad) b.push_back({{"tensor", x.tensor}, {"expected", x.expected}, {"actual", x.actual}});
    return j;
  }
  void print(const std::string& dir) const {
    for (auto& x : bad)
      std::fprintf(stderr, "BAD %s: tensor '%s': blockMerkle root mismatch: expected %s, got %s\n",
                   dir.c_str(), x.tensor.c_str(), x.expected.c_str(), x.actual.c_str());
    std::FILE* out = bad.empty() ? stdout : stderr;
    std::fprintf(out, "%s: deep: %zu of %zu tensor roots match (blockMerkle, blockSize %llu)%s\n",
                 dir.c_str(), checked - bad.size(), checked, (unsigned long long)bm->block_size,
                 without_root ? fmt::format(", {} tensors without a root", without_root).c_str() : "");
  }
};

// Which BLAKE3 the shards matched (sharding/hash.h): "spec", "doppler", "mixed", or "" when no hash of
// a "blake3" manifest matched (or it is SHA-256).
std::string hash_variant(const bs::ShardHashCheck& c) {
  const uint64_t spec = c.matched(bs::Blake3Variant::spec), dop = c.matched(bs::Blake3Variant::doppler);
  if (dop && spec) return "mixed";
  if (dop) return std::string(bs::blake3_variant_name(bs::Blake3Variant::doppler));
  return spec ? std::string(bs::blake3_variant_name(bs::Blake3Variant::spec)) : "";
}

// The algorithm as the text output names it: "sha256", "blake3", or with DOPPLER's variant
// "blake3 (DOPPLER's variant, doppler-gpu <= 0.5.1)".
std::string hash_label(const bs::Manifest& m, const bs::ShardHashCheck& c) {
  const std::string v = hash_variant(c);
  if (v == "doppler")
    return fmt::format("{} ({})", m.hash_algorithm,
                       bs::blake3_variant_description(bs::Blake3Variant::doppler));
  if (v == "mixed")
    return fmt::format("{} ({} shard hashes spec, {} {})", m.hash_algorithm,
                       c.matched(bs::Blake3Variant::spec), c.matched(bs::Blake3Variant::doppler),
                       bs::blake3_variant_description(bs::Blake3Variant::doppler));
  return m.hash_algorithm;
}

constexpr const char* kNoBlockMerkle =
    "the manifest has no integrityExtensions.blockMerkle: no tensor roots to check";

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("MODEL_DIR", a->dir, "RDRR model directory")->required();
  app.add_flag("--json", a->json, "print the result as JSON");
  app.add_flag("--quick", a->quick, "check stored files only (size and storedHash); do not decompress");
  app.add_flag(
      "--deep", a->deep,
      "also recompute every tensor's block Merkle root (DOPPLER's integrityExtensions.blockMerkle) and "
      "name each tensor whose root differs");
  app.add_option("--threads", a->threads, "worker threads (0 = all cores)");
  app.add_flag(
      "--loader", a->loader,
      "check through the model loader (verify + decompress + deliver every tensor, stop at the first "
      "error) and report its throughput");
  app.callback([a] {
    if (a->deep && a->quick)
      bs::fail_kind(bs::ErrorKind::usage, "--deep needs the raw bytes: it cannot go with --quick");
    bs::Manifest m = bs::read_manifest(a->dir);
    std::optional<bs::BlockMerkle> bm;
    if (a->deep) bm = read_block_merkle(m, a->dir);
    DeepCheck deep;
    if (bm) deep.bm = &*bm;
    bs::LoadOptions o;
    o.threads = a->threads;
    // One check for every pass over the shards, so that a DOPPLER bundle's variant is learnt once.
    bs::ShardHashCheck hash_check(*bs::parse_hash_algorithm(m.hash_algorithm));  // read_manifest checked it
    o.hash_check = &hash_check;
    if (a->loader) {
      bs::ProgressBar bar("load", m.total_size);
      o.progress = [&bar](uint64_t done, uint64_t) { bar.update(done); };
      uint64_t tensors = 0, checksum = 0;
      auto t0 = std::chrono::steady_clock::now();
      bs::load_tensors(m, a->dir, o, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
        tensors += !t.implied;  // the manifest's tensors, as `info` counts them
        if (!b.empty()) checksum += uint64_t(b[0]) + uint64_t(b[b.size() - 1]);  // touch the bytes
        if (bm) deep.tensor(t, b);
      });
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      bar.finish();
      std::printf("%s: OK via loader (%s), %llu tensors, %.1f MB raw in %.2f s (%.2f GB/s)\n", a->dir.c_str(),
                  hash_label(m, hash_check).c_str(), (unsigned long long)tensors, double(m.total_size) / 1e6,
                  s, double(m.total_size) / 1e9 / s);
      (void)checksum;
      if (a->deep && !bm) std::printf("%s: deep: %s\n", a->dir.c_str(), kNoBlockMerkle);
      if (bm) deep.print(a->dir);
      if (!deep.bad.empty()) bs::cli::set_exit_code(int(bs::ErrorKind::integrity));
      return;
    }
    bs::ProgressBar bar("verify", m.total_size);
    o.progress = [&bar](uint64_t done, uint64_t) { bar.update(done); };
    auto problems = bs::verify_shards(m, a->dir, o, !a->quick);
    bar.finish();
    // The roots are recomputed from verified shards only: a bad shard is already reported by name.
    bool deep_ran = false;
    if (bm && problems.empty()) {
      bs::ProgressBar deep_bar("deep", m.total_size);
      o.progress = [&deep_bar](uint64_t done, uint64_t) { deep_bar.update(done); };
      bs::load_tensors(m, a->dir, o,
                       [&](const bs::TensorEntry& t, std::span<const std::byte> b) { deep.tensor(t, b); });
      deep_bar.finish();
      deep_ran = true;
    }
    const bool ok = problems.empty() && deep.bad.empty();
    if (a->json) {
      nlohmann::ordered_json j;
      j["ok"] = ok;
      j["hashAlgorithm"] = m.hash_algorithm;
      if (m.hash_algorithm == "blake3") {  // which BLAKE3 the hashes matched; null when none did
        std::string v = hash_variant(hash_check);
        j["hashVariant"] = v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(v);
      }
      j["shards"] = m.shards.size();
      j["bytes"] = m.total_size;
      auto& bad = j["problems"] = nlohmann::ordered_json::array();
      for (auto& p : problems)
        bad.push_back({{"index", p.index},
                       {"file", p.filename},
                       {"check", p.check},
                       {"expected", p.expected},
                       {"actual", p.actual},
                       {"message", p.message}});
      if (a->deep) {
        if (deep_ran)
          j["deep"] = deep.to_json();
        else
          j["deep"] = {{"checked", false}, {"reason", bm ? "shards failed verification" : kNoBlockMerkle}};
      }
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      if (problems.empty()) {
        std::printf("%s: OK, %zu shards, %.1f MB verified (%s%s)\n", a->dir.c_str(), m.shards.size(),
                    double(m.total_size) / 1e6, hash_label(m, hash_check).c_str(),
                    a->quick ? ", stored files only" : "");
      } else {
        for (auto& p : problems) std::fprintf(stderr, "BAD %s\n", p.message.c_str());
        std::fprintf(stderr, "%s: %zu of %zu shards failed verification (%s)\n", a->dir.c_str(),
                     problems.size(), m.shards.size(), hash_label(m, hash_check).c_str());
      }
      if (a->deep && !bm)
        std::printf("%s: deep: %s\n", a->dir.c_str(), kNoBlockMerkle);
      else if (a->deep && !deep_ran)
        std::fprintf(stderr, "%s: deep: not run, shards failed verification\n", a->dir.c_str());
      if (deep_ran) deep.print(a->dir);
    }
    if (!ok) bs::cli::set_exit_code(int(bs::ErrorKind::integrity));
  });
}

bs::cli::Command verify_cmd{"verify", "Re-hash every shard of an RDRR model against its manifest", setup};

}  // namespace
