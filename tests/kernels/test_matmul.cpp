// matmul_{f16,q8_0,q4k,q6k}: Y[M, m] (+)= X[M, k] W[m, k]^T for every weight dtype, with M and m that
// leave the last 64 x 64 tile partly empty, k not a multiple of the 32-wide k step (f16), a poisoned
// output, and the accumulate epilogue. Reference: float64 over the dequantized weights.
#include <gtest/gtest.h>

#include "runtime/base/half.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecParams;

// Plain f32 accumulation over exact weights: errors (relative to the sum of |terms|, see DotRef) near
// 1e-14; 1e-10 is the stated bound.
constexpr double kMatmulError = 1e-10;

struct Case {
  uint32_t tokens, m, k, accumulate;
};

class Matmul : public KernelTest {
 protected:
  void check(DType t, Case c) {
    Weights w = random_weights(t, c.m, c.k);
    auto x = random_floats(size_t(c.tokens) * c.k, -2, 2);
    auto y0 = random_floats(size_t(c.tokens) * c.m);
    DotRef ref = dot_ref(w.dq.data(), x.data(), c.accumulate ? y0.data() : nullptr, c.m, c.k, c.tokens);
    auto bw = upload(w.bytes), bx = upload(with_nan_tail(x));
    auto by = c.accumulate ? upload(y0) : poisoned(ref.value.size() * 4);
    run_once(kernels().get("matmul_" + kernel_suffix(t)), {{0, &bw}, {1, &bx}, {2, &by}},
             MatvecParams{c.m, c.k, c.tokens, c.accumulate}, (c.m + 63) / 64, (c.tokens + 63) / 64);
    auto y = download<float>(by, ref.value.size());
    EXPECT_LT(scaled_error(y, ref), kMatmulError) << dtype_name(t) << " M=" << c.tokens << " m=" << c.m << " k=" << c.k
                                         << " acc=" << c.accumulate << " seed=" << test_seed();
  }
};

TEST_F(Matmul, F16) {
  for (Case c : {Case{1, 37, 77, 0}, Case{7, 129, 250, 1}, Case{65, 64, 64, 0}, Case{130, 100, 33, 0}})
    check(DType::F16, c);
}

TEST_F(Matmul, Q8_0) {
  for (Case c : {Case{1, 37, 96, 0}, Case{7, 129, 160, 1}, Case{65, 64, 64, 0}, Case{130, 100, 288, 0}})
    check(DType::Q8_0, c);
}

TEST_F(Matmul, Q4K) {
  for (Case c : {Case{1, 37, 256, 0}, Case{7, 129, 768, 1}, Case{65, 64, 512, 0}, Case{130, 100, 256, 0}})
    check(DType::Q4_K, c);
}

// Rows padded to whole blocks (DOPPLER's "row" layout): 640, 1152, 320 and a row shorter than a block.
TEST_F(Matmul, Q4KPaddedRows) {
  for (Case c : {Case{65, 37, 640, 0}, Case{7, 129, 1152, 1}, Case{130, 100, 320, 0}, Case{3, 20, 96, 1}})
    check(DType::Q4_K, c);
}

TEST_F(Matmul, Q6K) {
  for (Case c : {Case{1, 37, 256, 0}, Case{7, 129, 768, 1}, Case{65, 64, 512, 0}, Case{130, 100, 256, 0}})
    check(DType::Q6_K, c);
}

// One token through matmul equals matvec: the prefill and decode paths agree on every weight type.
TEST_F(Matmul, OneTokenMatchesMatvec) {
  for (DType t : kWeightTypes) {
    uint32_t m = 45, k = 512;
    Weights w = random_weights(t, m, k);
    auto x = random_floats(k);
    auto bw = upload(w.bytes), bx = upload(x);
    auto y_mm = poisoned(m * 4), y_mv = poisoned(m * 4);
    run_once(kernels().get("matmul_" + kernel_suffix(t)), {{0, &bw}, {1, &bx}, {2, &y_mm}},
             MatvecParams{m, k, 1, 0}, 1, 1);
    run_once(kernels().get("matvec_" + kernel_suffix(t), {{0, 64}, {1, 4}}), {{0, &bw}, {1, &bx}, {2, &y_mv}},
             MatvecParams{m, k, 1, 0}, (m + 3) / 4, 1);
    auto a = download<float>(y_mm, m), b = download<float>(y_mv, m);
    DotRef ref = dot_ref(w.dq.data(), x.data(), nullptr, m, k, 1);
    ref.value.assign(b.begin(), b.end());  // matvec's answer, with the terms' scale
    EXPECT_LT(scaled_error(a, ref), 1e-10) << dtype_name(t);
  }
}

