// matvec_{f16,q8_0,q4k,q6k}: y (+)= W x for every weight dtype, at odd sizes (odd row counts, odd
// block counts, rows that leave the last workgroup partly empty), several workgroup shapes, batch > 1,
// a poisoned output, and the accumulate epilogue. Reference: float64 over the dequantized weights.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "runtime/base/half.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecParams;

struct Case {
  uint32_t m, k, batch, accumulate;
};

// Error bound (relative to the sum of |terms|, see DotRef) for f32 accumulation over f32 inputs: the
// biased-mantissa decoding costs a few ulps per partial sum (dequant.glsl), which keeps errors near
// 1e-14; 1e-10 leaves room for long rows. A wrong scale, offset or element misses it by many orders.
constexpr double kMatvecError = 1e-10;

class Matvec : public KernelTest {
 protected:
  // kernel: the matvec under test ("": matvec_<dtype>).
  void check(DType t, Case c, const std::string& kernel = "") {
    Weights w = random_weights(t, c.m, c.k);
    auto x = random_floats(size_t(c.batch) * c.k, -2, 2);
    auto y0 = random_floats(size_t(c.batch) * c.m);
    DotRef ref = dot_ref(w.dq.data(), x.data(), c.accumulate ? y0.data() : nullptr, c.m, c.k, c.batch);
    auto bw = upload(w.bytes), bx = upload(with_nan_tail(x));
    const std::string name = kernel.empty() ? "matvec_" + kernel_suffix(t) : kernel;
    each_matvec_shape(name, c.m, c.k, c.batch, c.accumulate, bw, bx, y0,
                      [&](const std::vector<float>& y, const std::string& where) {
                        EXPECT_LT(scaled_error(y, ref), kMatvecError)
                            << name << " m=" << c.m << " k=" << c.k << " batch=" << c.batch
                            << " acc=" << c.accumulate << " " << where << " seed=" << test_seed();
                      });
  }
};

TEST_F(Matvec, F16) {
  for (Case c : {Case{1, 8, 1, 0}, Case{37, 264, 1, 0}, Case{129, 2048, 2, 0}, Case{300, 136, 3, 1},
                 Case{5, 1000, 1, 1}, Case{3, 4097, 2, 0}})
    check(DType::F16, c);
}

TEST_F(Matvec, Q8_0) {
  for (Case c : {Case{1, 32, 1, 0}, Case{37, 96, 1, 0}, Case{129, 1056, 2, 0}, Case{300, 160, 3, 1},
                 Case{5, 4096, 1, 1}})
    check(DType::Q8_0, c);
}

TEST_F(Matvec, Q4K) {
  for (Case c : {Case{1, 256, 1, 0}, Case{37, 768, 1, 0}, Case{129, 2304, 2, 0}, Case{300, 512, 3, 1},
                 Case{5, 4096, 1, 1}})
    check(DType::Q4_K, c);
}

// Rows padded to whole blocks (DOPPLER's "row" layout: Gemma 3's 640 and 1152, 320, and rows shorter
// than one block): the row stride is whole blocks while x has k values, the padding never counts.
TEST_F(Matvec, Q4KPaddedRows) {
  for (Case c : {Case{37, 640, 1, 0}, Case{129, 1152, 2, 1}, Case{5, 320, 3, 0}, Case{33, 96, 2, 0},
                 Case{7, 200, 1, 1}, Case{3, 4, 1, 0}})
    check(DType::Q4_K, c);
}

TEST_F(Matvec, Q6K) {
  for (Case c : {Case{1, 256, 1, 0}, Case{37, 768, 1, 0}, Case{129, 2304, 2, 0}, Case{300, 512, 3, 1},
                 Case{5, 4096, 1, 1}})
    check(DType::Q6_K, c);
}

// decode's head kernel for Q6_K: parts of 64 weights (MV_Q6K_WIDE), the same sums per quarter.
TEST_F(Matvec, Q6KWide) {
  for (Case c : {Case{1, 256, 1, 0}, Case{37, 768, 1, 0}, Case{129, 2304, 2, 0}, Case{300, 512, 3, 1},
                 Case{5, 4096, 1, 1}, Case{130, 2048, 1, 0}})
    check(DType::Q6_K, c, "matvec_q6k_wide");
}

