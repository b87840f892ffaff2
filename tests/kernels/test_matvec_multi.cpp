// matvec_{f16,q8_0,q4k,q6k}_multi (matvec_multi.glsl, serve's batched decode): Y[b] (+)= W X[b] with W decoded
// once for NB batch rows, plain, with the RMSNorm folded (_multi_norm) and as the gated FFN (_multi_gated).
// Odd sizes throughout: row counts that leave the last workgroup partly empty, batches that leave the last
// chunk of NB partly empty (and batches of several chunks), Q4_K rows padded to whole blocks, several
// workgroup shapes; poisoned outputs, x followed by NaNs. Reference: float64 over the dequantized weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecNormParams;
using kparams::MatvecParams;

struct Case {
  uint32_t m, k, batch;
};
// Workgroup size, weight rows and batch rows per workgroup (spec constants 0, 1, 2).
struct Shape {
  uint32_t wg, rows, nb;
};
// {64, 2, 16}: the host's default for the gated FFN (and ROWS 4 for the rest) on a GPU; {128, 1, 2}: more
// invocations than parts on most rows (the reduction array sized by the specialized workgroup); all within
// 32 KiB of shared memory (lavapipe's limit) for the reduction.
constexpr Shape kShapes[] = {{8, 1, 1}, {32, 3, 4}, {32, 4, 16}, {64, 2, 16}, {16, 2, 8}, {128, 1, 2}};

// As in test_matvec.cpp: per-weight decoding is exact up to one rounding, accumulation in f32.
constexpr double kError = 1e-10;

// Cases per dtype: k a multiple of the dtype's block (F16: of 8), Q4_K also padded rows (640, 200, 96).
std::vector<Case> cases(DType t) {
  switch (t) {
    case DType::F16: return {{37, 264, 5}, {130, 2048, 3}, {3, 8, 19}};
    case DType::Q8_0: return {{37, 96, 5}, {129, 1056, 3}, {5, 32, 19}};
    case DType::Q4_K: return {{37, 768, 5}, {129, 640, 3}, {5, 200, 19}, {33, 96, 2}};
    default: return {{37, 512, 5}, {129, 256, 3}, {5, 768, 19}};
  }
}

class MatvecMulti : public KernelTest {
 protected:
  const gpu::ComputePipeline& pipeline(DType t, const char* variant, Shape s) {
    return kernels().get("matvec_" + kernel_suffix(t) + "_multi" + variant, {{0, s.wg}, {1, s.rows}, {2, s.nb}});
  }
  static uint32_t groups(uint32_t n, uint32_t per) { return (n + per - 1) / per; }
};

TEST_F(MatvecMulti, Plain) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t))
      for (uint32_t accumulate : {0u, 1u}) {
        Weights w = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -2, 2), y0 = random_floats(size_t(c.batch) * c.m);
        DotRef ref = dot_ref(w.dq.data(), x.data(), accumulate ? y0.data() : nullptr, c.m, c.k, c.batch);
        auto bw = upload(w.bytes), bx = upload(with_nan_tail(x));
        for (Shape s : kShapes) {
          auto by = accumulate ? upload(y0) : poisoned(ref.value.size() * 4);
          run_once(pipeline(t, "", s), {{0, &bw}, {1, &bx}, {2, &by}}, MatvecParams{c.m, c.k, c.batch, accumulate},
                   groups(c.m, s.rows), groups(c.batch, s.nb));
          EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), kError)
              << dtype_name(t) << " m=" << c.m << " k=" << c.k << " batch=" << c.batch << " acc=" << accumulate
              << " wg=" << s.wg << " rows=" << s.rows << " nb=" << s.nb << " seed=" << test_seed();
        }
      }
}

