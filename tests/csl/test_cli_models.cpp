// export-csl -> verify-proof through the binary, on models the Vulkan engine really runs: the shared
// tiny checkpoints (Llama, Qwen3, Gemma 3) and a synthesized Llama-shaped model with a 32k vocabulary.
// What the issue asks of a bundle: verify-proof passes; the host emulation of the tiled plan matches
// the Vulkan logits within the stated tolerance; the selected logits are what `blueshift logits`
// gives at the last position; and a tampered real-model bundle fails naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/csl/exporter.h"
#include "cli/csl/sha256.h"
#include "runtime/base/npy.h"
#include "tests/common/testing.h"

namespace bs::csl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using bs::testing::run_blueshift;
using bs::testing::TempDir;

constexpr double kHeadTolerance = 1e-2;  // the lm_head plan's stated tolerance (f16 operands)
constexpr double kNormTolerance = 1e-3;  // the rmsnorm plan's (f32 throughout)
// The proof's logits and `blueshift logits` come from the same engine and weights; only the number
// of logit rows differs (1 vs every position), so they agree far more closely than the tolerance.
constexpr double kSameEngine = 1e-3;

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

// Runs blueshift and throws (gtest reports it) unless it exits 0.
std::string run_ok(const std::vector<std::string>& args) {
  auto r = run_blueshift(args);
  if (r.exit_code != 0) {
    std::string cmd;
    for (const auto& a : args) cmd += a + " ";
    throw std::runtime_error("blueshift " + cmd + "exited " + std::to_string(r.exit_code) + ": " + r.err + r.out);
  }
  return r.out;
}

json read_json(const fs::path& p) { return json::parse(read_file_bytes(p)); }

