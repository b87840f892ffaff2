// matmul_cm_{f16,q8_0,q4k,q6k}: Y[M, m] (+)= X[M, k] W[m, k]^T on tensor cores, for every weight dtype
// and tile, with M and m that leave edge fragments (through the shared scratch) and whole fragments
// (stored directly, and with accumulate loaded from Y), m not a multiple of 4 (no direct stores at
// all), a poisoned output and the accumulate epilogue. Reference: float64 over the dequantized
// weights. These run only where the device has cooperative matrices (lavapipe has none: they skip);
// the kernel choice and the scalar fallback are checked on every device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "runtime/base/half.h"
#include "runtime/model/model.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecParams;

// x as the tensor-core kernels read it (the model's to_f16 writes it): f16, NaN after the last value.
std::vector<uint16_t> f16_with_nan_tail(const std::vector<float>& x) {
  std::vector<uint16_t> h;
  for (float v : with_nan_tail(x)) h.push_back(float_to_half(v));
  return h;
}

// X and W are rounded to f16 (unit roundoff u = 2^-11) before exact products summed in f32, so each
// output is off by at most ~2u of the sum of |terms|: a scaled error (see DotRef) of at most
// (2u)^2 ~ 9.5e-7 even if every rounding went the same way. Random roundings give ~1e-9; a wrong
// index or a lost fragment gives ~1.
constexpr double kCoopmatError = 1e-6;

struct Case {
  uint32_t tokens, m, k, accumulate;
};


// Sets an environment variable for the life of the object.
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~ScopedEnv() { unsetenv(name); }
};

class MatmulCm : public KernelTest {
 protected:
  void SetUp() override {
    KernelTest::SetUp();
    if (!device().has_coopmat_f16())
      GTEST_SKIP() << device().adapter().name << " has no cooperative matrices (VK_NV_cooperative_matrix with "
                   << "16x16x16 f16 -> f32): a missing GPU feature, so the tensor-core matmul cannot run here "
                   << "(the scalar matmul it falls back to is tested in test_kernels)";
  }

  void check(DType t, Case c) {
    Weights w = random_weights(t, c.m, c.k);
    auto x = random_floats(size_t(c.tokens) * c.k, -2, 2);
    auto y0 = random_floats(size_t(c.tokens) * c.m);
    DotRef ref = dot_ref(w.dq.data(), x.data(), c.accumulate ? y0.data() : nullptr, c.m, c.k, c.tokens);
    auto bw = upload(w.bytes), bx = upload(f16_with_nan_tail(x));
    for (const model::CoopmatTile& tile : model::coopmat_tiles()) {
      if (c.k % tile.bk != 0) continue;
      auto by = c.accumulate ? upload(y0) : poisoned(ref.value.size() * 4);
      run_once(kernels().get("matmul_cm_" + kernel_suffix(t) + tile.suffix),
               {{0, &bw}, {1, &bx}, {2, &by}}, MatvecParams{c.m, c.k, c.tokens, c.accumulate},
               (c.m + tile.bn - 1) / tile.bn, (c.tokens + tile.bm - 1) / tile.bm);
      auto y = download<float>(by, ref.value.size());
      EXPECT_LT(scaled_error(y, ref), kCoopmatError)
          << dtype_name(t) << " tile " << tile.bm << "x" << tile.bn << " M=" << c.tokens << " m=" << c.m
          << " k=" << c.k << " acc=" << c.accumulate << " seed=" << test_seed();
    }
  }
};

// Cases: one token; ragged M and m with accumulate (edge fragments only where m % 4 != 0); whole
// tiles with accumulate (every fragment loaded from Y and stored directly); a grid of several
// workgroups each way with ragged edges.
TEST_F(MatmulCm, F16) {
  for (Case c : {Case{1, 37, 64, 0}, Case{7, 129, 96, 1}, Case{128, 256, 64, 1}, Case{200, 300, 160, 0}})
    check(DType::F16, c);
}

TEST_F(MatmulCm, Q8_0) {
  for (Case c : {Case{1, 37, 96, 0}, Case{7, 129, 160, 1}, Case{128, 256, 64, 1}, Case{200, 300, 288, 0}})
    check(DType::Q8_0, c);
}