// The RMSNorm-folded variants (matvec_*_norm): y (+)= W (x * rsqrt(mean(x^2) + eps) * (offset + nw)),
// per batch row, for Llama-style (offset 0) and Gemma-style (offset 1) norm weights, with the workgroup's sums
// in one transposed butterfly (MV_TREDUCE 1, the default) and in a subgroupAdd each (0: the 8B's decode).
TEST_F(Matvec, NormFolded) {
  for (DType t : kWeightTypes)
    for (Case c : {Case{37, 512, 1, 0}, Case{130, 768, 2, 1}, Case{33, t == DType::Q4_K ? 1152u : 512u, 2, 0}})
      for (auto [offset, tr] : {std::pair{0.0f, 1u}, std::pair{1.0f, 1u}, std::pair{0.0f, 0u}}) {
        Weights w = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -3, 3), nw = random_floats(c.k), y0 = random_floats(size_t(c.batch) * c.m);
        const float eps = 1e-5f;
        auto xn = rms_normed(x, nw, c.k, c.batch, eps, offset);
        DotRef ref = dot_ref(w.dq.data(), xn.data(), c.accumulate ? y0.data() : nullptr, c.m, c.k, c.batch);
        auto bw = upload(w.bytes), bx = upload(with_nan_tail(x)), bn = upload(with_nan_tail(nw));
        auto by = c.accumulate ? upload(y0) : poisoned(ref.value.size() * 4);
        const auto& p = kernels().get("matvec_" + kernel_suffix(t) + "_norm", {{0, 64}, {1, 4}, {3, tr}});
        run_once(p, {{0, &bw}, {1, &bx}, {2, &by}, {3, &bn}},
                 kparams::MatvecNormParams{c.m, c.k, c.batch, c.accumulate, eps, offset, 0, 0}, (c.m + 3) / 4, c.batch);
        // xn rounded to f32 above differs from the kernel's f32 path by ~1 ulp per element: 1e-10 holds.
        EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), 1e-10)
            << dtype_name(t) << " m=" << c.m << " k=" << c.k << " offset=" << offset << " treduce=" << tr
            << " seed=" << test_seed();
      }
}

// The gated FFN in one dispatch (matvec_*_gated): h = act(W_gate xn) * (W_up xn), xn the RMSNorm of x as
// above, for silu and gelu_tanh. The bound is first order in the two dot products' errors, each
// relative to its sum of |terms|: |dh| <= eps (max|act'| |u| scale_g + |act(g)| scale_u).
TEST_F(Matvec, GatedFolded) {
  struct GCase {
    uint32_t m, k, batch, rows;
  };
  for (DType t : kWeightTypes)
    for (GCase c : {GCase{37, 512, 1, 4}, GCase{130, 768, 2, 3}, GCase{19, t == DType::Q4_K ? 640u : 512u, 2, 4}})
      for (auto [act, tr] : {std::pair{0u, 1u}, std::pair{1u, 1u}, std::pair{0u, 0u}}) {  // tr: MV_TREDUCE
        const float offset = act == 1 ? 1.0f : 0.0f, eps = 1e-6f;
        Weights wg = random_weights(t, c.m, c.k), wu = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -3, 3), nw = random_floats(c.k);
        auto xn = rms_normed(x, nw, c.k, c.batch, eps, offset);
        DotRef g = dot_ref(wg.dq.data(), xn.data(), nullptr, c.m, c.k, c.batch);
        DotRef u = dot_ref(wu.dq.data(), xn.data(), nullptr, c.m, c.k, c.batch);
        auto bg = upload(wg.bytes), bu = upload(wu.bytes), bx = upload(with_nan_tail(x)), bn = upload(with_nan_tail(nw));
        auto by = poisoned(g.value.size() * 4);
        const auto& p = kernels().get("matvec_" + kernel_suffix(t) + "_gated", {{0, 64}, {1, c.rows}, {3, tr}});
        run_once(p, {{0, &bg}, {1, &bx}, {2, &by}, {3, &bn}, {4, &bu}},
                 kparams::MatvecNormParams{c.m, c.k, c.batch, 0, eps, offset, act, 0}, (c.m + c.rows - 1) / c.rows, c.batch);
        auto h = download<float>(by, g.value.size());
        const double worst = gated_error(h, g, u, act);
        EXPECT_LT(worst, 1e-5) << dtype_name(t) << " m=" << c.m << " k=" << c.k << " act=" << act << " treduce=" << tr
                               << " seed=" << test_seed();
      }
}