std::vector<float> read_f32(const fs::path& p) {
  std::string bytes = read_file_bytes(p);
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// export-csl, then verify-proof; both must pass. Returns the bundle's proof.json.
json export_and_verify(const fs::path& model, const std::vector<std::string>& extra, const std::string& grid,
                       const fs::path& bundle) {
  std::vector<std::string> args = {"export-csl", "--model", model.string(), "--grid", grid, "--out", bundle.string(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  json summary = json::parse(run_ok(args));
  EXPECT_TRUE(summary["passed"].get<bool>()) << summary.dump();
  json v = json::parse(run_ok({"verify-proof", bundle.string(), "--json"}));
  EXPECT_TRUE(v["ok"].get<bool>()) << v.dump(2);
  json proof = read_json(bundle / "proof.json");
  EXPECT_EQ(summary["proof_sha256"], proof["proof_sha256"]);
  return proof;
}

// The proof names the model it ran: the manifest's and every shard's SHA-256, as they are on disk.
void expect_model_identity(const fs::path& model, const json& proof) {
  EXPECT_EQ(proof["model"]["manifest_sha256"], sha256_file(model / "manifest.json"));
  ASSERT_FALSE(proof["model"]["shards"].empty());
  for (const json& s : proof["model"]["shards"])
    EXPECT_EQ(s["sha256"], sha256_file(model / s["file"].get<std::string>())) << s.dump();
  EXPECT_FALSE(proof["producer"]["vulkan_device"].get<std::string>().empty());
  EXPECT_EQ(proof["hardware"]["status"], "pending");
  EXPECT_EQ(proof["simulator"]["status"], "pending");
  EXPECT_NE(proof["note"].get<std::string>().find("No Cerebras"), std::string::npos);
}

// `blueshift logits` over the proof's prompt ids: the row of the last position.
std::vector<float> logits_last_row(const fs::path& model, const json& proof, const fs::path& out) {
  std::vector<int32_t> ids = proof["prompt"]["token_ids"];
  run_ok({"logits", "--model", model.string(), "--tokens", join(ids), "--out", out.string()});
  NpyF32 npy = read_npy_f32(out);
  EXPECT_EQ(npy.shape.size(), 2u);
  EXPECT_EQ(npy.shape[0], ids.size());
  EXPECT_EQ(npy.shape[1], proof["model"]["vocab"].get<uint64_t>());
  size_t vocab = size_t(npy.shape[1]);
  return {npy.data.end() - std::ptrdiff_t(vocab), npy.data.end()};
}

struct HeadFigures {
  double emulated_vs_vulkan = 0, vulkan_vs_logits_cmd = 0, emulated_vs_logits_cmd = 0;
};

// The lm_head proof against itself and against `blueshift logits`.
HeadFigures check_head_proof(const fs::path& model, const json& proof, const fs::path& scratch) {
  HeadFigures f;
  EXPECT_EQ(proof["kernel"], "lm_head");
  EXPECT_EQ(proof["reference"]["kind"], "logits");
  EXPECT_EQ(proof["emulation"]["tolerance"].get<double>(), kHeadTolerance);
  std::vector<int32_t> tokens = proof["selected_tokens"];
  std::vector<double> ref = proof["reference"]["values"], emu = proof["emulation"]["values"];
  EXPECT_EQ(ref.size(), tokens.size());
  f.emulated_vs_vulkan = max_abs_diff(emu, ref);
  EXPECT_EQ(f.emulated_vs_vulkan, proof["emulation"]["max_abs_error"].get<double>());
  EXPECT_LE(f.emulated_vs_vulkan, kHeadTolerance);
  EXPECT_TRUE(proof["emulation"]["passed"].get<bool>());

  std::vector<float> last = logits_last_row(model, proof, scratch / "logits.npy");
  std::vector<double> cmd;
  for (int32_t t : tokens) cmd.push_back(last.at(size_t(t)));
  f.vulkan_vs_logits_cmd = max_abs_diff(ref, cmd);
  f.emulated_vs_logits_cmd = max_abs_diff(emu, cmd);
  EXPECT_LE(f.vulkan_vs_logits_cmd, kSameEngine);
  EXPECT_LE(f.emulated_vs_logits_cmd, kHeadTolerance);
  // The logits are not all alike (a head row or position mix-up would not hide behind equal values).
  double spread = *std::max_element(ref.begin(), ref.end()) - *std::min_element(ref.begin(), ref.end());
  EXPECT_GT(spread, 5 * kHeadTolerance);
  std::printf("lm_head: max abs error emulation vs Vulkan %.3g; Vulkan vs `blueshift logits` %.3g; "
              "emulation vs `blueshift logits` %.3g\n", f.emulated_vs_vulkan, f.vulkan_vs_logits_cmd,
              f.emulated_vs_logits_cmd);
  return f;
}

// The rmsnorm proof's Vulkan reference is the final norm of the bundled hidden state: recomputed in
// float64 from the bundle's own inputs, and the emulation within the plan's tolerance.
void check_norm_proof(const fs::path& bundle, const json& proof) {
  EXPECT_EQ(proof["kernel"], "rmsnorm");
  EXPECT_EQ(proof["emulation"]["tolerance"].get<double>(), kNormTolerance);
  std::vector<float> h = read_f32(bundle / "hidden_f32.bin"), w = read_f32(bundle / "norm_weight_f32.bin");
  ASSERT_EQ(h.size(), w.size());
  double ss = 0;
  for (float x : h) ss += double(x) * x;
  double eps = proof["csl"]["norm_eps"], offset = proof["csl"]["norm_offset"].get<bool>() ? 1.0 : 0.0;
  double inv = 1.0 / std::sqrt(ss / double(h.size()) + eps);
  std::vector<double> want(h.size());
  for (size_t d = 0; d < h.size(); ++d) want[d] = h[d] * inv * (offset + w[d]);
  std::vector<double> ref = proof["reference"]["values"], emu = proof["emulation"]["values"];
  double ref_err = max_abs_diff(ref, want), emu_err = max_abs_diff(emu, ref);
  EXPECT_LE(ref_err, 1e-4);
  EXPECT_LE(emu_err, kNormTolerance);
  std::printf("rmsnorm: Vulkan final norm vs float64 from the bundle %.3g; emulation vs Vulkan %.3g\n", ref_err, emu_err);
}

// --- the shared tiny checkpoints -------------------------------------------------------------------

class CslSharedModel : public ::testing::TestWithParam<const char*> {};

TEST_P(CslSharedModel, ExportVerifyAndMatchTheEngine) {
  BS_REQUIRE_SHARED();
  const std::string name = GetParam();
  const fs::path hf = bs::testing::shared_dir() / "data" / "models" / name;
  TempDir tmp;
  const fs::path model = tmp / "rdrr";
  run_ok({"convert", hf.string(), model.string(), "--quant", "f16"});
  json ref = read_json(hf / "ref.json");
  std::vector<int32_t> prompt = ref["prompt"];
  const int32_t vocab = read_json(hf / "config.json")["vocab_size"];
  // The head's edges, the token transformers ranks first after the prompt, and one in between.
  const int32_t top1 = ref["top1_full"][prompt.size() - 1];
  std::vector<int32_t> tokens = {0, top1, vocab / 2 + 3, vocab - 1};

  json proof = export_and_verify(model, {"--prompt-tokens", join(prompt), "--tokens", join(tokens)}, "4x2", tmp / "head");
  expect_model_identity(model, proof);
  EXPECT_EQ(proof["prompt"]["token_ids"].get<std::vector<int32_t>>(), prompt);
  EXPECT_EQ(proof["selected_tokens"].get<std::vector<int32_t>>(), tokens);
  check_head_proof(model, proof, tmp.path);

  // And against HF transformers (float32, bf16 weights): the last prompt row of its logits.
  NpyF32 hf_logits = read_npy_f32(hf / "logits_full.npy");
  ASSERT_EQ(hf_logits.shape.size(), 2u);
  std::vector<double> hf_row, emu = proof["emulation"]["values"];
  for (int32_t t : tokens) hf_row.push_back(hf_logits.data.at((prompt.size() - 1) * size_t(vocab) + size_t(t)));
  double hf_err = max_abs_diff(emu, hf_row);
  EXPECT_LE(hf_err, kHeadTolerance);
  std::printf("%s: emulation vs HF transformers %.3g\n", name.c_str(), hf_err);

  // RMSNorm as a standalone kernel with its own proof, on the same prompt.
  json norm = export_and_verify(model, {"--prompt-tokens", join(prompt), "--kernel", "rmsnorm"}, "3x1", tmp / "norm");
  check_norm_proof(tmp / "norm", norm);
  EXPECT_EQ(norm["reference"]["hidden_state"]["sha256"], proof["reference"]["hidden_state"]["sha256"]);
}

INSTANTIATE_TEST_SUITE_P(Tiny, CslSharedModel, ::testing::Values("llama-tiny", "qwen3-tiny", "gemma3-tiny"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// --- a synthesized model with a 32k vocabulary ------------------------------------------------------

// Llama-shaped, two layers, an untied output head (so the exporter reads `output`, not `embed`), and a
// hidden size the 5-column grid does not divide (padding in the last tile).
constexpr const char* kSynthConfig = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "intermediate_size": 256,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "num_hidden_layers": 2,
  "vocab_size": 32768, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 256,
  "tie_word_embeddings": false, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2})";

fs::path synth_model(const TempDir& tmp, const std::string& quant, bool tokenizer) {
  write_file_bytes(tmp / "config.json", kSynthConfig);
  std::vector<std::string> args = {"synth", "--config", (tmp / "config.json").string(), (tmp / "hf").string(),
                                   "--seed", std::to_string(bs::testing::test_seed() & 0xffff)};
  if (tokenizer) args.insert(args.end(), {"--tokenizer", "builtin"});
  run_ok(args);
  run_ok({"convert", (tmp / "hf").string(), (tmp / quant).string(), "--quant", quant});
  return tmp / quant;
}

const std::vector<int32_t> kSynthTokens = {0, 7, 12345, 31000, 32767};

TEST(CslSynth32k, PromptTextF16UntiedHead) {
  TempDir tmp;
  fs::path model = synth_model(tmp, "f16", true);
  const std::string text = "The wafer computes the head";
  json proof = export_and_verify(model, {"--prompt", text, "--tokens", join(kSynthTokens)}, "5x2", tmp / "b");
  expect_model_identity(model, proof);
  EXPECT_EQ(proof["model"]["vocab"], 32768);
  EXPECT_EQ(proof["prompt"]["text"], text);
  EXPECT_GE(proof["prompt"]["token_ids"].size(), 2u);
  EXPECT_EQ(proof["csl"]["tile_width"], 26);  // 128 over 5 columns, rounded up to even
  EXPECT_EQ(proof["csl"]["padded_dim"], 130);
  EXPECT_EQ(proof["selected_tokens"].get<std::vector<int32_t>>(), kSynthTokens);
  check_head_proof(model, proof, tmp.path);
}

TEST(CslSynth32k, QuantizedHeadRowsAreDequantized) {
  // Q4_K_M keeps the output head in Q6_K: the exporter dequantizes its rows and rounds them to f16.
  TempDir tmp;
  fs::path model = synth_model(tmp, "q4_k_m", false);
  json proof = export_and_verify(model, {"--prompt-tokens", "1,5,9,100,20000,32767,17", "--tokens", join(kSynthTokens)},
                                 "3x3", tmp / "b");
  expect_model_identity(model, proof);
  check_head_proof(model, proof, tmp.path);
  json norm = export_and_verify(model, {"--prompt-tokens", "1,5,9,100,20000,32767,17", "--kernel", "rmsnorm"}, "2x1", tmp / "n");
  check_norm_proof(tmp / "n", norm);
}

TEST(CslSynth32k, TamperedRealBundleFailsNamingTheFile) {
  TempDir tmp;
  fs::path model = synth_model(tmp, "f16", false);
  const fs::path bundle = tmp / "b";
  json proof = export_and_verify(model, {"--prompt-tokens", "3,4,5", "--tokens", join(kSynthTokens)}, "4x2", bundle);
  auto expect_failure = [](const fs::path& dir, int code, const std::string& name, const std::string& also = "") {
    auto r = run_blueshift({"verify-proof", dir.string()});
    EXPECT_EQ(r.exit_code, code) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    if (!also.empty()) {
      EXPECT_NE(r.err.find(also), std::string::npos) << r.err;
    }
  };
  ASSERT_EQ(proof["files"].size(), 7u);
  for (const json& f : proof["files"]) {
    const std::string name = f["name"];
    fs::path dir = tmp / ("t_" + name);
    fs::copy(bundle, dir, fs::copy_options::recursive);
    std::string bytes = read_file_bytes(dir / name);
    bytes[bytes.size() / 3] ^= 0x10;
    write_file_bytes(dir / name, bytes);
    expect_failure(dir, 4, name);
  }
  {  // one number in proof.json
    fs::path dir = tmp / "t_number";
    fs::copy(bundle, dir, fs::copy_options::recursive);
    json doc = read_json(dir / "proof.json");
    // Still an f32 value (as blueshift writes them), so what fails is the seal, not the number's form.
    doc["reference"]["values"][1] = double(doc["reference"]["values"][1].get<float>() + 0.25f);
    write_file_bytes(dir / "proof.json", doc.dump(2));
    expect_failure(dir, 4, "proof.json");
  }
  {  // an unblock_cmd_stream() removed: the hash names the file; re-sealed, the static check does
    fs::path dir = tmp / "t_unblock";
    fs::copy(bundle, dir, fs::copy_options::recursive);
    std::string pe = read_file_bytes(dir / "pe_program.csl");
    const std::string call = "sys_mod.unblock_cmd_stream();";
    size_t at = pe.find(call);
    ASSERT_NE(at, std::string::npos);
    pe.erase(at, call.size());
    write_file_bytes(dir / "pe_program.csl", pe);
    expect_failure(dir, 4, "pe_program.csl");
    reseal_bundle(dir);
    expect_failure(dir, 3, "pe_program.csl", "unblock_cmd_stream");
  }
  run_ok({"verify-proof", bundle.string()});  // the original is untouched
}

}  // namespace
}  // namespace bs::csl