TEST_F(MatmulCm, Q4K) {
  for (Case c : {Case{1, 37, 256, 0}, Case{7, 129, 768, 1}, Case{128, 256, 256, 1}, Case{200, 300, 512, 0},
                 Case{65, 37, 640, 0}, Case{7, 129, 1152, 1}, Case{130, 100, 320, 0}, Case{3, 20, 96, 1}})  // padded rows
    check(DType::Q4_K, c);
}

TEST_F(MatmulCm, Q6K) {
  for (Case c : {Case{1, 37, 256, 0}, Case{7, 129, 768, 1}, Case{128, 256, 256, 1}, Case{200, 300, 512, 0}})
    check(DType::Q6_K, c);
}

// Split-k (CM_SPLITK + splitk_reduce): the parts' planes summed into Y, with and without accumulate, parts that
// do not divide the k steps (8 steps in 3 parts: 2, 3, 3), ragged M and m, and planes poisoned before.
TEST_F(MatmulCm, SplitK) {
  for (DType t : kWeightTypes)
    for (auto [c, parts] : {std::pair{Case{200, 300, 512, 1}, 3u}, std::pair{Case{7, 129, 768, 0}, 2u},
                            std::pair{Case{130, 64, 1024, 1}, 4u}}) {
      Weights w = random_weights(t, c.m, c.k);
      auto x = random_floats(size_t(c.tokens) * c.k, -2, 2);
      auto y0 = random_floats(size_t(c.tokens) * c.m);
      DotRef ref = dot_ref(w.dq.data(), x.data(), c.accumulate ? y0.data() : nullptr, c.m, c.k, c.tokens);
      const uint32_t n = c.tokens * c.m;
      auto bw = upload(w.bytes), bx = upload(f16_with_nan_tail(x)), planes = poisoned(uint64_t(parts) * n * 4);
      auto by = c.accumulate ? upload(y0) : poisoned(n * 4);
      run_once(kernels().get("matmul_cm_" + kernel_suffix(t) + "_128x128sk64_split"), {{0, &bw}, {1, &bx}, {2, &planes}},
               MatvecParams{c.m, c.k, c.tokens, c.accumulate}, (c.m + 127) / 128, (c.tokens + 127) / 128 * parts);
      run_once(kernels().get("splitk_reduce"), {{0, &planes}, {1, &by}}, kparams::SplitKParams{n, parts, c.accumulate, 0},
               (n + 255) / 256);
      EXPECT_LT(scaled_error(download<float>(by, n), ref), kCoopmatError)
          << dtype_name(t) << " parts " << parts << " M=" << c.tokens << " m=" << c.m << " k=" << c.k
          << " acc=" << c.accumulate << " seed=" << test_seed();
    }
}

