// matmul_rows_cm_{f16,q8_0,q4k,q6k}[_gated] (serve's batched decode on tensor cores): Y[M, m] (+)= X[M, k]
// W^T for M <= 32 and the gated FFN act(X W^T) * (X U^T) in f16, against float64 over the dequantized
// weights. Odd M (one A fragment, two, ragged), m not a multiple of 16, k of one step to many (Q4_K rows
// padded to whole blocks), every workgroup size from one subgroup to eight (steps fewer than subgroups, and
// not a multiple of them); X's rows past M (the rest of the 16-row slab the A fragments read) are NaN,
// outputs poisoned, and one poisoned row past the output must stay so. These run only where the device has
// cooperative matrices (lavapipe has none: they skip, and serve's batched decode there runs the multi-row
// matvec, tested in test_kernels); the same source with the fragments emulated (matmul_rows_emu_*) and the
// plan (plan_rows_cm) are checked on every device.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/base/half.h"
#include "runtime/model/model.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecNormParams;
using kparams::MatvecParams;

struct Case {
  uint32_t rows, m, k;
};

// Per dtype: k a multiple of the 64-wide step (Q6_K: of its 256-weight block); Q4_K also rows padded to whole
// blocks (k = 64, 640) and a Llama-sized one.
std::vector<Case> cases(DType t) {
  switch (t) {
    case DType::F16:
      return {{3, 37, 192}, {13, 130, 640}, {17, 48, 64}, {29, 100, 2048}, {32, 18, 128}, {1, 20, 256}};
    case DType::Q8_0:
      return {{3, 37, 192}, {13, 129, 640}, {17, 48, 64}, {29, 100, 1024}, {32, 18, 128}};
    case DType::Q4_K:
      return {{3, 37, 256}, {13, 130, 640}, {17, 48, 64}, {29, 100, 2048}, {31, 66, 768}, {16, 512, 2048}};
    default:
      return {{3, 37, 256}, {13, 130, 768}, {17, 48, 256}, {29, 100, 2048}, {32, 18, 512}};
  }
}

// X as the kernel reads it: f16 rows of k, in 16-row slabs (32 rows when M > 16) whose rows past M are
// NaN (they reach only accumulator rows that are never written), then a NaN tail.
std::vector<uint16_t> x_slabs(const std::vector<float>& x, uint32_t rows, uint32_t k) {
  const uint32_t slab = (rows + 15) / 16 * 16;
  std::vector<uint16_t> h(size_t(slab) * k + 256, 0x7e00);
  for (size_t i = 0; i < x.size(); ++i) h[i] = float_to_half(x[i]);
  return h;
}

// As test_matmul_cm.cpp: X and W rounded to f16 (u = 2^-11) before exact products summed in f32 put each
// output within ~2u of its sum of |terms|, a scaled error of at most (2u)^2 ~ 9.5e-7; a wrong index or a
// lost fragment gives ~1.
constexpr double kCoopmatError = 1e-6;

// The checks, for the tensor-core kernels (matmul_rows_cm_*) and their emulation (matmul_rows_emu_*).
class RowsCmTest : public KernelTest {
 protected:
  // Workgroup sizes (32 x subgroups) that fit the device's shared memory.
  std::vector<uint32_t> workgroups(std::vector<uint32_t> sizes, bool gated, uint32_t bk = 64, bool xs = false) {
    std::vector<uint32_t> out;
    for (uint32_t wg : sizes)
      if (model::rows_cm_shared_bytes(wg / 32, gated, bk, xs) <= device().adapter().max_shared_memory)
        out.push_back(wg);
    return out;
  }
  static std::string where(const std::string& kernel, Case c, uint32_t wg) {
    return fmt::format("{} M={} m={} k={} wg={} seed={}", kernel, c.rows, c.m, c.k, wg, test_seed());
  }

