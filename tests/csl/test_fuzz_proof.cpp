// Feeds a few thousand deterministic mutations of a real proof.json to the fuzz target.
#include <gtest/gtest.h>

#include "cli/csl/exporter.h"
#include "tests/common/testing.h"
#include "tests/csl/mutate.h"
#include "tests/csl/synth_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace bs::csl {
namespace {

TEST(CslFuzzProof, MutatedProofsAreRejectedCleanly) {
  bs::testing::TempDir tmp;
  auto s = testing::make_synth({.dim = 64, .vocab = 32768, .n_tokens = 3});
  ExportOptions opt;
  opt.grid_width = 2;
  opt.grid_height = 1;
  opt.out_dir = tmp / "b";
  export_bundle(s.input, opt);
  std::string seed = read_file_bytes(tmp / "b" / "proof.json");
  ASSERT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(seed.data()), seed.size()), 0);
  std::mt19937_64 rng(20240607);
  for (int i = 0; i < 3000; ++i) {
    std::string m = testing::mutate(seed, rng);
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(m.data()), m.size()), 0);
  }
  // Pathological shapes: deep nesting and a huge number.
  std::string deep(100000, '[');
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(deep.data()), deep.size());
  std::string big = "{\"schema\":\"blueshift.csl-proof\",\"schema_version\":1e400}";
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(big.data()), big.size());
}

}  // namespace
}  // namespace bs::csl