// The gated FFN's GEMM (CM_GATED): H = act(X Wg^T) * (X Wu^T) in f16, for every dtype and both activations, with
// ragged M, m that leaves a workgroup's last fragments outside (m % 64 != 0) and a poisoned output; the f16 rows
// past M stay poisoned. The reference's scale: how the gate's and up's errors (each within their sums of |terms|)
// and the f16 rounding of h carry into h.
TEST_F(MatmulCm, Gated) {
  for (DType t : kWeightTypes)
    for (auto [tokens, m, k, act] : {std::tuple{77u, 208u, 256u, 0u}, std::tuple{130u, 64u, 512u, 1u},
                                     std::tuple{1u, 48u, 256u, 0u}}) {
      Weights wg = random_weights(t, m, k), wu = random_weights(t, m, k);
      auto x = random_floats(size_t(tokens) * k, -2, 2);
      DotRef g = dot_ref(wg.dq.data(), x.data(), nullptr, m, k, tokens), u = dot_ref(wu.dq.data(), x.data(), nullptr, m, k, tokens);
      DotRef h;
      for (size_t i = 0; i < g.value.size(); ++i) {
        double a = act == 0 ? g.value[i] / (1 + std::exp(-g.value[i]))
                            : 0.5 * g.value[i] * (1 + std::tanh(0.7978845608028654 * (g.value[i] + 0.044715 * std::pow(g.value[i], 3))));
        h.value.push_back(a * u.value[i]);
        h.scale.push_back(1.2 * g.scale[i] * std::abs(u.value[i]) + std::abs(a) * u.scale[i] + std::abs(a * u.value[i]));
      }
      const size_t n = size_t(tokens) * m, rows = size_t(tokens + 5) * m;  // 5 rows past M: must stay poisoned
      auto bg = upload(wg.bytes), bu = upload(wu.bytes), bx = upload(f16_with_nan_tail(x)), bh = poisoned(rows * 2);
      run_once(kernels().get("matmul_cm_" + kernel_suffix(t) + "_128x128sk64_gated"), {{0, &bg}, {1, &bx}, {2, &bh}, {4, &bu}},
               kparams::GatedMatmulParams{m, k, tokens, act}, (tokens + 127) / 128, (m + 63) / 64);
      auto raw = download<uint16_t>(bh, rows);
      std::vector<float> got;
      for (size_t i = 0; i < n; ++i) got.push_back(half_to_float(raw[i]));
      EXPECT_LT(scaled_error(got, h), kCoopmatError)
          << dtype_name(t) << " M=" << tokens << " m=" << m << " k=" << k << " act=" << act << " seed=" << test_seed();
      for (size_t i = n; i < rows; ++i) ASSERT_EQ(raw[i], 0xFFFF) << dtype_name(t) << " element " << i << " past M";
    }
}

// The tensor-core and scalar kernels agree on a Llama-sized projection (k = 2048, 512 tokens).
TEST_F(MatmulCm, MatchesScalarMatmulAtModelSize) {
  uint32_t tokens = 512, m = 512, k = 2048;
  Weights w = random_weights(DType::Q4_K, m, k);
  auto x = random_floats(size_t(tokens) * k, -2, 2);
  DotRef ref = dot_ref(w.dq.data(), x.data(), nullptr, m, k, tokens);
  auto bw = upload(w.bytes), bx = upload(x), bx16 = upload(f16_with_nan_tail(x));
  auto y_cm = poisoned(ref.value.size() * 4), y_sc = poisoned(ref.value.size() * 4);
  model::MatmulPlan plan = model::plan_prefill_matmul(kernels(), DType::Q4_K, m, k, tokens);
  ASSERT_EQ(plan.kernel, "matmul_cm_q4k_64x64k64");
  ASSERT_TRUE(plan.f16_x);
  run_once(kernels().get(plan.kernel, plan.constants), {{0, &bw}, {1, &bx16}, {2, &y_cm}},
           MatvecParams{m, k, tokens, 0}, plan.groups_x, plan.groups_y);
  run_once(kernels().get("matmul_q4k"), {{0, &bw}, {1, &bx}, {2, &y_sc}}, MatvecParams{m, k, tokens, 0},
           (m + 63) / 64, (tokens + 63) / 64);
  EXPECT_LT(scaled_error(download<float>(y_cm, ref.value.size()), ref), kCoopmatError) << "seed=" << test_seed();
  EXPECT_LT(scaled_error(download<float>(y_sc, ref.value.size()), ref), 1e-10) << "seed=" << test_seed();
}

// Which prefill kernel the model records, on every device: the tensor-core one only where the device
// has cooperative matrices, never when k is not a whole number of 32-wide steps or
// BLUESHIFT_NO_COOPMAT=1; the scalar one (64 x 64 tiles) otherwise, and it runs and is right.
class PrefillPlan : public KernelTest {};