// y (+)= W (x * rsqrt(mean(x^2) + eps) * (offset + nw)) per batch row, Llama-style (offset 0) and Gemma-style (1).
TEST_F(MatvecMulti, NormFolded) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t))
      for (float offset : {0.0f, 1.0f}) {
        const uint32_t accumulate = offset == 1.0f;
        const float eps = 1e-5f;
        Weights w = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -3, 3), nw = random_floats(c.k), y0 = random_floats(size_t(c.batch) * c.m);
        auto xn = rms_normed(x, nw, c.k, c.batch, eps, offset);
        DotRef ref = dot_ref(w.dq.data(), xn.data(), accumulate ? y0.data() : nullptr, c.m, c.k, c.batch);
        auto bw = upload(w.bytes), bx = upload(with_nan_tail(x)), bn = upload(with_nan_tail(nw));
        for (Shape s : kShapes) {
          auto by = accumulate ? upload(y0) : poisoned(ref.value.size() * 4);
          run_once(pipeline(t, "_norm", s), {{0, &bw}, {1, &bx}, {2, &by}, {3, &bn}},
                   MatvecNormParams{c.m, c.k, c.batch, accumulate, eps, offset, 0, 0}, groups(c.m, s.rows),
                   groups(c.batch, s.nb));
          // xn rounded to f32 above differs from the kernel's f32 path by ~1 ulp per element.
          EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), kError)
              << dtype_name(t) << " m=" << c.m << " k=" << c.k << " batch=" << c.batch << " offset=" << offset
              << " wg=" << s.wg << " rows=" << s.rows << " nb=" << s.nb << " seed=" << test_seed();
        }
      }
}

// h = act(W_gate xn) * (W_up xn), silu and gelu_tanh; the bound as in test_matvec.cpp's GatedFolded: first
// order in the two dot products' errors, each relative to its sum of |terms|.
TEST_F(MatvecMulti, GatedFolded) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t))
      for (uint32_t act : {0u, 1u}) {
        const float offset = act == 1 ? 1.0f : 0.0f, eps = 1e-6f;
        Weights wg = random_weights(t, c.m, c.k), wu = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -3, 3), nw = random_floats(c.k);
        auto xn = rms_normed(x, nw, c.k, c.batch, eps, offset);
        DotRef g = dot_ref(wg.dq.data(), xn.data(), nullptr, c.m, c.k, c.batch);
        DotRef u = dot_ref(wu.dq.data(), xn.data(), nullptr, c.m, c.k, c.batch);
        auto bg = upload(wg.bytes), bu = upload(wu.bytes), bx = upload(with_nan_tail(x)), bn = upload(with_nan_tail(nw));
        for (Shape s : kShapes) {
          auto by = poisoned(g.value.size() * 4);
          run_once(pipeline(t, "_gated", s), {{0, &bg}, {1, &bx}, {2, &by}, {3, &bn}, {4, &bu}},
                   MatvecNormParams{c.m, c.k, c.batch, 0, eps, offset, act, 0}, groups(c.m, s.rows), groups(c.batch, s.nb));
          auto h = download<float>(by, g.value.size());
          const double worst = gated_error(h, g, u, act);
          EXPECT_LT(worst, 1e-5) << dtype_name(t) << " m=" << c.m << " k=" << c.k << " batch=" << c.batch << " act=" << act
                                 << " wg=" << s.wg << " rows=" << s.rows << " nb=" << s.nb << " seed=" << test_seed();
        }
      }
}

// The gated FFN on x normalized beforehand (matvec_*_multi_gated_xn), silu and gelu_tanh.
TEST_F(MatvecMulti, GatedOnNormalizedX) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t))
      for (uint32_t act : {0u, 1u}) {
        Weights wg = random_weights(t, c.m, c.k), wu = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -1, 1);
        DotRef g = dot_ref(wg.dq.data(), x.data(), nullptr, c.m, c.k, c.batch);
        DotRef u = dot_ref(wu.dq.data(), x.data(), nullptr, c.m, c.k, c.batch);
        auto bg = upload(wg.bytes), bu = upload(wu.bytes), bx = upload(with_nan_tail(x));
        for (Shape s : kShapes) {
          auto by = poisoned(g.value.size() * 4);
          run_once(pipeline(t, "_gated_xn", s), {{0, &bg}, {1, &bx}, {2, &by}, {4, &bu}},
                   MatvecNormParams{c.m, c.k, c.batch, 0, 0.0f, 0.0f, act, 0}, groups(c.m, s.rows), groups(c.batch, s.nb));
          EXPECT_LT(gated_error(download<float>(by, g.value.size()), g, u, act), 1e-5)
              << dtype_name(t) << " m=" << c.m << " k=" << c.k << " batch=" << c.batch << " act=" << act << " wg=" << s.wg
              << " rows=" << s.rows << " nb=" << s.nb << " seed=" << test_seed();
        }
      }
}

