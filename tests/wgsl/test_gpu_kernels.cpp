// The corpus kernels of an LLM decode step, run on the GPU and compared with float64 CPU
// references: RMSNorm, RoPE, f16 GEMV (subgroupAdd), Q4_K GEMV, online-softmax attention, argmax.
#include <cmath>

#include "rdrr/quant.h"
#include "tests/wgsl/wgsl_gpu_test.h"

namespace bs::testing {
namespace {

class WgslKernels : public WgslGpu {};

TEST_F(WgslKernels, RmsNorm) {
  for (double wg : {128.0, 32.0}) {
    auto k = kernel("rms_norm.wgsl", "", {{"WG", wg}});
    for (uint32_t n : {1u, 7u, 255u, 1000u}) {
      uint32_t rows = 3;
      float eps = 1e-6f, offset = 1.0f;
      auto x = random_floats(size_t(rows) * n, -3, 3);
      auto w = random_floats(n);
      std::vector<double> ref(x.size());
      for (uint32_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (uint32_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
        double s = 1.0 / std::sqrt(ss / n + eps);
        for (uint32_t i = 0; i < n; ++i) ref[r * n + i] = x[r * n + i] * s * (offset + w[i]);
      }
      struct { uint32_t n, rows; float eps, offset; } params{n, rows, eps, offset};
      auto bx = upload(x), bw = upload(w), by = poisoned(x.size() * 4);
      auto bp = bytes_buffer(&params, sizeof(params));
      run(*k, {{0, &bx}, {1, &bw}, {2, &by}, {3, &bp}}, rows);
      EXPECT_LT(nmse(download<float>(by, x.size()), ref), 1e-11) << "n=" << n << " WG=" << wg;
    }
  }
}

TEST_F(WgslKernels, Rope) {
  auto k = kernel("rope.wgsl");
  uint32_t rows = 3, heads = 4, hd = 64, rot = 32, pos0 = 17;
  auto x = random_floats(size_t(rows) * heads * hd);
  std::vector<float> inv(rot / 2);
  for (uint32_t i = 0; i < rot / 2; ++i) inv[i] = float(std::pow(10000.0, -2.0 * i / rot));
  std::vector<double> ref(x.begin(), x.end());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t h = 0; h < heads; ++h)
      for (uint32_t i = 0; i < rot / 2; ++i) {
        size_t b = (size_t(r) * heads + h) * hd;
        double a = double(pos0 + r) * inv[i];
        double x0 = x[b + i], x1 = x[b + i + rot / 2];
        ref[b + i] = x0 * std::cos(a) - x1 * std::sin(a);
        ref[b + i + rot / 2] = x1 * std::cos(a) + x0 * std::sin(a);
      }
  struct { uint32_t rows, n_heads, head_dim, rot_dim, pos0, pad[3]; } p{rows, heads, hd, rot, pos0, {}};
  auto bx = upload(x), bi = upload(inv), bp = bytes_buffer(&p, sizeof(p));
  run(*k, {{0, &bx}, {1, &bi}, {2, &bp}}, (rows * heads * rot / 2 + 63) / 64);
  EXPECT_LT(nmse(download<float>(bx, x.size()), ref), 1e-10);
}

TEST_F(WgslKernels, GemvF16Subgroup) {
  if (!device().adapter().subgroup_arithmetic) GTEST_SKIP() << "no subgroup arithmetic";
  for (double rows_per_wg : {2.0, 4.0}) {
    auto k = kernel("gemv_f16_subgroup.wgsl", "", {{"ROWS", rows_per_wg}});
    for (auto [m, kk] : {std::pair<uint32_t, uint32_t>{1, 2}, {37, 250}, {65, 1024}}) {
      auto wf = random_floats(size_t(m) * kk);
      std::vector<uint16_t> wh(wf.size());
      for (size_t i = 0; i < wf.size(); ++i) wh[i] = float_to_half(wf[i]);
      auto x = random_floats(kk);
      std::vector<float> wd(wh.size());
      for (size_t i = 0; i < wh.size(); ++i) wd[i] = half_to_float(wh[i]);
      DotRef ref = dot_ref(wd.data(), x.data(), nullptr, m, kk, 1);  // error vs sum |w x|: m = 1 may cancel
      uint32_t dims[4] = {m, kk, 0, 0};
      auto bw = upload(wh), bx = upload(x), by = poisoned(m * 4), bd = bytes_buffer(dims, sizeof(dims));
      uint32_t rpw = uint32_t(rows_per_wg);
      run(*k, {{0, &bw}, {1, &bx}, {2, &by}, {3, &bd}}, (m + rpw - 1) / rpw);
      EXPECT_LT(scaled_error(download<float>(by, m), ref), 1e-10) << m << "x" << kk << " rows=" << rpw;
    }
  }
}

TEST_F(WgslKernels, GemvQ4K) {
  auto k = kernel("gemv_q4k.wgsl");
  for (auto [m, kk] : {std::pair<uint32_t, uint32_t>{3, 256}, {17, 1024}, {64, 2304}}) {
    auto wf = random_floats(size_t(m) * kk, -2, 2);
    size_t row_bytes = kk / 256 * 144;
    std::vector<uint8_t> q(m * row_bytes);
    std::vector<float> deq(wf.size());
    for (uint32_t r = 0; r < m; ++r) {
      quantize_row(DType::Q4_K, wf.data() + size_t(r) * kk, q.data() + r * row_bytes, kk);
      dequantize_row(DType::Q4_K, q.data() + r * row_bytes, deq.data() + size_t(r) * kk, kk);
    }
    auto x = random_floats(kk);
    DotRef ref = dot_ref(deq.data(), x.data(), nullptr, m, kk, 1);
    uint32_t p[4] = {m, kk, 0, 0};
    auto bq = bytes_buffer(q.data(), q.size()), bx = upload(x), by = poisoned(m * 4), bp = bytes_buffer(p, sizeof(p));
    run(*k, {{0, &bq}, {1, &bx}, {2, &by}, {3, &bp}}, m);
    EXPECT_LT(scaled_error(download<float>(by, m), ref), 1e-10) << m << "x" << kk;
  }
}

TEST_F(WgslKernels, AttentionDecodeOnlineSoftmax) {
  auto k = kernel("attention_decode.wgsl");
  const uint32_t D = 64;
  for (auto [len, heads, kv_heads] : {std::tuple<uint32_t, uint32_t, uint32_t>{1, 2, 1}, {37, 4, 2}, {300, 8, 8}}) {
    auto q = random_floats(heads * D), kc = random_floats(size_t(len) * kv_heads * D, -2, 2),
         vc = random_floats(size_t(len) * kv_heads * D);
    float scale = 1.0f / std::sqrt(float(D));
    std::vector<double> ref(heads * D);
    for (uint32_t h = 0; h < heads; ++h) {
      uint32_t kvh = h / (heads / kv_heads);
      std::vector<double> s(len);
      double mx = -1e300;
      for (uint32_t j = 0; j < len; ++j) {
        double d = 0;
        for (uint32_t i = 0; i < D; ++i) d += double(q[h * D + i]) * kc[(size_t(j) * kv_heads + kvh) * D + i];
        s[j] = d * scale;
        mx = std::max(mx, s[j]);
      }
      double l = 0;
      for (uint32_t j = 0; j < len; ++j) l += std::exp(s[j] - mx);
      for (uint32_t j = 0; j < len; ++j)
        for (uint32_t i = 0; i < D; ++i)
          ref[h * D + i] += std::exp(s[j] - mx) / l * vc[(size_t(j) * kv_heads + kvh) * D + i];
    }
    struct { uint32_t len, n_heads, n_kv_heads; float scale; } p{len, heads, kv_heads, scale};
    auto bq = upload(q), bk = upload(kc), bv = upload(vc), bo = poisoned(heads * D * 4), bp = bytes_buffer(&p, sizeof(p));
    run(*k, {{0, &bq}, {1, &bk}, {2, &bv}, {3, &bo}, {4, &bp}}, heads);
    EXPECT_LT(nmse(download<float>(bo, heads * D), ref), 1e-10) << "len=" << len;
  }
}

TEST_F(WgslKernels, Argmax) {
  auto k = kernel("argmax.wgsl");
  for (uint32_t n : {1u, 255u, 256u, 32000u}) {
    auto x = random_floats(n, -10, 10);
    size_t want = std::max_element(x.begin(), x.end()) - x.begin();
    if (n > 10) x[n - 1] = x[want];  // a tie: the lower index wins
    auto bx = upload(x), br = poisoned(8);
    run(*k, {{0, &bx}, {1, &br}}, 1);
    auto r = download<uint32_t>(br, 2);
    EXPECT_EQ(r[0], want) << "n=" << n;
    EXPECT_EQ(bits_to_float(r[1]), x[want]);
  }
}

}  // namespace
}  // namespace bs::testing