  // Plain Y (+)= X W^T at both k steps (64, and 128 where k allows: the *_k128 variants).
  // ... and 32 rows a workgroup (the *_r32 variants: two fragments of W, the shared memory of the gated
  // form); up to 16 rows also with X staged in shared memory (the *_xs variants).
  void store_and_accumulate(const std::string& prefix, DType t, Case c, const std::vector<uint32_t>& sizes) {
    for (uint32_t bk : {64u, 128u})
      if (c.k % bk == 0) plain(prefix + kernel_suffix(t) + (bk == 128 ? "_k128" : ""), t, c, sizes, bk, 16);
    plain(prefix + kernel_suffix(t) + "_r32", t, c, sizes, 64, 32);
    if (c.rows > 16) return;
    plain(prefix + kernel_suffix(t) + "_xs", t, c, sizes, 64, 16, true);
    plain(prefix + kernel_suffix(t) + "_r32_xs", t, c, sizes, 64, 32, true);
  }
  void plain(const std::string& kernel, DType t, Case c, const std::vector<uint32_t>& sizes, uint32_t bk,
             uint32_t wrows, bool xs = false) {
    for (uint32_t accumulate : {0u, 1u}) {
      Weights w = random_weights(t, c.m, c.k);
      auto x = random_floats(size_t(c.rows) * c.k, -2, 2), y0 = random_floats(size_t(c.rows) * c.m);
      DotRef ref = dot_ref(w.dq.data(), x.data(), accumulate ? y0.data() : nullptr, c.m, c.k, c.rows);
      auto bw = upload(w.bytes), bx = upload(x_slabs(x, c.rows, c.k));
      const auto fit = workgroups(sizes, wrows == 32, bk, xs);
      EXPECT_FALSE(fit.empty()) << kernel << ": no workgroup size fits the device's shared memory";
      for (uint32_t wg : fit) {
        // Y (NaN unless accumulating) and one NaN row after it, which the kernel must not touch.
        std::vector<float> init(size_t(c.rows + 1) * c.m, std::nanf(""));
        if (accumulate) std::copy(y0.begin(), y0.end(), init.begin());
        auto by = upload(init);
        run_once(kernels().get(kernel, {{0, wg}}), {{0, &bw}, {1, &bx}, {2, &by}},
                 MatvecParams{c.m, c.k, c.rows, accumulate}, (c.m + wrows - 1) / wrows);
        auto y = download<float>(by, init.size());
        EXPECT_LT(scaled_error({y.begin(), y.begin() + ref.value.size()}, ref), kCoopmatError)
            << where(kernel, c, wg) << " acc=" << accumulate;
        uint32_t touched = 0;
        for (size_t i = ref.value.size(); i < y.size(); ++i) touched += !std::isnan(y[i]);
        EXPECT_EQ(touched, 0u) << "values written past row M: " << where(kernel, c, wg);
      }
    }
  }