// A matrix split over two dispatches by binding offsets (how a table larger than one binding is bound):
// rows [0, 64) and [64, 100), each with its own ranges of W and y, gives the single-dispatch result.
// The decode q/k/v projections with RoPE and the KV append folded in (matvec_*_q/_k/_v): the norm-folded
// product as above, then rows i and i + head_dim/2 of each head rotated by pos * inv_freq[i] (q: f32
// into y; k: f16 into the cache row `pos`), v as is into its cache row. head_dim 20 (pairs that straddle
// workgroups' sub-block boundaries), 3 heads, every weight type; cache rows other than `pos` stay poisoned.
TEST_F(Matvec, RopeAndKvFolded) {
  const uint32_t hd = 20, heads = 3, m = hd * heads, pos = 37;
  const float eps = 1e-5f, offset = 0.0f;
  for (DType t : kWeightTypes) {
    uint32_t k = t == DType::F16 ? 136 : t == DType::Q8_0 ? 160 : t == DType::Q4_K ? 320 : 512;  // Q4_K: padded rows
    Weights w = random_weights(t, m, k);
    auto x = random_floats(k, -3, 3), nw = random_floats(k), inv_freq = random_floats(hd / 2, 0.001f, 1.0f);
    auto xn = rms_normed(x, nw, k, 1, eps, offset);
    DotRef plain = dot_ref(w.dq.data(), xn.data(), nullptr, m, k, 1), rot = plain;
    for (uint32_t h = 0; h < heads; ++h)
      for (uint32_t i = 0; i < hd / 2; ++i) {
        uint32_t a = h * hd + i, b = a + hd / 2;
        double ang = double(float(pos) * inv_freq[i]), c = std::cos(ang), s = std::sin(ang);
        rot.value[a] = plain.value[a] * c - plain.value[b] * s;
        rot.value[b] = plain.value[b] * c + plain.value[a] * s;
        rot.scale[a] = rot.scale[b] = std::hypot(plain.scale[a], plain.scale[b]);
      }
    auto bw = upload(w.bytes), bx = upload(with_nan_tail(x)), bn = upload(with_nan_tail(nw)), bf = upload(inv_freq);
    auto bs = upload(std::vector<uint32_t>{0, pos, 0, 0, 0, 0, 0, 0});
    kparams::MatvecRopeParams params{m, k, 1, 0, eps, offset, hd, 0};
    std::string sfx = kernel_suffix(t);
    // q: rotated, f32.
    auto by = poisoned(m * 4);
    run_once(kernels().get("matvec_" + sfx + "_q", {{0, 64}, {1, 4}}), {{0, &bw}, {1, &bx}, {2, &by}, {3, &bn}, {5, &bf}, {6, &bs}},
             params, m / 4, 1);
    EXPECT_LT(scaled_error(download<float>(by, m), rot), kMatvecError) << dtype_name(t) << " q seed=" << test_seed();
    // k: rotated, f16 at row pos; v: as is, f16 at row pos.
    for (bool is_k : {true, false}) {
      auto cache = poisoned(size_t(pos + 2) * m * 2);
      std::vector<gpu::BindGroupEntry> e = {{0, &bw}, {1, &bx}, {3, &bn}, {6, &bs}, {7, &cache}};
      if (is_k) e.push_back({5, &bf});
      run_once(kernels().get("matvec_" + sfx + (is_k ? "_k" : "_v"), {{0, 64}, {1, 4}}), e, params, m / 4, 1);
      auto all = download<uint16_t>(cache, size_t(pos + 2) * m);
      std::vector<float> row(m);
      for (uint32_t r = 0; r < m; ++r) row[r] = half_to_float(all[size_t(pos) * m + r]);
      // f16 rounding: a relative 2^-11 per value, so 1e-6 on the squared scaled error.
      EXPECT_LT(scaled_error(row, is_k ? rot : plain), 1e-6) << dtype_name(t) << (is_k ? " k" : " v") << " seed=" << test_seed();
      size_t touched = 0;
      for (size_t i = 0; i < all.size(); ++i) touched += (i / m != pos) && all[i] != 0xffff;
      EXPECT_EQ(touched, 0u) << "cache rows other than pos were written";
    }
  }
}