// to_f16, the tensor-core GEMMs' input conversion: each of n values rounded to the nearest f16 (ties to
// even) over magnitudes from 2^-14 to 2^15; below f16's normal range, flushing to zero is allowed too;
// nothing past n written.
TEST_F(Matmul, ToF16RoundsToNearestEven) {
  const uint32_t n = 4 * 1001;
  std::vector<float> x = random_floats(n, 1.0f, 2.0f);
  std::mt19937_64 g(test_seed());
  for (auto& v : x) v = std::ldexp(v, int(g() % 30) - 15) * (g() % 2 ? -1.0f : 1.0f);  // 2^-15 .. 2^15
  x[0] = 0.0f, x[1] = -0.0f, x[2] = 1.0f + 1.0f / 2048, x[3] = 1.0f + 3.0f / 2048;  // ties: to 1, to 1 + 2^-9
  auto bx = upload(x);
  auto by = poisoned(size_t(n + 64) * 2);
  run_once(kernels().get("to_f16", {}), {{0, &bx}, {1, &by}}, kparams::ToF16Params{n, 0, 0, 0}, (n / 4 + 255) / 256);
  auto got = download<uint16_t>(by, n + 64);
  for (uint32_t i = 0; i < n; ++i) {
    const float h = half_to_float(got[i]);
    if (std::fabs(x[i]) >= std::ldexp(1.0f, -14)) {
      ASSERT_EQ(got[i], float_to_half(x[i])) << "element " << i << ": " << x[i] << " became " << h << " seed=" << test_seed();
    } else {
      ASSERT_LE(std::fabs(h - x[i]), std::ldexp(1.0f, -14)) << "element " << i << " seed=" << test_seed();
    }
  }
  for (uint32_t i = n; i < n + 64; ++i) ASSERT_EQ(got[i], 0xffff) << "element " << i << " past n was written";
}

// The f16 producers of prefill GEMM inputs (rms_norm_f32_f16, gated_act_f32_f16): their f32 output is
// bit-identical to rms_norm_f32 / gated_act_f32's and within f32 rounding of float64, and their f16 copy is
// that output rounded as to_f16 rounds it (nearest even; flushing below f16's normal range allowed), with
// nothing written past the end; rms_norm_f16 / gated_act_f16 write the same f16 copy alone. Odd row counts, n
// even but not a multiple of 4.
void expect_f16_of(const std::vector<uint16_t>& h, const std::vector<float>& f, size_t poisoned_tail,
                   const char* what) {
  for (size_t i = 0; i < f.size(); ++i) {
    if (std::fabs(f[i]) >= std::ldexp(1.0f, -14)) {
      ASSERT_EQ(h[i], float_to_half(f[i])) << what << " element " << i << " seed=" << test_seed();
    } else {
      ASSERT_LE(std::fabs(half_to_float(h[i]) - f[i]), std::ldexp(1.0f, -14)) << what << " element " << i;
    }
  }
  for (size_t i = f.size(); i < f.size() + poisoned_tail; ++i)
    ASSERT_EQ(h[i], 0xffff) << what << " wrote past the end";
}

