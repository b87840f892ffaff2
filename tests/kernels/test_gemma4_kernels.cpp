// Gemma 4's kernels against float64 CPU references, odd sizes, poisoned outputs: scale_by (layer_scalar),
// ple_combine (per-layer inputs), embed_i4 (DOPPLER's int4 per-layer-embedding table), and the
// attention fallback (attention.comp) at head_dim 512, the 31B's full layers.
#include <gtest/gtest.h>

#include "runtime/base/half.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using namespace kparams;

class Gemma4Kernels : public KernelTest {
 protected:
  void attention_512(uint32_t window);
};

TEST_F(Gemma4Kernels, ScaleByMultipliesOnlyNElements) {
  const uint32_t n = 1001;
  auto x = random_floats(n + 37);
  float s = random_floats(1, 0.5f, 2.0f)[0];
  auto bx = upload(x), bs = upload(std::vector<float>{s});
  run_once(kernels().get("scale_by_f32", {}), {{0, &bx}, {1, &bs}}, ScaleByParams{n, 0, 0, 0}, (n + 255) / 256);
  auto got = download<float>(bx, x.size());
  std::vector<double> ref(n);
  for (uint32_t i = 0; i < n; ++i) ref[i] = double(x[i]) * s;
  EXPECT_LT(nmse(std::vector<float>(got.begin(), got.begin() + n), ref), 1e-12) << "seed=" << test_seed();
  for (size_t i = n; i < x.size(); ++i) ASSERT_EQ(got[i], x[i]) << "element " << i << " past n was written";
}

TEST_F(Gemma4Kernels, PleCombine) {
  const uint32_t P = 33, L = 3, M = 5, stride = 7;
  const float eps = 1e-6f, proj_scale = 0.0625f, combine = float(std::sqrt(0.5));
  auto proj = random_floats(size_t(M) * L * P, -4.0f, 4.0f), rows = random_floats(size_t(M) * L * P);
  auto w = random_floats(P, 0.5f, 1.5f);
  auto bp = upload(proj), bw = upload(w), br = upload(rows);
  auto out = poisoned(size_t(L) * stride * P * 4);
  run_once(kernels().get("ple_combine_f32", {}), {{0, &bp}, {1, &bw}, {2, &br}, {3, &out}},
           PleCombineParams{P, L, stride, eps, 0.0f, proj_scale, combine, 0}, M, L);
  auto got = download<float>(out, size_t(L) * stride * P);
  std::vector<float> g;
  std::vector<double> ref;
  for (uint32_t l = 0; l < L; ++l)
    for (uint32_t m = 0; m < M; ++m) {
      const size_t in = (size_t(m) * L + l) * P;
      double ss = 0;
      for (uint32_t i = 0; i < P; ++i) ss += double(proj[in + i]) * proj_scale * proj[in + i] * proj_scale;
      double r = 1.0 / std::sqrt(ss / P + eps);
      for (uint32_t i = 0; i < P; ++i) {
        ref.push_back((double(proj[in + i]) * proj_scale * r * w[i] + rows[in + i]) * combine);
        g.push_back(got[(size_t(l) * stride + m) * P + i]);
      }
    }
  EXPECT_LT(nmse(g, ref), 1e-11) << "seed=" << test_seed();
  // Rows m >= M of each layer's stride stay poisoned.
  for (uint32_t l = 0; l < L; ++l)
    for (size_t i = (size_t(l) * stride + M) * P; i < size_t(l + 1) * stride * P; ++i)
      ASSERT_TRUE(std::isnan(got[i])) << "layer " << l << " element " << i << " was written";
}