TEST_F(PrefillPlan, TensorCoresOnlyWhereTheDeviceHasThem) {
  bool cm = device().has_coopmat_f16();
  for (DType t : kWeightTypes) {
    std::string cm_name = "matmul_cm_" + kernel_suffix(t);
    EXPECT_EQ(kernels().has(cm_name), cm) << cm_name << " on " << device().adapter().name;
    model::MatmulPlan p = model::plan_prefill_matmul(kernels(), t, 300, 512, 70);
    EXPECT_EQ(p.kernel, cm ? "matmul_cm_" + kernel_suffix(t) + "_64x64k64" : "matmul_" + kernel_suffix(t));
    EXPECT_EQ(p.f16_x, cm);  // the tensor-core kernels read X in f16
    EXPECT_TRUE(p.constants.empty());
    EXPECT_EQ(p.groups_x, 5u);  // ceil(300 / 64) rows of W: 64 x 64 tiles (k step 64 here) for this small grid
    EXPECT_EQ(p.groups_y, 2u);  // ceil(70 / 64) tokens
    if (!cm) {
      EXPECT_THROW(kernels().get(cm_name), Error) << cm_name;
    }
  }
  // k = 80 is not a multiple of the 32-wide step: scalar kernel on every device.
  EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::F16, 64, 80, 64).kernel, "matmul_f16");
  {
    ScopedEnv off("BLUESHIFT_NO_COOPMAT", "1");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 300, 512, 70).kernel, "matmul_q4k");
  }
  {
    ScopedEnv tile("BLUESHIFT_MATMUL_TILE", "96x64");
    if (cm) {
      EXPECT_THROW(model::plan_prefill_matmul(kernels(), DType::Q4_K, 300, 512, 70), Error);
    }
  }
  if (cm) {  // the tile follows the grid: the largest that still gives enough workgroups
    // Q4_K, F16, Q8_0: the k-64 tile where 128x128 would make 128 workgroups (also in place of 256x128k16).
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::F16, 14336, 4096, 512).kernel, "matmul_cm_f16_128x128sk64");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q8_0, 4096, 4096, 512).kernel, "matmul_cm_q8_0_128x128sk64");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::F16, 2048, 8192, 512).kernel, "matmul_cm_f16");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 8192, 2048, 512).kernel, "matmul_cm_q4k_128x128sk64");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 14336, 4096, 512).kernel, "matmul_cm_q4k_128x128sk64");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q6_K, 14336, 4096, 512).kernel, "matmul_cm_q6k_256x128k16");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 8192, 2048, 128).kernel, "matmul_cm_q4k");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 2048, 2048, 512).kernel, "matmul_cm_q4k");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 1024, 4096, 512).kernel, "matmul_cm_q4k_64x64k64");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 512, 2048, 512).kernel, "matmul_cm_q4k_64x64k64");
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 4096, 4096, 512).kernel, "matmul_cm_q4k_128x128sk64");
    {
      ScopedEnv off("BLUESHIFT_MATMUL_SK64", "0");
      EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 4096, 4096, 512).kernel, "matmul_cm_q4k_128x128");
      EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 14336, 4096, 512).kernel, "matmul_cm_q4k_256x128k16");
    }
    {
      ScopedEnv only("BLUESHIFT_MATMUL_SK64", "1");  // only where 128x128 would be chosen
      EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 4096, 4096, 512).kernel, "matmul_cm_q4k_128x128sk64");
      EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 14336, 4096, 512).kernel, "matmul_cm_q4k_256x128k16");
    }
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q6_K, 4096, 14336, 512).kernel, "matmul_cm_q6k_128x128sk64");
    {
      ScopedEnv off("BLUESHIFT_MATMUL_Q6K_SK64", "0");
      EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q6_K, 4096, 14336, 512).kernel, "matmul_cm_q6k_128x128");
    }
    EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 512, 2080, 512).kernel, "matmul_cm_q4k");  // k % 64
    ScopedEnv tile("BLUESHIFT_MATMUL_TILE", "64x64");
    model::MatmulPlan p = model::plan_prefill_matmul(kernels(), DType::Q6_K, 2048, 2048, 512);
    EXPECT_EQ(p.kernel, "matmul_cm_q6k");
    EXPECT_EQ(p.groups_x, 32u);
    EXPECT_EQ(p.groups_y, 8u);
  }
}