TEST_F(Matmul, F16ProducersMatchTheirF32KernelsAndToF16) {
  const uint32_t rows = 7, n = 1234;
  auto x = random_floats(size_t(rows) * n, -3, 3), w = random_floats(n);
  auto bx = upload(x), bw = upload(w);
  for (float offset : {0.0f, 1.0f}) {
    const kparams::RmsNormParams rp{n, rows, 1e-5f, offset};
    auto y32 = poisoned(size_t(rows) * n * 4), y = poisoned(size_t(rows) * n * 4),
         yh = poisoned(size_t(rows) * n * 2 + 64);
    run_once(kernels().get("rms_norm_f32", {{0, 64}}), {{0, &bx}, {1, &bw}, {2, &y32}}, rp, rows);
    run_once(kernels().get("rms_norm_f32_f16", {{0, 64}}), {{0, &bx}, {1, &bw}, {2, &y}, {3, &yh}}, rp, rows);
    auto a = download<float>(y32, size_t(rows) * n), b = download<float>(y, size_t(rows) * n);
    ASSERT_EQ(a, b) << "rms_norm_f32_f16's f32 output differs from rms_norm_f32's, offset " << offset;
    std::vector<double> ref(a.size());
    for (uint32_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (uint32_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
      double scale = 1.0 / std::sqrt(ss / n + 1e-5);
      for (uint32_t i = 0; i < n; ++i) ref[r * n + i] = x[r * n + i] * scale * (offset + w[i]);
    }
    EXPECT_LT(nmse(b, ref), 1e-12) << "offset " << offset;
    expect_f16_of(download<uint16_t>(yh, size_t(rows) * n + 32), b, 32, "rms_norm_f32_f16");
    // rms_norm_f16: the same f16 copy alone.
    auto yh2 = poisoned(size_t(rows) * n * 2 + 64);
    run_once(kernels().get("rms_norm_f16", {{0, 64}}), {{0, &bx}, {1, &bw}, {3, &yh2}}, rp, rows);
    ASSERT_EQ(download<uint16_t>(yh2, size_t(rows) * n + 32), download<uint16_t>(yh, size_t(rows) * n + 32));
  }
  // The planes variants (a residual's split-k planes summed in first, in splitk_reduce's order, and written back): the
  // same bits as splitk_reduce then the plain norm. n = 1234 passes R x 64 values, so the second pass runs too.
  for (uint32_t parts : {1u, 3u}) {
    const uint32_t total = rows * n;
    auto planes = random_floats(size_t(parts) * total, -2, 2);
    auto bp = upload(planes);
    auto xr = upload(x), yr = poisoned(size_t(total) * 4), yhr = poisoned(size_t(total) * 2 + 64);
    run_once(kernels().get("splitk_reduce", {}), {{0, &bp}, {1, &xr}}, kparams::SplitKParams{total, parts, 1, 0},
             (total + 255) / 256);
    const kparams::RmsNormParams rp{n, rows, 1e-5f, 1.0f};
    run_once(kernels().get("rms_norm_f32_f16", {{0, 64}}), {{0, &xr}, {1, &bw}, {2, &yr}, {3, &yhr}}, rp, rows);
    const kparams::RmsPlanesParams pp{n, rows, 1e-5f, 1.0f, parts, 0, 0, 0};
    auto xf = upload(x), yf = poisoned(size_t(total) * 4), yhf = poisoned(size_t(total) * 2 + 64);
    run_once(kernels().get("rms_norm_f32_f16_planes", {{0, 64}}),
             {{0, &xf}, {1, &bw}, {2, &yf}, {3, &yhf}, {4, &bp}}, pp, rows);
    auto xs = download<float>(xr, total);
    ASSERT_EQ(download<float>(xf, total), xs) << "the residual with its planes, parts " << parts;
    ASSERT_EQ(download<float>(yf, total), download<float>(yr, total)) << "parts " << parts;
    ASSERT_EQ(download<uint16_t>(yhf, total + 32), download<uint16_t>(yhr, total + 32)) << "parts " << parts;
    double worst = 0;  // the summed residual against float64
    for (uint32_t i = 0; i < total; ++i) {
      double v = x[i];
      for (uint32_t q = 0; q < parts; ++q) v += planes[size_t(q) * total + i];
      worst = std::max(worst, std::fabs(xs[i] - v));
    }
    EXPECT_LT(worst, 1e-5) << "parts " << parts;
    auto xo = upload(x), yho = poisoned(size_t(total) * 2 + 64);  // rms_norm_f16_planes: the f16 copy alone
    run_once(kernels().get("rms_norm_f16_planes", {{0, 64}}), {{0, &xo}, {1, &bw}, {3, &yho}, {4, &bp}}, pp, rows);
    ASSERT_EQ(download<float>(xo, total), xs);
    ASSERT_EQ(download<uint16_t>(yho, total + 32), download<uint16_t>(yhr, total + 32));
  }
  const uint32_t m = 2474;
  auto g = random_floats(m, -4, 4), u = random_floats(m);
  auto bg = upload(g), bu = upload(u);
  for (uint32_t act : {0u, 1u}) {
    const kparams::GatedActParams gp{m, act, 0, 0};
    auto h32 = poisoned(m * 4), h = poisoned(m * 4), hh = poisoned(m * 2 + 64);
    run_once(kernels().get("gated_act_f32", {}), {{0, &bg}, {1, &bu}, {2, &h32}}, gp, (m + 255) / 256);
    run_once(kernels().get("gated_act_f32_f16", {}), {{0, &bg}, {1, &bu}, {2, &h}, {3, &hh}}, gp,
             (m / 2 + 255) / 256);
    auto a = download<float>(h32, m), b = download<float>(h, m);
    ASSERT_EQ(a, b) << "gated_act_f32_f16's f32 output differs from gated_act_f32's, act " << act;
    std::vector<double> ref(m);
    for (uint32_t i = 0; i < m; ++i) {
      double v = g[i];
      double av = act == 0 ? v / (1 + std::exp(-v))
                           : 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      ref[i] = av * u[i];
    }
    EXPECT_LT(nmse(b, ref), 1e-11) << "act " << act;
    expect_f16_of(download<uint16_t>(hh, m + 32), b, 32, "gated_act_f32_f16");
    auto hh2 = poisoned(m * 2 + 64);  // gated_act_f16: the same f16 copy alone
    run_once(kernels().get("gated_act_f16", {}), {{0, &bg}, {1, &bu}, {3, &hh2}}, gp, (m / 2 + 255) / 256);
    ASSERT_EQ(download<uint16_t>(hh2, m + 32), download<uint16_t>(hh, m + 32));
  }
}

}  // namespace
}  // namespace bs::testing
