// The project's own synthesized models against goldens computed by HF transformers in float32 on the
// lease machine (scripts/make_synth_goldens.py; committed under tests/model/goldens/). `blueshift synth`
// is deterministic from its seed, so the same checkpoint is rebuilt here and run through both paths.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/base/npy.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

class Goldens : public ::testing::TestWithParam<std::string> {};

TEST_P(Goldens, MatchesTransformersThroughBothPaths) {
  auto dir = source_dir() / "tests" / "model" / "goldens";
  auto name = GetParam();
  nlohmann::json ref;
  std::ifstream(dir / (name + ".ref.json")) >> ref;
  auto want = read_npy_f32(dir / (name + ".logits.npy"));
  size_t rows = want.shape[0], vocab = want.shape[1];
  std::vector<int32_t> tokens = ref["tokens"];
  std::string ids;
  for (size_t i = 0; i < tokens.size(); ++i) ids += (i ? "," : "") + std::to_string(tokens[i]);
  TempDir tmp;
  auto r = run_blueshift({"synth", "--config", (dir / (name + ".config.json")).string(), (tmp / "hf").string(), "--seed",
                          std::to_string(ref["seed"].get<int>())});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (bool step : {false, true}) {
    std::vector<std::string> args = {"logits", "--model", (tmp / "hf").string(), "--tokens", ids, "--out",
                                     (tmp / "l.npy").string()};
    if (step) args.push_back("--step");
    r = run_blueshift(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto got = read_npy_f32(tmp / "l.npy");
    ASSERT_EQ(got.data.size(), want.data.size());
    double worst = 0;
    size_t agree = 0;
    for (size_t row = 0; row < rows; ++row) {
      double num = 0, den = 0;
      size_t a = 0, b = 0;
      for (size_t i = 0; i < vocab; ++i) {
        double g = got.data[row * vocab + i], w = want.data[row * vocab + i];
        num += (g - w) * (g - w);
        den += w * w;
        if (g > got.data[row * vocab + a]) a = i;
        if (w > want.data[row * vocab + b]) b = i;
      }
      worst = std::max(worst, std::sqrt(num / den));
      agree += a == b;
    }
    std::printf("%s via %s: worst row rel L2 %.2e, top-1 %.1f%%\n", name.c_str(), step ? "decode" : "prefill", worst,
                100.0 * agree / rows);
    EXPECT_LE(worst, 1e-2);
    EXPECT_GE(double(agree) / rows, 0.98);
  }
}

INSTANTIATE_TEST_SUITE_P(Synth, Goldens, ::testing::Values("mistral-untied", "qwen2-bias-odd"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n) c = (c == '-') ? '_' : c;
                           return n;
                         });

}  // namespace
}  // namespace bs::testing
