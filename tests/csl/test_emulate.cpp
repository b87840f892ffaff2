// The host emulation of the tiled plans: partition, f16 rounding of operands, f32 accumulation.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/csl/emulate.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "tests/common/testing.h"
#include "tests/csl/synth_input.h"

namespace bs::csl {
namespace {

using testing::make_synth;
using testing::SynthSpec;

PlanInputs inputs_of(const Plan& plan, const HeadExportInput& in) {
  PlanInputs p{in.hidden, in.norm_weight, {}};
  if (plan.kind == KernelKind::lm_head) p.head_tiles = pack_head_tiles(plan, in.head_rows_f16);
  return p;
}

double max_abs(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

TEST(CslEmulate, PackedTilesHoldEveryRowElementAndZeroPadding) {
  auto s = make_synth({.dim = 1152, .vocab = 32768, .n_tokens = 7});
  Plan plan = make_plan("lm_head", s.input.cfg, 5, 3, 0, 7);  // 1152 over 5 columns: tile 232, padded 1160
  ASSERT_EQ(plan.tile_width, 232);
  ASSERT_EQ(plan.rows_per_pe, 3);
  std::vector<uint32_t> tiles = pack_head_tiles(plan, s.input.head_rows_f16);
  ASSERT_EQ(tiles.size(), head_tile_words(plan));
  for (int t = 0; t < plan.tokens; ++t)
    for (int d = 0; d < plan.dim; ++d)
      ASSERT_EQ(head_tile_element(plan, tiles, t, d), s.input.head_rows_f16[size_t(t)][size_t(d)]) << "token " << t << " d " << d;
  for (int t = 0; t < plan.padded_tokens(); ++t)
    for (int d = 0; d < plan.padded_dim(); ++d)
      if (t >= plan.tokens || d >= plan.dim) {
        ASSERT_EQ(head_tile_element(plan, tiles, t, d), 0) << "padding at " << t << "," << d;
      }
}

TEST(CslEmulate, LogitsMatchFloat64ReferenceWithinTolerance) {
  struct Case { int dim, w, h, tokens; bool offset; };
  for (Case c : {Case{320, 3, 2, 5, false}, Case{1152, 5, 3, 7, true}, Case{256, 1, 1, 1, false}, Case{2048, 8, 4, 16, true}}) {
    auto s = make_synth({.dim = c.dim, .vocab = 32768, .n_tokens = c.tokens, .norm_offset = c.offset});
    Plan plan = make_plan("lm_head", s.input.cfg, c.w, c.h, 0, c.tokens);
    std::vector<float> got = emulate(plan, inputs_of(plan, s.input));
    std::vector<double> ref = testing::reference_logits_f64(s.input);
    ASSERT_EQ(got.size(), ref.size());
    double err = max_abs(got, ref);
    EXPECT_LT(err, 1e-2) << "dim " << c.dim << " grid " << c.w << "x" << c.h << " seed " << bs::testing::test_seed();
    EXPECT_GT(err, 0.0) << "f16 rounding of the activation should leave a trace";
  }
}

TEST(CslEmulate, RmsNormMatchesFloat64Reference) {
  auto s = make_synth({.dim = 1152, .vocab = 32768, .n_tokens = 1, .norm_offset = true});
  Plan plan = make_plan("rmsnorm", s.input.cfg, 6, 1, 0, 0);
  std::vector<float> got = emulate(plan, inputs_of(plan, s.input));
  std::vector<double> ref = testing::reference_normed_f64(s.input);
  ASSERT_EQ(got.size(), ref.size());
  EXPECT_LT(max_abs(got, ref), 1e-5);
}

// A case small enough to do by hand: x = 1/sqrt(1 + eps) rounds to exactly 1.0 in f16, so the logit
// of the row [1, 2, 3, 4] is exactly 10 whatever the split.
TEST(CslEmulate, HandComputedLogitIsExact) {
  ModelConfig cfg;
  cfg.dim = 4;
  cfg.vocab = 8;
  cfg.norm_eps = 1e-6f;
  for (int w : {1, 2}) {
    Plan plan = make_plan("lm_head", cfg, w, 1, 0, 1);
    std::vector<uint16_t> row = {float_to_half(1), float_to_half(2), float_to_half(3), float_to_half(4)};
    PlanInputs in{{1, 1, 1, 1}, {1, 1, 1, 1}, pack_head_tiles(plan, {row})};
    EXPECT_EQ(emulate(plan, in), std::vector<float>{10.0f}) << "grid " << w << "x1";
  }
}

// The activation is rounded to f16 before the dot products: x = 1 + 2^-12 is not an f16 value.
TEST(CslEmulate, ActivationIsRoundedToF16) {
  ModelConfig cfg;
  cfg.dim = 2;
  cfg.vocab = 4;
  cfg.norm_eps = 1e-6f;
  Plan plan = make_plan("lm_head", cfg, 1, 1, 0, 1);
  // hidden [1, 1] normalizes to ~[1, 1]; the weight 1 + 2^-12 would survive in f32, not in f16.
  float w = 1.0f + 1.0f / 4096.0f;
  PlanInputs in{{1, 1}, {w, w}, pack_head_tiles(plan, {{float_to_half(1), float_to_half(1)}})};
  EXPECT_EQ(emulate(plan, in), std::vector<float>{2.0f});
  Plan norm = make_plan("rmsnorm", cfg, 1, 1, 0, 0);
  std::vector<float> x = emulate(norm, {{1, 1}, {w, w}, {}});
  EXPECT_GT(x[0], 1.0f);  // the f32 RMSNorm keeps it
}

TEST(CslEmulate, SizesAreChecked) {
  auto s = make_synth({.dim = 64, .vocab = 32768, .n_tokens = 2});
  Plan plan = make_plan("lm_head", s.input.cfg, 2, 1, 0, 2);
  PlanInputs in = inputs_of(plan, s.input);
  in.head_tiles.pop_back();
  EXPECT_THROW(emulate(plan, in), Error);
  in = inputs_of(plan, s.input);
  in.hidden.push_back(0);
  EXPECT_THROW(emulate(plan, in), Error);
}

TEST(CslPlan, RejectsGridsThatDoNotFit) {
  ModelConfig cfg;
  cfg.dim = 4096;
  cfg.vocab = 32000;
  // 64 head rows x 4096 values of f16 on one PE is 512 KiB: far over a 48 KiB PE.
  try {
    make_plan("lm_head", cfg, 1, 1, 0, 64);
    FAIL() << "expected the memory budget to reject a 1x1 grid";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("--grid"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_plan("lm_head", cfg, 8, 1, 3, 4), Error);     // odd tile width
  EXPECT_THROW(make_plan("lm_head", cfg, 8, 1, 256, 4), Error);   // 8 x 256 < 4096
  EXPECT_THROW(make_plan("lm_head", cfg, 64, 8, 0, 4), Error);    // PE rows without tokens
  EXPECT_THROW(make_plan("rmsnorm", cfg, 16, 2, 0, 0), Error);    // rmsnorm is one row
  EXPECT_THROW(make_plan("rope", cfg, 16, 1, 0, 0), Error);       // not in the table
  Plan ok = make_plan("lm_head", cfg, 16, 4, 0, 16);
  EXPECT_EQ(ok.tile_width, 256);
  EXPECT_LE(ok.pe_data_bytes(), size_t(kPeMemoryBytes - kPeReservedBytes));
  cfg.final_softcap = 30.0f;
  EXPECT_THROW(make_plan("lm_head", cfg, 16, 4, 0, 16), Error);
}

}  // namespace
}  // namespace bs::csl
