// `--kernels wgsl` end to end: a synthesized Llama (the builtin-tokenizer demo shape, smaller) runs
// its decode path on the WGSL twins of the embedded GLSL kernels, through the same runtime, and its
// teacher-forced logits match the GLSL path's within 1e-3 relative; generation agrees token for token.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "runtime/base/npy.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;

// One synthesized checkpoint, converted at f16 and at q8_0, once per test process.
const fs::path& synth_dir() {
  static TempDir dir;
  static bool made = [] {
    auto r = synth_into(dir.path, tiny_llama_config(), {"--tokenizer", "builtin", "--seed", "7"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char* q : {"f16", "q8_0"}) {
      r = run_blueshift({"convert", (dir / "hf").string(), (dir / q).string(), "--quant", q});
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
    return true;
  }();
  (void)made;
  return dir.path;
}

const char* kTokens = "1,17,300,42,5,99,7,256";

NpyF32 logits(const std::string& quant, const std::string& kernels) {
  fs::path out = synth_dir() / (quant + "_" + kernels + ".npy");
  auto r = run_blueshift({"logits", "--model", (synth_dir() / quant).string(), "--tokens", kTokens, "--step",
                          "--kernels", kernels, "--out", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_npy_f32(out);
}

// max |a - b| / max |b| over every position's logits.
double max_relative_difference(const NpyF32& a, const NpyF32& b) {
  EXPECT_EQ(a.data.size(), b.data.size());
  double diff = 0, scale = 0;
  for (size_t i = 0; i < std::min(a.data.size(), b.data.size()); ++i) {
    diff = std::max(diff, double(std::fabs(a.data[i] - b.data[i])));
    scale = std::max(scale, double(std::fabs(b.data[i])));
  }
  return diff / scale;
}

class WgslModel : public ::testing::TestWithParam<const char*> {};

TEST_P(WgslModel, DecodeLogitsMatchTheGlslKernels) {
  auto glsl = logits(GetParam(), "glsl");
  auto wgsl = logits(GetParam(), "wgsl");
  ASSERT_EQ(glsl.shape.at(0), 8u);
  ASSERT_EQ(wgsl.shape.at(0), 8u);
  double rel = max_relative_difference(wgsl, glsl);
  std::printf("max relative logit difference, wgsl vs glsl (%s, decode, 8 positions): %.3g\n", GetParam(), rel);
  EXPECT_LT(rel, 1e-3);
  // Not a copy of one path: the two kernel sets round differently (tree vs subgroup sums).
  EXPECT_GT(rel, 0.0);
}

TEST_P(WgslModel, GreedyGenerationAgrees) {
  std::vector<std::string> out;
  for (const char* k : {"glsl", "wgsl"}) {
    auto r = run_blueshift({"generate", "--model", (synth_dir() / GetParam()).string(), "--prompt", "Once upon a time",
                            "--max-tokens", "12", "--ignore-eos", "--json", "--kernels", k});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string ids;
    for (size_t at = 0; (at = r.out.find("\"id\":", at)) != std::string::npos; ++at)
      ids += r.out.substr(at + 5, r.out.find(',', at) - at - 5) + " ";
    out.push_back(ids);
  }
  EXPECT_FALSE(out[0].empty());
  EXPECT_EQ(out[1], out[0]);
}

INSTANTIATE_TEST_SUITE_P(Quant, WgslModel, ::testing::Values("f16", "q8_0"));

TEST(WgslModelCli, PrefillWithWgslKernelsIsAUsageError) {
  auto r = run_blueshift({"logits", "--model", (synth_dir() / "f16").string(), "--tokens", "1,2", "--kernels", "wgsl",
                          "--out", (synth_dir() / "x.npy").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--step"), std::string::npos) << r.err;
  r = run_blueshift({"generate", "--model", (synth_dir() / "f16").string(), "--prompt", "a", "--kernels", "hlsl"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace bs::testing
