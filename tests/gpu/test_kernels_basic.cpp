// Kernels against float64 CPU references: fresh random inputs, odd sizes, poisoned outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecParams;
using kparams::ReduceParams;
using kparams::RmsNormParams;

class KernelsBasic : public GpuTest {
 protected:
  // Records one dispatch of `p` with one bind group and push constants, submits, waits.
  template <class P>
  void run_once(const gpu::ComputePipeline& p, std::vector<gpu::BindGroupEntry> entries, const P& params,
                uint32_t gx, uint32_t gy = 1) {
    auto bg = device().createBindGroup(p, 0, entries);
    auto enc = device().createCommandEncoder(p.label());
    auto pass = enc.beginComputePass();
    pass.setPipeline(p);
    pass.setBindGroup(0, bg);
    pass.setPushConstants(params);
    pass.dispatchWorkgroups(gx, gy);
    auto cb = enc.finish();
    device().queue().wait(device().queue().submit(cb));
  }
};

TEST_F(KernelsBasic, MatvecF16OddSizes) {
  struct Case { uint32_t m, k, batch, accumulate; };
  for (Case c : {Case{1, 2, 1, 0}, Case{37, 250, 1, 0}, Case{129, 1023, 2, 0}, Case{300, 64, 3, 1}, Case{5, 4097, 1, 1}}) {
    auto wf = random_floats(size_t(c.m) * c.k);
    std::vector<uint16_t> wh(wf.size());
    for (size_t i = 0; i < wf.size(); ++i) wh[i] = float_to_half(wf[i]);
    auto x = random_floats(size_t(c.batch) * c.k);
    auto y0 = random_floats(size_t(c.batch) * c.m);
    std::vector<double> ref(size_t(c.batch) * c.m);
    for (uint32_t b = 0; b < c.batch; ++b)
      for (uint32_t r = 0; r < c.m; ++r) {
        double s = c.accumulate ? y0[b * c.m + r] : 0.0;
        for (uint32_t k = 0; k < c.k; ++k) s += double(half_to_float(wh[size_t(r) * c.k + k])) * x[size_t(b) * c.k + k];
        ref[size_t(b) * c.m + r] = s;
      }
    auto bw = upload(wh), bx = upload(x);
    auto by = c.accumulate ? upload(y0) : poisoned(ref.size() * 4);
    for (uint32_t rows : {1u, 4u}) {
      if (!c.accumulate) by = poisoned(ref.size() * 4);
      else by = upload(y0);
      const auto& p = kernels().get("matvec_f16", {{0, 64}, {1, rows}});
      run_once(p, {{0, &bw}, {1, &bx}, {2, &by}}, MatvecParams{c.m, c.k, c.batch, c.accumulate},
               (c.m + rows - 1) / rows, c.batch);
      auto y = download<float>(by, ref.size());
      EXPECT_LT(nmse(y, ref), 1e-10) << "m=" << c.m << " k=" << c.k << " rows=" << rows;
    }
  }
}

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
