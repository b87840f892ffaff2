// matvec_q4k_i8: y (+)= W x for Q4_K W with x quantized by quantize_x_q8 into two-level int8
// (kernels_glsl/int_dot.glsl), and matvec_q6k_wide_i8 (decode's Q6_K head) on the same x, at odd sizes (odd row
// counts, k = 256 x odd, rows padded to whole blocks),
// several workgroup shapes, batch > 1 in both grid layouts, a poisoned output and the accumulate epilogue.
// Reference: float64 over the dequantized weights and the exact x.
//
// Tolerance, per output: each x value is quantized with error at most amax / 64516 (amax: the largest
// |x| of its 16-value half, int_dot.glsl), so |y - ref| <= sum_i |w_i| amax(i) / 64516, plus the f32
// accumulation (2e-6 of the sum of |terms|). That bound assumes every error aligned; the errors are
// independent and near uniform (variance (amax / 64516)^2 / 3 each), so over >= 30 outputs the sum of
// squared errors must also stay below 16x its expectation. Dropping the second level misses the worst
// case bound by 2-26x in these cases and the statistical one by ~10^4; a misplaced value or scale by far more.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecParams;

struct Case {
  uint32_t m, k, batch, accumulate;
};

class MatvecInt8 : public KernelTest {
 protected:
  void check(Case c, const std::string& kernel = "matvec_q4k_i8", DType t = DType::Q4_K) {
    Weights w = random_weights(t, c.m, c.k);
    // Magnitudes that vary per 16 (so the halves' scales differ), and some all-zero halves (amax 0).
    auto x = random_floats(size_t(c.batch) * c.k, -2, 2);
    std::uniform_real_distribution<float> mag(0.01f, 4.0f);
    std::uniform_int_distribution<int> zero(0, 7);
    for (size_t h = 0; h < x.size(); h += 16) {
      float s = zero(rng()) == 0 ? 0.0f : mag(rng());
      for (size_t i = h; i < std::min(x.size(), h + 16); ++i) x[i] *= s;
    }
    auto y0 = random_floats(size_t(c.batch) * c.m);
    DotRef ref = dot_ref(w.dq.data(), x.data(), c.accumulate ? y0.data() : nullptr, c.m, c.k, c.batch);
    // The quantization bound as a dot product of |w| with amax(i) / 64516 (halves start every 16 of a row).
    std::vector<float> wabs(w.dq.size()), xerr(x.size());
    for (size_t i = 0; i < w.dq.size(); ++i) wabs[i] = std::abs(w.dq[i]);
    for (uint32_t b = 0; b < c.batch; ++b)
      for (uint32_t h = 0; h < c.k; h += 16) {
        float amax = 0;
        const size_t o = size_t(b) * c.k + h, n = std::min(16u, c.k - h);
        for (size_t i = 0; i < n; ++i) amax = std::max(amax, std::abs(x[o + i]));
        for (size_t i = 0; i < n; ++i) xerr[o + i] = amax / 64516.0f;
      }
    DotRef bound = dot_ref(wabs.data(), xerr.data(), nullptr, c.m, c.k, c.batch);
    for (auto& v : wabs) v *= v;
    for (auto& v : xerr) v *= v;
    DotRef var = dot_ref(wabs.data(), xerr.data(), nullptr, c.m, c.k, c.batch);  // x 3: sum w^2 e^2 at most

    const uint32_t nb = (c.k + 255) / 256;
    auto bw = upload(w.bytes), bx = upload(with_nan_tail(x));
    auto bq = poisoned(size_t(c.batch) * nb * 640, "x q8");
    run_once(kernels().get("quantize_x_q8"), {{0, &bx}, {1, &bq}}, MatvecParams{0, c.k, c.batch, 0},
             (c.batch * nb * 16 + 63) / 64);
    each_matvec_shape(kernel, c.m, c.k, c.batch, c.accumulate, bw, bq, y0,
                      [&](const std::vector<float>& y, const std::string& where) {
                        double worst = 0, sq = 0, expect = 0;
                        for (size_t i = 0; i < y.size(); ++i) {
                          double err = std::abs(double(y[i]) - ref.value[i]), lim = bound.value[i] + 2e-6 * ref.scale[i];
                          worst = std::isnan(y[i]) ? 1e30 : std::max(worst, err / lim);
                          sq += err * err;
                          expect += var.value[i] / 3 + std::pow(2e-6 * ref.scale[i], 2);
                        }
                        if (y.size() >= 30) {
                          EXPECT_LE(sq, 16 * expect) << kernel << " m=" << c.m << " k=" << c.k << " batch=" << c.batch;
                        }
                        EXPECT_LE(worst, 1.0) << kernel << " m=" << c.m << " k=" << c.k << " batch=" << c.batch
                                              << " acc=" << c.accumulate << " " << where << " seed=" << test_seed();
                      });
  }
};

TEST_F(MatvecInt8, Q4K) {
  if (!device().has_int_dot()) GTEST_SKIP() << device().adapter().name << " has no shaderIntegerDotProduct";
  for (Case c : {Case{1, 256, 1, 0}, Case{37, 768, 1, 0}, Case{129, 2304, 2, 0}, Case{300, 1280, 3, 1},
                 Case{5, 4096, 1, 1}})
    check(c);
}

