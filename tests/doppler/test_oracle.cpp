// DOPPLER's own converter as a test oracle. The tiny HF checkpoints (../shared's gemma3-tiny and
// qwen3-tiny, and the committed tests/model/goldens/gemma3-pad320, whose hidden 320 and intermediate
// 448 make DOPPLER pad Q4_K rows to whole 256-blocks) are converted to RDRR by `doppler-gpu` 0.5.1
// (npm; its CLI runs headless under Node, no GPU), as F16 and as Q4_K_M (row layout; one case in its
// transposed col layout), some with 256 KiB shards so tensors cross shards, some hashed with DOPPLER's
// "blake3". blueshift must then verify each bundle (verify --deep: shard hashes and DOPPLER's
// per-tensor Merkle roots), describe it, and run it through the
// prefill and decode paths:
//   - F16: against transformers' float32 logits, worst row rel L2 <= 1e-2, top-1 >= 98%;
//   - Q4_K: at the same bound against blueshift's float64 CPU forward over the same weights, and
//     against blueshift's HF path over DOPPLER's own dequantization of the bundle (dequant_to_hf.mjs),
//     which shares nothing with blueshift's RDRR loader; and within 0.6 of transformers (4-bit
//     quantization of random weights itself moves the logits 0.24-0.40 rel L2 from transformers;
//     unrelated weights would be ~1.4).
//
// The doppler.install fixture (install_doppler.sh) puts the package under BS_DOPPLER_PREFIX; without
// it (no node, npm or registry) the cases skip, saying why. BS_DOPPLER_DIR points at another copy.
// The conversion config for each case is DOPPLER's own shipped config for the family (Gemma 3 270M,
// Qwen 3 0.6B), read from the package, with the tiny model's sizes and the case's options put in.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/base/npy.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Source {
  std::string name, family;  // family: gemma3 | qwen3 (picks DOPPLER's config)
  bool shared;               // in ../shared/data/models, else tests/model/goldens
};

struct Flavour {
  std::string name;
  bool q4k;
  std::string hash;        // DOPPLER's manifest.hashAlgorithm
  uint64_t shard_bytes;    // 0: DOPPLER's default (64 MiB: one shard here)
  std::string q4k_layout = "row";
};

struct Case {
  Source source;
  Flavour flavour;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.source.name << " as " << c.flavour.name; }

const Flavour kF16{"f16", false, "sha256", 0}, kQ4k{"q4k", true, "sha256", 0},
    kF16Spans{"f16_spans", false, "sha256", 256 << 10}, kQ4kSpans{"q4k_spans", true, "sha256", 256 << 10},
    kF16Blake3{"f16_blake3", false, "blake3", 0}, kQ4kBlake3{"q4k_blake3", true, "blake3", 0},
    kQ4kCol{"q4k_col", true, "sha256", 0, "col"};  // DOPPLER's transposed Q4_K (for its dequantize-then-matmul path)

std::vector<Case> cases() {
  Source gemma{"gemma3-tiny", "gemma3", true}, qwen{"qwen3-tiny", "qwen3", true}, pad{"gemma3-pad320", "gemma3", false};
  return {{gemma, kF16}, {gemma, kQ4k}, {qwen, kF16}, {qwen, kQ4k},
          {pad, kF16},   {pad, kQ4k},   {pad, kF16Spans}, {pad, kQ4kSpans}, {pad, kF16Blake3}, {pad, kQ4kBlake3},
          {pad, kQ4kCol}};
}

fs::path doppler_dir() {
  const char* env = std::getenv("BS_DOPPLER_DIR");
  return env ? fs::path(env) : fs::path(BS_DEFAULT_DOPPLER_DIR);
}

