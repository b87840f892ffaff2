// Feeds a few thousand deterministic mutations of an emitted bundle to the checker's fuzz target.
#include <gtest/gtest.h>

#include "cli/csl/emit.h"
#include "tests/csl/mutate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace bs::csl {
namespace {

TEST(CslFuzzCheck, MutatedSourcesNeverCrashTheChecker) {
  ModelConfig cfg;
  cfg.dim = 512;
  cfg.vocab = 32000;
  Plan plan = make_plan("lm_head", cfg, 4, 2, 0, 4);
  EmitNotes notes{"fuzz seed", "none"};
  std::string seed = emit_layout(plan, notes) + '\xff' + emit_pe_program(plan) + '\xff' + emit_run_py(plan, notes) +
                     '\xff' + emit_compile_sh(plan);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string m = testing::mutate(seed, rng);
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(m.data()), m.size()), 0);
  }
  std::string nested = std::string(5000, '{') + "fn f() void { " + std::string(5000, '{');
  std::string pe = "\xff" + nested + "\xff\xff";
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(pe.data()), pe.size());
}

}  // namespace
}  // namespace bs::csl