// The variant with invocations across rows of W (matvec_lanes.glsl, *_multi_lanes[_gated]): slices of LR
// lanes split k, lane l owns rows l + LR t. Shapes (workgroup, ROWS, NB, LR): one slice, several, a batch
// chunk of 5, LR = 32 at 64 invocations (the GPU default's slice), rows past m in the last workgroup.
struct LanesShape {
  uint32_t wg, rows, nb, lr;
};
constexpr LanesShape kLanesShapes[] = {{8, 1, 1, 8}, {32, 2, 4, 8}, {16, 1, 16, 16}, {64, 2, 8, 32}, {24, 3, 5, 8}};

class MatvecLanes : public MatvecMulti {
 protected:
  const gpu::ComputePipeline& lanes(DType t, bool gated, LanesShape s) {
    return kernels().get("matvec_" + kernel_suffix(t) + "_multi_lanes" + (gated ? "_gated" : ""),
                         {{0, s.wg}, {1, s.rows}, {2, s.nb}, {3, s.lr}});
  }
};

TEST_F(MatvecLanes, Plain) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t))
      for (uint32_t accumulate : {0u, 1u}) {
        Weights w = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -2, 2), y0 = random_floats(size_t(c.batch) * c.m);
        DotRef ref = dot_ref(w.dq.data(), x.data(), accumulate ? y0.data() : nullptr, c.m, c.k, c.batch);
        auto bw = upload(w.bytes), bx = upload(with_nan_tail(x));
        for (LanesShape s : kLanesShapes) {
          auto by = accumulate ? upload(y0) : poisoned(ref.value.size() * 4);
          run_once(lanes(t, false, s), {{0, &bw}, {1, &bx}, {2, &by}}, MatvecParams{c.m, c.k, c.batch, accumulate},
                   groups(c.m, s.lr * s.rows), groups(c.batch, s.nb));
          EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), kError)
              << dtype_name(t) << " m=" << c.m << " k=" << c.k << " batch=" << c.batch << " acc=" << accumulate
              << " wg=" << s.wg << " rows=" << s.rows << " nb=" << s.nb << " lr=" << s.lr << " seed=" << test_seed();
        }
      }
}

// h = act(W_gate x) * (W_up x) (x normalized by the host beforehand), silu and gelu_tanh.
TEST_F(MatvecLanes, Gated) {
  for (DType t : kWeightTypes)
    for (Case c : cases(t))
      for (uint32_t act : {0u, 1u}) {
        Weights wg = random_weights(t, c.m, c.k), wu = random_weights(t, c.m, c.k);
        auto x = random_floats(size_t(c.batch) * c.k, -1, 1);
        DotRef g = dot_ref(wg.dq.data(), x.data(), nullptr, c.m, c.k, c.batch);
        DotRef u = dot_ref(wu.dq.data(), x.data(), nullptr, c.m, c.k, c.batch);
        auto bg = upload(wg.bytes), bu = upload(wu.bytes), bx = upload(with_nan_tail(x));
        for (LanesShape s : kLanesShapes) {
          auto by = poisoned(g.value.size() * 4);
          run_once(lanes(t, true, s), {{0, &bg}, {1, &bx}, {2, &by}, {4, &bu}},
                   MatvecNormParams{c.m, c.k, c.batch, 0, 0.0f, 0.0f, act, 0}, groups(c.m, s.lr * s.rows),
                   groups(c.batch, s.nb));
          auto h = download<float>(by, g.value.size());
          const double worst = gated_error(h, g, u, act);
          EXPECT_LT(worst, 1e-5) << dtype_name(t) << " m=" << c.m << " k=" << c.k << " batch=" << c.batch << " act=" << act
                                 << " wg=" << s.wg << " rows=" << s.rows << " nb=" << s.nb << " lr=" << s.lr
                                 << " seed=" << test_seed();
        }
      }
}

}  // namespace
}  // namespace bs::testing
