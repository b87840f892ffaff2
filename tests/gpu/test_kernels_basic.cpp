// Kernels against float64 CPU references: fresh random inputs, odd sizes, poisoned outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using kparams::ReduceParams;
using kparams::RmsNormParams;

using KernelsBasic = GpuTest;

TEST_F(KernelsBasic, RmsNormOddSizesWithAndWithoutOffset) {
  for (uint32_t n : {1u, 7u, 255u, 1000u, 2049u}) {
    for (float offset : {0.0f, 1.0f}) {
      uint32_t rows = 3;
      auto x = random_floats(size_t(rows) * n, -3, 3);
      auto w = random_floats(n);
      std::vector<double> ref(x.size());
      for (uint32_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (uint32_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
        double s = 1.0 / std::sqrt(ss / n + 1e-6);
        for (uint32_t i = 0; i < n; ++i) ref[r * n + i] = x[r * n + i] * s * (offset + w[i]);
      }
      auto bx = upload(x), bw = upload(w);
      auto by = poisoned(x.size() * 4);
      run_once(kernels().get("rms_norm_f32", {{0, 128}}), {{0, &bx}, {1, &bw}, {2, &by}},
               RmsNormParams{n, rows, 1e-6f, offset}, rows);
      auto y = download<float>(by, x.size());
      EXPECT_LT(nmse(y, ref), 1e-11) << "n=" << n << " offset=" << offset;
    }
  }
}

TEST_F(KernelsBasic, ReduceSumAndMax) {
  for (uint32_t n : {1u, 9u, 1000u, 65537u}) {
    auto x = random_floats(n, -2, 2);
    double sum = 0, mx = -1e30;
    for (float v : x) { sum += v; mx = std::max(mx, double(v)); }
    auto bx = upload(x);
    for (const char* name : {"reduce_sum_f32", "reduce_max_f32"}) {
      auto out = poisoned(4);
      run_once(kernels().get(name, {{0, 256}}), {{0, &bx}, {1, &out}}, ReduceParams{n, 0, 0, 0}, 1);
      float got = download<float>(out, 1)[0];
      double want = std::string(name) == "reduce_sum_f32" ? sum : mx;
      EXPECT_NEAR(got, want, 1e-4 * std::max(1.0, std::abs(want)) + 1e-5) << name << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace bs::testing
