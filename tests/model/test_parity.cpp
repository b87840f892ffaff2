// The forward pass against references, through both paths:
//   - the shared tiny checkpoints of real architectures against HF transformers' float32 logits
//     (needs ../shared; skipped with a message otherwise);
//   - synthesized models of each feature set against the float64 CPU forward over the same weights.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/base/npy.h"
#include "runtime/model/reference.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;

struct Parity {
  double worst_rel_l2 = 0;
  double top1 = 0;
};

Parity compare(const std::vector<float>& ours, const std::vector<double>& ref, size_t rows, size_t vocab) {
  Parity p;
  size_t agree = 0;
  for (size_t r = 0; r < rows; ++r) {
    double num = 0, den = 0;
    size_t a = 0, b = 0;
    for (size_t i = 0; i < vocab; ++i) {
      double d = ours[r * vocab + i] - ref[r * vocab + i];
      num += d * d;
      den += ref[r * vocab + i] * ref[r * vocab + i];
      if (ours[r * vocab + i] > ours[r * vocab + a]) a = i;
      if (ref[r * vocab + i] > ref[r * vocab + b]) b = i;
    }
    p.worst_rel_l2 = std::max(p.worst_rel_l2, std::sqrt(num / den));
    agree += a == b;
  }
  p.top1 = double(agree) / rows;
  return p;
}

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

// The shared references were computed after model.to(torch.bfloat16).float(), which rounds HF's RoPE
// inverse-frequency buffers to bfloat16 with the weights (make_refs.py, make_refs_2026.py): reproduce
// that (BLUESHIFT_ROPE_FREQ_BF16, reference.h) so the comparison measures blueshift, not the rounding
// (gemma3-tiny: 2.5e-3 -> 6e-4; Gemma 4, scale-1 attention over normalized q and k: 7.5e-2 -> 3e-5).
const std::vector<std::pair<std::string, std::string>> kHfRefEnv = {{"BLUESHIFT_ROPE_FREQ_BF16", "1"}};

// Gemma 4's attention logits are large (softmax scale 1 over RMS-normalized q and k, |q.k| up to
// head_dim): f16 keys alone move its logits by ~2% at position 47, so its parity runs keep an f32 cache.
std::vector<std::string> model_args(const std::string& name) {
  if (name.rfind("gemma4", 0) == 0) return {"--kv-cache", "f32"};
  return {};
}

std::vector<float> run_logits(const fs::path& model, const std::vector<int32_t>& ids, bool step, const TempDir& tmp,
                              const std::vector<std::string>& extra = {}) {
  auto out = tmp / (step ? "step.npy" : "prefill.npy");
  std::vector<std::string> args = {"logits", "--model", model.string(), "--tokens", join(ids), "--out", out.string()};
  if (step) args.push_back("--step");
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_blueshift(args, kHfRefEnv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {};
  return read_npy_f32(out).data;
}

class SharedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModels, MatchesTransformersThroughBothPaths) {
  BS_REQUIRE_SHARED();
  auto dir = shared_dir() / "data" / "models" / GetParam();
  auto ref = read_npy_f32(dir / "logits_full.npy");
  nlohmann::json refj;
  std::ifstream(dir / "ref.json") >> refj;
  std::vector<int32_t> tokens = refj["tokens"];
  size_t vocab = ref.shape[1];
  std::vector<double> want(ref.data.begin(), ref.data.end());
  TempDir tmp;
  std::vector<fs::path> models = {dir};
  // The same model converted to RDRR F16, when the converter is built.
  auto conv = run_blueshift({"convert", dir.string(), (tmp / "rdrr").string(), "--quant", "f16"});
  if (conv.exit_code == 0) models.push_back(tmp / "rdrr");
  for (auto& m : models) {
    for (bool step : {false, true}) {
      auto got = run_logits(m, tokens, step, tmp, model_args(GetParam()));
      ASSERT_EQ(got.size(), want.size());
      auto p = compare(got, want, tokens.size(), vocab);
      RecordProperty(GetParam() + (step ? "_step" : "_prefill") + "_rel_l2", std::to_string(p.worst_rel_l2));
      std::printf("%s %s via %s: worst row rel L2 %.2e, top-1 agreement %.1f%%\n", GetParam().c_str(),
                  m.filename().c_str(), step ? "decode" : "prefill", p.worst_rel_l2, 100 * p.top1);
      EXPECT_LE(p.worst_rel_l2, 1e-2) << m << (step ? " decode" : " prefill");
      EXPECT_GE(p.top1, 0.98) << m << (step ? " decode" : " prefill");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, SharedModels, ::testing::Values("llama-tiny", "qwen3-tiny", "gemma3-tiny", "gemma2-tiny", "phi3-tiny",
                                                            "lfm2-tiny", "qwen35-tiny", "gemma4-tiny", "gemma4e-tiny"));

}  // namespace
}  // namespace bs::testing