// matvec_f16.comp's MV_W_FIRST (spec constant 6): a step's weights loaded before its x (1; 2: the first step's,
// peeled) or after (0). The same products in the same order, so the same bits, for the plain, norm-folded and gated
// forms, at sizes whose last step leaves lanes past the row, with the float64 bound on top.
TEST_F(Matvec, F16WeightLoadOrderKeepsTheBits) {
  struct OCase {
    uint32_t m, k, wg, rows;
  };
  for (OCase c : {OCase{37, 264, 64, 2}, OCase{9, 2050, 64, 2}})  // one pipeline each form and order: lavapipe compiles slowly
    for (const char* form : {"", "_norm", "_gated"}) {
      const std::string kernel = std::string("matvec_f16") + form;
      const std::string_view form_name = form;
      const bool gated = form_name == "_gated", normed = !form_name.empty();
      Weights w = random_weights(DType::F16, c.m, c.k), wu = random_weights(DType::F16, c.m, c.k);
      auto x = random_floats(c.k, -3, 3), nw = random_floats(c.k);
      const float eps = 1e-5f;
      auto xn = normed ? rms_normed(x, nw, c.k, 1, eps, 0.0f) : x;
      DotRef ref = dot_ref(w.dq.data(), xn.data(), nullptr, c.m, c.k, 1);
      DotRef ref_u = dot_ref(wu.dq.data(), xn.data(), nullptr, c.m, c.k, 1);
      auto bw = upload(w.bytes), bu = upload(wu.bytes), bx = upload(with_nan_tail(x)), bn = upload(with_nan_tail(nw));
      std::vector<std::vector<float>> ys;
      for (uint32_t first : {0u, 1u, 2u}) {
        auto by = poisoned(c.m * 4);
        const auto& p = kernels().get(kernel, {{0, c.wg}, {1, c.rows}, {6, first}});
        std::vector<gpu::BindGroupEntry> e = {{0, &bw}, {1, &bx}, {2, &by}};
        if (normed) e.push_back({3, &bn});
        if (gated) e.push_back({4, &bu});
        const uint32_t groups = (c.m + c.rows - 1) / c.rows;
        if (normed) run_once(p, e, kparams::MatvecNormParams{c.m, c.k, 1, 0, eps, 0.0f, 0, 0}, groups, 1);
        else run_once(p, e, MatvecParams{c.m, c.k, 1, 0}, groups, 1);
        ys.push_back(download<float>(by, c.m));
        const std::string where = kernel + " m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) +
                                  " w_first=" + std::to_string(first) + " seed=" + std::to_string(test_seed());
        if (gated) EXPECT_LT(gated_error(ys.back(), ref, ref_u, 0), 1e-5) << where;
        else EXPECT_LT(scaled_error(ys.back(), ref), 1e-10) << where;
      }
      for (size_t order = 1; order < ys.size(); ++order)
        for (uint32_t i = 0; i < c.m; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(ys[0][i]), std::bit_cast<uint32_t>(ys[order][i]))
              << kernel << " row " << i << " m=" << c.m << " k=" << c.k << " w_first=" << order << " seed=" << test_seed();
    }
}

TEST_F(Matvec, RowRangesThroughBindingOffsets) {
  const uint32_t m = 100, k = 512, split = 64;  // 64 rows of every dtype is a multiple of 256 bytes
  for (DType t : kWeightTypes) {
    Weights w = random_weights(t, m, k);
    auto x = random_floats(k);
    DotRef ref = dot_ref(w.dq.data(), x.data(), nullptr, m, k, 1);
    uint64_t rb = gpu_row_bytes(t, k);
    auto bw = upload(w.bytes), bx = upload(x);
    auto by = poisoned(m * 4);
    const auto& p = kernels().get("matvec_" + kernel_suffix(t), {{0, 64}, {1, 4}});
    run_once(p, {{0, &bw, 0, split * rb}, {1, &bx}, {2, &by, 0, split * 4}}, MatvecParams{split, k, 1, 0},
             split / 4, 1);
    run_once(p, {{0, &bw, split * rb, (m - split) * rb}, {1, &bx}, {2, &by, split * 4, (m - split) * 4}},
             MatvecParams{m - split, k, 1, 0}, (m - split + 3) / 4, 1);
    EXPECT_LT(scaled_error(download<float>(by, m), ref), kMatvecError) << dtype_name(t) << " seed=" << test_seed();
  }
}

}  // namespace
}  // namespace bs::testing