// embed_i4: out[t, :] = (nibble - 8) * row_scale[token] * scale over a table split in two bindings.
TEST_F(Gemma4Kernels, EmbedInt4Table) {
  const uint32_t vocab = 37, dim = 77, n = 11, split = 20;
  const uint32_t rb = (dim + 1) / 2;
  std::vector<uint8_t> table(size_t(vocab) * rb);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : table) b = uint8_t(byte(rng()));
  auto scales = random_floats(vocab, 0.01f, 0.2f);
  std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab) - 1);
  std::vector<int32_t> tokens(n);
  for (auto& t : tokens) t = tok(rng());
  tokens[n - 1] = tokens[0];
  const float scale = 1.7f;
  std::vector<double> ref;
  for (int32_t t : tokens)
    for (uint32_t i = 0; i < dim; ++i) {
      uint8_t b = table[size_t(t) * rb + i / 2];
      ref.push_back(double(int((i & 1) ? b >> 4 : b & 15) - 8) * scales[t] * scale);
    }
  auto part = [&](uint32_t r0, uint32_t r1) {
    std::vector<uint8_t> v(table.begin() + r0 * rb, table.begin() + r1 * rb);
    v.resize((v.size() + 15) / 16 * 16, 0);
    return upload(v);
  };
  auto lo = part(0, split), hi = part(split, vocab), bt = upload(tokens), bs = upload(scales);
  auto out = poisoned(ref.size() * 4);
  const auto& p = kernels().get("embed_i4", {{0, 64}});
  run_once(p, {{0, &lo}, {1, &bt}, {2, &out}, {3, &bs}}, EmbedParams{dim, n, scale, 0}, n);
  run_once(p, {{0, &hi}, {1, &bt}, {2, &out}, {3, &bs}}, EmbedParams{dim, n, scale, split}, n);
  EXPECT_LT(nmse(download<float>(out, ref.size()), ref), 1e-12) << "seed=" << test_seed();
}

// attention_f16kv at head_dim 512 (GQA 3:1, rows at positions pos0.., causal and windowed, scale 1).
void Gemma4Kernels::attention_512(uint32_t window) {
  const uint32_t H = 3, KV = 1, hd = 512, M = 3, pos0 = 6, ctx = 13;
  auto q = random_floats(size_t(M) * H * hd);
  auto kf = random_floats(size_t(ctx) * KV * hd), vf = random_floats(size_t(ctx) * KV * hd);
  std::vector<uint16_t> kh(kf.size()), vh(vf.size());
  for (size_t i = 0; i < kf.size(); ++i) kh[i] = float_to_half(kf[i] * 0.1f), vh[i] = float_to_half(vf[i]);
  std::vector<double> ref;
  for (uint32_t r = 0; r < M; ++r)
    for (uint32_t h = 0; h < H; ++h) {
      uint32_t pos = pos0 + r, lo = window && pos + 1 > window ? pos + 1 - window : 0;
      std::vector<double> s;
      double mx = -1e300;
      for (uint32_t j = lo; j <= pos; ++j) {
        double d = 0;
        for (uint32_t i = 0; i < hd; ++i) d += double(q[(size_t(r) * H + h) * hd + i]) * half_to_float(kh[size_t(j) * hd + i]);
        s.push_back(d);
        mx = std::max(mx, d);
      }
      double sum = 0;
      for (auto& x : s) sum += (x = std::exp(x - mx));
      for (uint32_t i = 0; i < hd; ++i) {
        double a = 0;
        for (uint32_t j = lo; j <= pos; ++j) a += s[j - lo] * half_to_float(vh[size_t(j) * hd + i]);
        ref.push_back(a / sum);
      }
    }
  auto bq = upload(q), bk = upload(kh), bv = upload(vh);
  auto scores = poisoned(size_t(M) * H * ctx * 4), out = poisoned(ref.size() * 4);
  auto state = upload(std::vector<uint32_t>{0, pos0, 0, 0});
  run_once(kernels().get("attention_f16kv", {}), {{0, &bq}, {1, &bk}, {2, &bv}, {3, &out}, {4, &scores}, {5, &state}},
             AttentionParams{M, H, KV, hd, ctx, window, 1.0f, 0.0f}, H, M);
  EXPECT_LT(nmse(download<float>(out, ref.size()), ref), 1e-10) << "window=" << window << " seed=" << test_seed();
}

TEST_F(Gemma4Kernels, AttentionHeadDim512) {
  attention_512(0);
  attention_512(4);
}

}  // namespace
}  // namespace bs::testing