// Rows padded to whole blocks: parts wholly in the padding are skipped, and x past k quantizes to 0.
TEST_F(MatvecInt8, Q4KPaddedRows) {
  if (!device().has_int_dot()) GTEST_SKIP() << device().adapter().name << " has no shaderIntegerDotProduct";
  for (Case c : {Case{37, 640, 1, 0}, Case{129, 1152, 2, 1}, Case{5, 320, 3, 0}, Case{33, 96, 2, 0},
                 Case{7, 200, 1, 1}, Case{3, 4, 1, 0}})
    check(c);
}

// matvec_q4k_i8mx: the high nibbles in place (codes x 16) in mixed-signedness dot products; same bound.
TEST_F(MatvecInt8, Q4KMixedSignedness) {
  if (!device().has_int_dot()) GTEST_SKIP() << device().adapter().name << " has no shaderIntegerDotProduct";
  for (Case c : {Case{37, 768, 1, 0}, Case{129, 2304, 2, 1}, Case{5, 4096, 1, 0}, Case{7, 200, 1, 1}})
    check(c, "matvec_q4k_i8mx");
}

// matvec_q6k_wide_i8: a Q6_K quarter's 16 codes against one slot of the same x (k % 256 == 0: Q6_K rows are whole
// blocks); same bound.
TEST_F(MatvecInt8, Q6KWide) {
  if (!device().has_int_dot()) GTEST_SKIP() << device().adapter().name << " has no shaderIntegerDotProduct";
  for (Case c : {Case{1, 256, 1, 0}, Case{37, 768, 1, 0}, Case{129, 2304, 2, 0}, Case{300, 512, 3, 1},
                 Case{5, 4096, 1, 1}, Case{130, 2048, 1, 0}})
    check(c, "matvec_q6k_wide_i8", DType::Q6_K);
}

// rms_norm_q8x: RMSNorm of each row straight into quantize_x_q8's form. Each value decoded from its slot,
// (d / 254)(254 q1 + q2), is within amax / 64516 of the float64 norm (amax: its 16 values' largest), plus the f32
// rounding of the normed value; each slot's sum is the sum of its decoded values; nothing past the rows' blocks is
// written. n = 2304 at 64 invocations takes 144 slots, past the 128 held in registers (the second pass).
TEST_F(MatvecInt8, RmsNormQ8x) {
  const uint32_t rows = 3;
  for (uint32_t n : {256u, 768u, 2304u})
    for (uint32_t wg : {64u, 256u})
      for (float offset : {0.0f, 1.0f}) {
        auto x = random_floats(size_t(rows) * n, -3, 3), w = random_floats(n);
        const uint32_t nb = n / 256;
        const size_t words = size_t(rows) * nb * 160, tail = 64;  // 640 bytes a block
        auto bx = upload(with_nan_tail(x)), bw = upload(with_nan_tail(w)), bq = poisoned((words + tail) * 4, "x q8");
        run_once(kernels().get("rms_norm_q8x", {{0, wg}}), {{0, &bx}, {1, &bw}, {2, &bq}},
                 kparams::RmsNormParams{n, rows, 1e-5f, offset}, rows);
        auto q = download<uint32_t>(bq, words + tail);
        for (size_t i = words; i < words + tail; ++i) ASSERT_EQ(q[i], 0xffffffffu) << "wrote past the rows' blocks";
        const std::string where = "n=" + std::to_string(n) + " wg=" + std::to_string(wg) + " offset=" +
                                  std::to_string(offset) + " seed=" + std::to_string(test_seed());
        for (uint32_t r = 0; r < rows; ++r) {
          double ss = 0;
          for (uint32_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
          const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
          for (uint32_t blk = 0; blk < nb; ++blk)
            for (uint32_t t = 0; t < 16; ++t) {
              const uint32_t first = blk * 256 + 64 * ((t & 7) >> 1) + 32 * (t >> 3) + 16 * (t & 1);
              const uint32_t* b = &q[(size_t(r) * nb + blk) * 160];
              float step, sum;
              std::memcpy(&step, &b[128 + 4 * (t / 2) + 2 * (t & 1)], 4);
              std::memcpy(&sum, &b[128 + 4 * (t / 2) + 2 * (t & 1) + 1], 4);
              double ref[16], amax = 0, got_sum = 0;
              for (uint32_t i = 0; i < 16; ++i) {
                ref[i] = x[r * n + first + i] * scale * (offset + w[first + i]);
                amax = std::max(amax, std::abs(ref[i]));
              }
              for (uint32_t i = 0; i < 16; ++i) {
                const int q1 = int8_t(b[8 * t + i / 4] >> (8 * (i % 4)));
                const int q2 = int8_t(b[8 * t + 4 + i / 4] >> (8 * (i % 4)));
                const double got = double(step) * (254.0 * q1 + q2);
                got_sum += got;
                ASSERT_LE(std::abs(got - ref[i]), amax / 64516 * 1.001 + 4e-7 * amax)
                    << "row " << r << " value " << first + i << " " << where;
              }
              ASSERT_LE(std::abs(sum - got_sum), 1e-6 * 16 * amax) << "row " << r << " slot " << t << " " << where;
            }
        }
      }
}

}  // namespace
}  // namespace bs::testing