  void gated(const std::string& prefix, DType t, Case c, const std::vector<uint32_t>& sizes) {
    gated_kernel(prefix + kernel_suffix(t) + "_gated", t, c, sizes, false);
    if (c.rows <= 16) gated_kernel(prefix + kernel_suffix(t) + "_gated_xs", t, c, sizes, true);
  }
  void gated_kernel(const std::string& kernel, DType t, Case c, const std::vector<uint32_t>& sizes, bool xs) {
    c.m += c.m & 1u;  // the f16 pairs need m even
    for (uint32_t act : {0u, 1u}) {
      Weights wg = random_weights(t, c.m, c.k), wu = random_weights(t, c.m, c.k);
      auto x = random_floats(size_t(c.rows) * c.k, -1, 1);
      DotRef g = dot_ref(wg.dq.data(), x.data(), nullptr, c.m, c.k, c.rows);
      DotRef u = dot_ref(wu.dq.data(), x.data(), nullptr, c.m, c.k, c.rows);
      auto bg = upload(wg.bytes), bu = upload(wu.bytes), bx = upload(x_slabs(x, c.rows, c.k));
      const auto fit = workgroups(sizes, true, 64, xs);
      EXPECT_FALSE(fit.empty()) << kernel << ": no workgroup size fits the device's shared memory";
      for (uint32_t wgs : fit) {
        const size_t n = size_t(c.rows) * c.m;
        auto by = poisoned((n + c.m) * 2);  // f16 NaNs, and a row past the output
        run_once(kernels().get(kernel, {{0, wgs}}), {{0, &bg}, {1, &bx}, {2, &by}, {4, &bu}},
                 MatvecNormParams{c.m, c.k, c.rows, 0, 0.0f, 0.0f, act, 0}, (c.m + 15) / 16);
        auto raw = download<uint16_t>(by, n + c.m);
        std::vector<float> h(n);
        for (size_t i = 0; i < n; ++i) h[i] = half_to_float(raw[i]);
        // The dot products' error bound plus the output's f16 rounding (out_rel 1): 2u of the former and u
        // of the latter, ~1.5e-3 at worst.
        EXPECT_LT(gated_error(h, g, u, act, 1.0), 2e-3) << where(kernel, c, wgs) << " act=" << act;
        uint32_t touched = 0;
        for (size_t i = n; i < raw.size(); ++i) touched += raw[i] != 0xffff;
        EXPECT_EQ(touched, 0u) << "values written past row M: " << where(kernel, c, wgs);
      }
    }
  }
};

class MatmulRowsCm : public RowsCmTest {
 protected:
  void SetUp() override {
    RowsCmTest::SetUp();
    if (!device().has_coopmat_f16())
      GTEST_SKIP()
          << device().adapter().name << " has no cooperative matrices (VK_NV_cooperative_matrix with "
          << "16x16x16 f16 -> f32): a missing GPU feature, so serve's tensor-core kernel cannot run here "
          << "(MatmulRowsEmulated checks its indexing; its fallback, the multi-row matvec, is tested in "
          << "test_kernels)";
  }
};

TEST_F(MatmulRowsCm, StoreAndAccumulate) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t)) store_and_accumulate("matmul_rows_cm_", t, c, {32, 64, 128, 256});
}

TEST_F(MatmulRowsCm, GatedFfnInF16) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t)) gated("matmul_rows_cm_", t, c, {32, 64, 128, 192});
}

// The same kernel source with the fragments emulated (RCM_EMULATE), on every device: smaller cases (each
// invocation multiplies whole 16x16 matrices), still one and two A fragments, ragged m, padded Q4_K rows,
// steps fewer than subgroups and not a multiple of them.
std::vector<Case> small_cases(DType t) {
  if (t == DType::Q6_K) return {{3, 37, 256}, {17, 20, 768}};
  return {{3, 37, 192}, {17, 20, 640}, {32, 18, 64}};  // Q4_K: 192 and 640 are padded rows
}

class MatmulRowsEmulated : public RowsCmTest {};

TEST_F(MatmulRowsEmulated, StoreAndAccumulate) {
  for (DType t : kWeightTypes)
    for (Case c : small_cases(t)) store_and_accumulate("matmul_rows_emu_", t, c, {32, 96, 256});
}

TEST_F(MatmulRowsEmulated, GatedFfnInF16) {
  for (DType t : kWeightTypes)
    for (Case c : small_cases(t)) gated("matmul_rows_emu_", t, c, {96, 128});
}

// Which shapes get the kernel, and its workgroup, on every device: none without cooperative matrices.
class RowsCmChoice : public KernelTest {};