// Why DOPPLER's converter cannot run here, or "".
std::string doppler_missing() {
  if (!fs::exists(doppler_dir() / "src" / "cli" / "doppler-cli.js"))
    return "needs DOPPLER's converter (npm doppler-gpu 0.5.1) at " + doppler_dir().string() +
           ": the doppler.install test installs it when node, npm and the registry are reachable";
  if (std::system("node --version >/dev/null 2>&1") != 0) return "needs node on PATH for DOPPLER's converter";
  return "";
}

fs::path model_dir(const Source& s) {
  return s.shared ? shared_dir() / "data" / "models" / s.name : source_dir() / "tests" / "model" / "goldens" / s.name;
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  if (!f) throw std::runtime_error(p.string() + ": cannot open");
  return json::parse(f);
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string tail_of(const fs::path& p, size_t n) {
  std::ifstream f(p);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return s.size() > n ? "..." + s.substr(s.size() - n) : s;
}

// DOPPLER's config for the family with the tiny model's sizes and the flavour's options: everything
// its converter takes from the config rather than from config.json (the inference block, the
// execution graph it insists on, quantization, hashing, shard size).
json converter_config(const Case& c, const json& hf) {
  const bool gemma = c.source.family == "gemma3";
  std::string file = gemma ? (c.flavour.q4k ? "gemma3/gemma-3-270m-it-q4k-ehf16-af32.json" : "gemma3/gemma-3-270m-it-f16-af32.json")
                           : (c.flavour.q4k ? "qwen3/qwen-3-reranker-0-6b-q4k-ehf16-af32.json"
                                            : "qwen3/qwen-3-reranker-0-6b-f16-af32.json");
  json cfg = read_json(doppler_dir() / "src" / "config" / "conversion" / file);
  json& inf = cfg["inference"];
  int head_dim = hf.value("head_dim", hf["hidden_size"].get<int>() / hf["num_attention_heads"].get<int>());
  inf["attention"]["queryPreAttnScalar"] = hf.value("query_pre_attn_scalar", head_dim);
  inf["attention"]["slidingWindow"] = gemma ? hf["sliding_window"] : json(nullptr);
  inf["normalization"]["rmsNormEps"] = hf["rms_norm_eps"];
  inf["output"]["tieWordEmbeddings"] = hf.value("tie_word_embeddings", true);
  const json& rp = hf["rope_parameters"];
  if (rp.contains("full_attention")) {
    inf["rope"]["ropeTheta"] = rp["full_attention"]["rope_theta"];
    inf["rope"]["ropeLocalTheta"] = rp["sliding_attention"]["rope_theta"];
  } else {
    inf["rope"]["ropeTheta"] = rp["rope_theta"];
  }
  if (gemma) {
    // DOPPLER's Gemma 3 config says every 6th layer is global; a model with another pattern lists it.
    json& lp = inf["layerPattern"];
    const json& types = hf["layer_types"];
    bool every_n = true;
    for (size_t i = 0; i < types.size(); ++i)
      every_n &= (types[i] == "full_attention") == (int(i) % lp["period"].get<int>() == lp["offset"].get<int>());
    if (!every_n) {
      lp["type"] = "custom";
      lp["period"] = lp["offset"] = nullptr;
      lp["layerTypes"] = types;
    }
  } else {
    // The Qwen 3 configs DOPPLER ships are its reranker's: keep every MLP quantized, run it as a plain LM.
    cfg["quantization"].erase("modulesToNotConvert");
    inf["supportsRerank"] = false;
    inf["rerank"] = nullptr;
  }
  if (c.flavour.q4k) cfg["quantization"]["q4kLayout"] = c.flavour.q4k_layout;
  cfg["manifest"] = {{"hashAlgorithm", c.flavour.hash}};  // drops the artifactIdentity of Google's model
  if (c.flavour.shard_bytes) cfg["sharding"] = {{"shardSizeBytes", c.flavour.shard_bytes}};
  cfg["output"] = {{"modelBaseId", c.source.name + "-" + c.flavour.name}};
  return cfg;
}

// Runs DOPPLER's CLI: `node doppler-cli.js convert --config REQUEST.json --surface node` in `work`
// (it writes a report folder into the working directory). Returns "" or what went wrong.
std::string doppler_convert(const Case& c, const fs::path& out, const fs::path& work) {
  json hf = read_json(model_dir(c.source) / "config.json");
  json request = {{"request",
                   {{"inputDir", model_dir(c.source).string()},
                    {"outputDir", out.string()},
                    {"convertPayload", {{"converterConfig", converter_config(c, hf)}, {"execution", {{"workers", 1}}}}}}}};
  std::ofstream(work / "request.json") << request.dump(1);
  std::string cmd = "cd " + quote(work.string()) + " && node " +
                    quote((doppler_dir() / "src" / "cli" / "doppler-cli.js").string()) +
                    " convert --config request.json --surface node >convert.log 2>&1";
  std::printf("$ %s\n", cmd.c_str());
  int status = std::system(cmd.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "DOPPLER's converter failed (status " + std::to_string(status) + "): " + tail_of(work / "convert.log", 2000);
  if (!fs::exists(out / "manifest.json")) return "DOPPLER's converter wrote no manifest.json into " + out.string();
  return "";
}

// Prints what DOPPLER wrote and checks that the bundle has what the case asked for, so a passing
// blueshift run means blueshift read that feature.
void inspect_manifest(const Case& c, const json& m) {
  std::map<std::string, int> kinds;
  int spans = 0, padded = 0;
  for (auto& [name, t] : m["tensors"].items()) {
    std::string dtype = t["dtype"];
    kinds[dtype + (t.contains("layout") ? "/" + t["layout"].get<std::string>() : "")]++;
    spans += t.contains("spans");
    if (dtype == "Q4_K_M" && t["shape"].size() == 2) {
      uint64_t rows = t["shape"][0], cols = t["shape"][1];
      if (t.value("layout", "row") == "col") std::swap(rows, cols);  // the transpose was quantized
      EXPECT_EQ(t["size"].get<uint64_t>(), rows * ((cols + 255) / 256) * 144) << name << ": Q4_K rows of whole blocks";
      padded += cols % 256 != 0;
    }
  }
  std::string kinds_text;
  for (auto& [k, n] : kinds) kinds_text += " " + k + " x" + std::to_string(n);
  std::string inference;
  for (auto& [k, v] : m["inference"].items()) inference += (inference.empty() ? "" : ",") + k;
  std::printf("manifest: hashAlgorithm %s, quantization %s, %zu shards, tensors%s; %d with spans, %d Q4_K padded\n"
              "  inference {%s}\n",
              m.value("hashAlgorithm", "?").c_str(), m.value("quantization", "?").c_str(), m["shards"].size(),
              kinds_text.c_str(), spans, padded, inference.c_str());
  EXPECT_EQ(m.value("hashAlgorithm", ""), c.flavour.hash);
  EXPECT_EQ(kinds.count("Q4_K_M/" + c.flavour.q4k_layout) > 0, c.flavour.q4k) << kinds_text;
  if (c.flavour.shard_bytes) {
    EXPECT_GT(spans, 0) << "no tensor crosses a shard";
  }
  if (c.flavour.q4k && c.source.name == "gemma3-pad320") {
    EXPECT_GT(padded, 0) << "no Q4_K row was padded";
  }
}

struct Parity {
  double worst_rel_l2 = 0, top1 = 0;
};

// Worst row's rel L2 and top-1 agreement of ours against a reference (rows x vocab), as
// tests/model/test_parity.cpp measures them.
Parity compare(const std::vector<float>& ours, const std::vector<float>& ref, size_t vocab) {
  Parity p;
  size_t rows = ref.size() / vocab, agree = 0;
  for (size_t r = 0; r < rows; ++r) {
    double num = 0, den = 0;
    size_t a = 0, b = 0;
    for (size_t i = 0; i < vocab; ++i) {
      double o = ours[r * vocab + i], w = ref[r * vocab + i];
      num += (o - w) * (o - w);
      den += w * w;
      if (o > ours[r * vocab + a]) a = i;
      if (w > ref[r * vocab + b]) b = i;
    }
    p.worst_rel_l2 = std::max(p.worst_rel_l2, std::sqrt(num / den));
    agree += a == b;
  }
  p.top1 = double(agree) / rows;
  return p;
}

// `blueshift logits` through one path; empty (with a failed expectation naming the path) on error.
std::vector<float> logits(const fs::path& model, const std::string& tokens, const std::string& path, const TempDir& tmp) {
  auto out = tmp / (path + ".npy");
  std::vector<std::string> args = {"logits", "--model", model.string(), "--tokens", tokens, "--out", out.string()};
  if (path == "decode") args.push_back("--step");
  if (path == "cpu") args.push_back("--cpu-reference");
  auto r = run_blueshift(args);
  EXPECT_EQ(r.exit_code, 0) << "blueshift logits via " << path << ": " << r.err;
  return r.exit_code == 0 ? read_npy_f32(out).data : std::vector<float>{};
}

// Logits of the bundle as DOPPLER itself reads it: dequant_to_hf.mjs writes a float32 HF checkpoint
// with DOPPLER's own Q4_K dequantization, which blueshift runs through its HF path (prefill).
std::vector<float> doppler_dequantized_logits(const fs::path& bundle, const fs::path& config, const std::string& tokens,
                                              const TempDir& tmp) {
  auto hf = tmp / "dequantized";
  std::string cmd = "node " + quote((source_dir() / "tests" / "doppler" / "dequant_to_hf.mjs").string()) + " " +
                    quote(doppler_dir().string()) + " " + quote(bundle.string()) + " " + quote(config.string()) + " " +
                    quote(hf.string()) + " >" + quote((tmp / "dequant.log").string()) + " 2>&1";
  int status = std::system(cmd.c_str());
  EXPECT_EQ(status, 0) << "dequant_to_hf.mjs: " << tail_of(tmp / "dequant.log", 2000);
  return status == 0 ? logits(hf, tokens, "dequantized", tmp) : std::vector<float>{};
}

void expect_parity(const std::string& what, const std::vector<float>& ours, const std::vector<float>& ref, size_t vocab,
                   double max_rel_l2, double min_top1) {
  if (ours.empty() || ref.empty()) return;  // the failed run is reported already
  ASSERT_EQ(ours.size(), ref.size()) << what;
  Parity p = compare(ours, ref, vocab);
  std::printf("  %-38s worst row rel L2 %.2e, top-1 %.1f%%\n", what.c_str(), p.worst_rel_l2, 100 * p.top1);
  ::testing::Test::RecordProperty(what, std::to_string(p.worst_rel_l2));
  EXPECT_LE(p.worst_rel_l2, max_rel_l2) << what;
  EXPECT_GE(p.top1, min_top1) << what;
}

class DopplerOracle : public ::testing::TestWithParam<Case> {};

TEST_P(DopplerOracle, ConvertedBundleRunsInBlueshift) {
  const Case& c = GetParam();
  if (c.source.shared) BS_REQUIRE_SHARED();
  if (auto why = doppler_missing(); !why.empty()) GTEST_SKIP() << why;

  TempDir tmp;
  fs::path bundle = tmp / "rdrr";
  std::string err = doppler_convert(c, bundle, tmp.path);
  ASSERT_EQ(err, "");
  json manifest = read_json(bundle / "manifest.json");
  inspect_manifest(c, manifest);

  // --deep also recomputes the per-tensor Merkle roots DOPPLER writes (SHA-256 whatever the shard hash).
  auto r = run_blueshift({"verify", "--deep", bundle.string()});
  EXPECT_EQ(r.exit_code, 0) << "blueshift verify --deep: " << r.err << r.out;
  std::printf("blueshift verify --deep: exit %d\n%s", r.exit_code, r.out.c_str());
  size_t roots = manifest["integrityExtensions"]["blockMerkle"]["roots"].size();
  std::string all_match = std::to_string(roots) + " of " + std::to_string(roots) + " tensor roots match";
  if (r.exit_code == 0) {
    EXPECT_NE(r.out.find(all_match), std::string::npos) << r.out;
  }

  json hf = read_json(model_dir(c.source) / "config.json");
  r = run_blueshift({"info", "--json", bundle.string()});
  EXPECT_EQ(r.exit_code, 0) << "blueshift info: " << r.err;
  std::printf("blueshift info: exit %d\n", r.exit_code);
  if (r.exit_code == 0) {
    json cfg = json::parse(r.out)["config"];
    EXPECT_EQ(cfg["dim"], hf["hidden_size"]);
    EXPECT_EQ(cfg["ffn_dim"], hf["intermediate_size"]);
    EXPECT_EQ(cfg["n_layers"], hf["num_hidden_layers"]);
    EXPECT_EQ(cfg["n_heads"], hf["num_attention_heads"]);
    EXPECT_EQ(cfg["vocab"], hf["vocab_size"]);
  }

  json ref = read_json(model_dir(c.source) / "ref.json");
  std::string tokens;
  for (auto& t : ref["tokens"]) tokens += (tokens.empty() ? "" : ",") + std::to_string(t.get<int>());
  auto want = read_npy_f32(model_dir(c.source) / "logits_full.npy");
  size_t vocab = want.shape[1];
  // The float64 CPU forward reads the bundle through the same loader as the GPU, but binds any dtype.
  std::vector<float> cpu = logits(bundle, tokens, "cpu", tmp), dequantized;
  if (c.flavour.q4k) {
    dequantized = doppler_dequantized_logits(bundle, model_dir(c.source) / "config.json", tokens, tmp);
    expect_parity("DOPPLER-dequantized vs transformers", dequantized, want.data, vocab, 0.6, 0.0);
    expect_parity("cpu-reference vs DOPPLER-dequantized", cpu, dequantized, vocab, 1e-2, 0.98);
  } else {
    expect_parity("cpu-reference vs transformers", cpu, want.data, vocab, 1e-2, 0.98);
  }
  for (std::string path : {"prefill", "decode"}) {
    auto got = logits(bundle, tokens, path, tmp);
    if (c.flavour.q4k) {
      expect_parity(path + " vs cpu-reference", got, cpu, vocab, 1e-2, 0.98);
      expect_parity(path + " vs DOPPLER-dequantized", got, dequantized, vocab, 1e-2, 0.98);
      expect_parity(path + " vs transformers", got, want.data, vocab, 0.6, 0.0);
    } else {
      expect_parity(path + " vs transformers", got, want.data, vocab, 1e-2, 0.98);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, DopplerOracle, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                           std::string n = info.param.source.name + "_" + info.param.flavour.name;
                           for (char& ch : n) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

// The committed golden itself: blueshift reads the HF checkpoint directly (no DOPPLER) and matches
// transformers, so a failing DOPPLER case above is about the bundle, not the model.
TEST(DopplerOracle, PaddedGemmaCheckpointMatchesTransformers) {
  fs::path dir = source_dir() / "tests" / "model" / "goldens" / "gemma3-pad320";
  json ref = read_json(dir / "ref.json");
  std::string tokens;
  for (auto& t : ref["tokens"]) tokens += (tokens.empty() ? "" : ",") + std::to_string(t.get<int>());
  auto want = read_npy_f32(dir / "logits_full.npy");
  TempDir tmp;
  for (std::string path : {"prefill", "decode"})
    expect_parity(path + " vs transformers", logits(dir, tokens, path, tmp), want.data, want.shape[1], 1e-2, 0.98);
}

}  // namespace
}  // namespace bs::testing