// Split-k only for callers that can run it, where 128x128 leaves at least half the multiprocessors idle.
TEST_F(PrefillPlan, SplitKFillsTheGpu) {
  const uint32_t sms = device().adapter().sm_count;
  const bool able = device().has_coopmat_f16() && sms > 0;
  model::MatmulPlan p = model::plan_prefill_matmul(kernels(), DType::Q4_K, 2048, 2048, 512, true, true);
  if (!able) {  // lavapipe: no tensor cores, no multiprocessor count: never split
    EXPECT_EQ(p.parts, 1u);
    EXPECT_EQ(p.kernel, device().has_coopmat_f16() ? "matmul_cm_q4k" : "matmul_q4k");
    return;
  }
  EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 2048, 2048, 512).parts, 1u);  // not asked
  const uint32_t g = 16 * 4;  // 128x128 workgroups of 2048 rows x 512 tokens
  if (sms < 2 * g) {
    EXPECT_EQ(p.parts, 1u);
    return;
  }
  EXPECT_EQ(p.kernel, "matmul_cm_q4k_128x128sk64_split");
  EXPECT_EQ(p.parts, std::min(8u, sms / g));
  EXPECT_EQ(p.groups_x, 16u);
  EXPECT_EQ(p.groups_y, 4u * p.parts);
  // 512 rows x 512 tokens: 16 workgroups; k 2048 is 32 steps, 8 parts of 4.
  model::MatmulPlan kv = model::plan_prefill_matmul(kernels(), DType::Q6_K, 512, 2048, 512, true, true);
  EXPECT_EQ(kv.kernel, "matmul_cm_q6k_128x128sk64_split");
  EXPECT_EQ(kv.parts, std::min({8u, sms / 16, 8u}));
  EXPECT_LE(uint64_t(kv.parts) * 512 * 512, model::kSplitKPlaneFloats);
  // k 512 is 8 steps: at most 2 parts of 4.
  EXPECT_LE(model::plan_prefill_matmul(kernels(), DType::F16, 512, 512, 512, true, true).parts, 2u);
  // Grids that fill the GPU are not split.
  EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 4096, 4096, 512, true, true).parts, 1u);
  ScopedEnv off("BLUESHIFT_MATMUL_SPLITK", "0");
  EXPECT_EQ(model::plan_prefill_matmul(kernels(), DType::Q4_K, 2048, 2048, 512, true, true).kernel, "matmul_cm_q4k");
}

// splitk_reduce on every device, against the sum in the same order.
TEST_F(PrefillPlan, SplitKReduceSumsThePlanesInOrder) {
  for (auto [n, parts, acc] : {std::tuple{1000u, 3u, 1u}, std::tuple{257u, 8u, 0u}, std::tuple{1u, 2u, 1u}}) {
    auto planes = random_floats(size_t(n) * parts, -3, 3), y0 = random_floats(n);
    auto bp = upload(planes), by = acc ? upload(y0) : poisoned(n * 4);
    run_once(kernels().get("splitk_reduce"), {{0, &bp}, {1, &by}}, kparams::SplitKParams{n, parts, acc, 0}, (n + 255) / 256);
    auto got = download<float>(by, n);
    for (uint32_t i = 0; i < n; ++i) {
      float want = acc ? y0[i] : 0.0f;
      for (uint32_t q = 0; q < parts; ++q) want += planes[size_t(q) * n + i];
      ASSERT_EQ(got[i], want) << "n " << n << " parts " << parts << " i " << i;
    }
  }
}

TEST_F(PrefillPlan, FallbackRunsAndIsRight) {
  ScopedEnv off("BLUESHIFT_NO_COOPMAT", "1");  // the fallback even on a device with tensor cores
  uint32_t tokens = 70, m = 300, k = 512;
  Weights w = random_weights(DType::Q4_K, m, k);
  auto x = random_floats(size_t(tokens) * k, -2, 2);
  DotRef ref = dot_ref(w.dq.data(), x.data(), nullptr, m, k, tokens);
  auto bw = upload(w.bytes), bx = upload(x), by = poisoned(ref.value.size() * 4);
  model::MatmulPlan p = model::plan_prefill_matmul(kernels(), DType::Q4_K, m, k, tokens);
  ASSERT_EQ(p.kernel, "matmul_q4k");
  ASSERT_FALSE(p.f16_x);
  run_once(kernels().get(p.kernel, p.constants), {{0, &bw}, {1, &bx}, {2, &by}}, MatvecParams{m, k, tokens, 0},
           p.groups_x, p.groups_y);
  EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), 1e-10) << "seed=" << test_seed();
}

}  // namespace
}  // namespace bs::testing