TEST_F(RowsCmChoice, TensorCoresOnlyWhereTheDeviceHasThem) {
  const gpu::KernelCache& kc = kernels();
  const bool cm = device().has_coopmat_f16();
  const uint32_t big = 49152;  // the H100's limit
  for (DType t : kWeightTypes) {
    const std::string name = "matmul_rows_cm_" + kernel_suffix(t);
    EXPECT_EQ(kc.has(name), cm) << name;
    EXPECT_EQ(kc.has(name + "_gated"), cm) << name;
    model::RowsCmPlan p = model::plan_rows_cm(kc, t, 2048, 2048, 16, false, big);
    EXPECT_EQ(p.kernel, cm ? name + "_xs" : "");  // up to 16 rows: X through shared memory
    if (!cm) continue;
    EXPECT_EQ(p.workgroup, 256u);  // 8 subgroups
    EXPECT_EQ(p.groups_x, 128u);
    p = model::plan_rows_cm(kc, t, 8192, 2048, 32, true, big);
    EXPECT_EQ(p.kernel, name + "_gated");
    EXPECT_EQ(p.workgroup, 192u);  // 6 subgroups: twice the tiles
    EXPECT_EQ(p.groups_x, 512u);
    const uint32_t k1 = t == DType::Q6_K ? 256 : 64;  // Q6_K: whole blocks
    EXPECT_EQ(model::plan_rows_cm(kc, t, 37, k1, 3, false, big).workgroup, 32 * k1 / 64);  // a subgroup a step at most
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 16, false, 16384).workgroup,
              64u);  // shared memory: 2 fit with their X tiles
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 17, false, 16384).workgroup, 128u);  // 4 without
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 17, false, big).kernel, name);
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 16, false, big, 0, false, 0, -1, 0).kernel, name);
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 16, false, big, 3).workgroup, 96u);
    p = model::plan_rows_cm(kc, t, 128256, 2048, 16, false, big);  // a head: 32 rows a workgroup
    EXPECT_EQ(p.kernel, name + "_r32_xs");
    EXPECT_EQ(p.groups_x, 4008u);
    EXPECT_EQ(p.workgroup, 160u);  // the gated form's default, 6 subgroups, less one for the X tiles
    EXPECT_EQ(model::plan_rows_cm(kc, t, 128256, 2048, 17, false, big).workgroup, 192u);
    EXPECT_EQ(model::plan_rows_cm(kc, t, 128256, 2048, 16, false, big, 0, false, 0, 0).groups_x, 8016u);
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 16, false, big, 0, false, 0, 1).kernel, name + "_r32_xs");
    EXPECT_EQ(p.bk, 64u);
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 8192, 16, false, big).bk, 64u);  // 64 by default (H100 sweep)
    p = model::plan_rows_cm(kc, t, 2048, 8192, 16, false, big, 0, false, 128);
    EXPECT_EQ(p.kernel, name + "_k128");
    EXPECT_EQ(p.workgroup, 256u);  // 8 subgroups fit at 128 too (43 KiB)
    EXPECT_EQ(p.bk, 128u);
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 16, false, big, 0, false, 128).kernel, name + "_k128");
    EXPECT_EQ(model::plan_rows_cm(kc, t, 8192, 8192, 16, true, big, 0, false, 128).bk,
              64u);  // gated: 64 only
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2048, 33, false, big).kernel,
              "");  // more than two A fragments
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2048, 2080, 16, false, big).kernel, "");  // k % 64
    EXPECT_EQ(model::plan_rows_cm(kc, t, 2047, 2048, 16, true, big).kernel, "");   // f16 pairs: m even
  }
  EXPECT_EQ(model::plan_rows_cm(kc, DType::Q6_K, 64, 320, 4, false, big).kernel, "");  // Q6_K: whole blocks
  EXPECT_EQ(model::plan_rows_cm(kc, DType::F32, 64, 256, 4, false, big).kernel, "");
  EXPECT_EQ(model::rows_cm_shared_bytes(8, false), 8u * 3328 + 256);
  EXPECT_EQ(model::rows_cm_shared_bytes(8, false, 128), 8u * 5376 + 256);
  EXPECT_LE(model::rows_cm_shared_bytes(4, true), big);
}

}  // namespace
}  // namespace bs::testing
