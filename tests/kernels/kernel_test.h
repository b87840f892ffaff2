// Helpers for the weight-kernel tests: random weights quantized with the project's quantizer (rdrr),
// their dequantized values (what a float64 reference multiplies by, so the tests measure the kernel and
// not quantization error), and a one-dispatch runner.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rdrr/quant.h"
#include "tests/gpu/gpu_test.h"

namespace bs::testing {

// A weight matrix [m, k] in dtype t, as the kernels read it.
struct Weights {
  DType t;
  uint32_t m, k;
  std::vector<uint8_t> bytes;  // m rows of gpu_row_bytes(t, k) (Q6_K blocks padded), then zeros to a multiple of 16
  std::vector<float> dq;       // the dequantized values [m, k]
};

// x for a weight kernel, with `tail` NaNs after it in the buffer: a kernel that reads past the last
// row's k values (a padded row's padding, say) turns its output into NaN.
inline std::vector<float> with_nan_tail(std::vector<float> x, size_t tail = 256) {
  x.insert(x.end(), tail, std::nanf(""));
  return x;
}

// RMSNorm of each of `batch` rows of x (k values), in double, times (offset + nw), rounded to f32 for
// dot_ref: the input the norm-folded kernels multiply by.
inline std::vector<float> rms_normed(const std::vector<float>& x, const std::vector<float>& nw, uint32_t k,
                                     uint32_t batch, float eps, float offset) {
  std::vector<float> xn(x.size());
  for (uint32_t b = 0; b < batch; ++b) {
    double ss = 0;
    for (uint32_t i = 0; i < k; ++i) ss += double(x[size_t(b) * k + i]) * x[size_t(b) * k + i];
    double sc = 1.0 / std::sqrt(ss / k + eps);
    for (uint32_t i = 0; i < k; ++i) xn[size_t(b) * k + i] = float(x[size_t(b) * k + i] * sc * (offset + nw[i]));
  }
  return xn;
}

// Worst error of h = act(g) * u (act 0: silu, 1: gelu_tanh) against float64 g and u, relative to the
// first-order bound of the two dot products' errors (each relative to its sum of |terms|):
// |dh| <= eps (max|act'| |u| scale_g + |act(g)| scale_u), plus out_rel |act(g) u| where the output is
// rounded (1 for f16: u of it). A NaN in h counts as 1.
inline double gated_error(const std::vector<float>& h, const DotRef& g, const DotRef& u, uint32_t act,
                          double out_rel = 0) {
  double worst = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    const double a = g.value[i];
    const double act_a =
        act == 0 ? a / (1 + std::exp(-a)) : 0.5 * a * (1 + std::tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
    const double da = act == 0 ? 1.1 : 1.2;  // bounds on |act'|
    const double ref = act_a * u.value[i];
    const double bound = da * std::abs(u.value[i]) * g.scale[i] + std::abs(act_a) * u.scale[i] + out_rel * std::abs(ref);
    worst = std::max(worst, std::isnan(h[i]) ? 1.0 : std::abs(h[i] - ref) / bound);
  }
  return worst;
}

// Random rows whose magnitude varies per 32 values (so block scales differ) and with some blocks all
// positive or all negative (so Q4_K's min and Q6_K's sign handling are exercised). A k that is not a
// whole number of blocks gives rows padded to whole blocks (DOPPLER's "row" layout), the padding
// quantized from random values too, so a kernel that multiplies it by anything shows it.
inline Weights random_weights(DType t, uint32_t m, uint32_t k) {
  Weights w{t, m, k, {}, {}};
  const uint32_t kp = uint32_t(padded_blocks(t, k) * traits(t).block_elems);
  auto f = random_floats(size_t(m) * kp);
  std::uniform_real_distribution<float> mag(0.05f, 2.0f);
  std::uniform_int_distribution<int> kind(0, 5);
  for (size_t c = 0; c < f.size(); c += 32) {
    float s = mag(rng());
    int kd = kind(rng());
    for (size_t i = c; i < std::min(f.size(), c + 32); ++i)
      f[i] = s * (kd == 0 ? std::abs(f[i]) + 0.5f : kd == 1 ? -std::abs(f[i]) : f[i]);
  }
  const uint64_t rb = padded_row_bytes(t, k), gb = gpu_row_bytes(t, k);
  w.bytes.assign((m * gb + 15) / 16 * 16, 0);
  w.dq.resize(size_t(m) * k);
  std::vector<float> row(kp);
  std::vector<uint8_t> q(rb);
  for (uint32_t r = 0; r < m; ++r) {
    quantize_row(t, f.data() + size_t(r) * kp, q.data(), kp);
    dequantize_row(t, q.data(), row.data(), kp);
    std::copy(row.begin(), row.begin() + k, w.dq.begin() + size_t(r) * k);
    if (gb == rb) std::copy(q.begin(), q.end(), w.bytes.begin() + r * gb);
    else q6k_pad_blocks(reinterpret_cast<const std::byte*>(q.data()), rb, reinterpret_cast<std::byte*>(w.bytes.data() + r * gb));
  }
  return w;
}

// The argmax key (kernels_glsl/argmax.glsl's argmax_key) of a finite value v at id i: the value's bits ordered as an
// unsigned integer (negatives inverted, the sign bit set on the rest; -0 as +0) above the inverted id.
inline uint64_t argmax_key_of(float v, uint32_t i) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  if ((b & 0x7fffffffu) == 0) b = 0;
  const uint32_t hi = (b & 0x80000000u) ? ~b : b | 0x80000000u;
  return uint64_t(hi) << 32 | uint32_t(~i);
}

// Kernel-name suffix of a weight dtype, as in variants.cmake.
inline std::string kernel_suffix(DType t) {
  switch (t) {
    case DType::F16:
      return "f16";
    case DType::Q8_0:
      return "q8_0";
    case DType::Q4_K:
      return "q4k";
    case DType::Q6_K:
      return "q6k";
    default:
      return "unsupported";
  }
}

inline const DType kWeightTypes[] = {DType::F16, DType::Q8_0, DType::Q4_K, DType::Q6_K};

class KernelTest : public GpuTest {
 protected:
  // The decode matvec kernels (matvec.glsl; spec constants 0 workgroup size, 1 rows, 2 BATCH_FIRST) at every
  // tested workgroup shape and in both grid layouts (BATCH_FIRST: (batch, row groups), serve's batched decode;
  // a batch of 1 takes only the other): y starts poisoned, or as y0 when accumulating, and check(y, where)
  // judges each result (where names the shape).
  template <class Check>
  void each_matvec_shape(const std::string& kernel, uint32_t m, uint32_t k, uint32_t batch, uint32_t accumulate,
                         gpu::Buffer& bw, gpu::Buffer& bx, const std::vector<float>& y0, Check check) {
    struct Shape {
      uint32_t wg, rows;
    };
    for (Shape s : {Shape{32, 1}, Shape{64, 3}, Shape{128, 4}, Shape{256, 8}})
      for (uint32_t batch_first : {0u, 1u}) {
        if (batch_first && batch == 1) continue;
        auto by = accumulate ? upload(y0) : poisoned(size_t(batch) * m * 4);
        const auto& p = kernels().get(kernel, {{0, s.wg}, {1, s.rows}, {2, batch_first}});
        const uint32_t groups = (m + s.rows - 1) / s.rows;
        run_once(p, {{0, &bw}, {1, &bx}, {2, &by}}, kparams::MatvecParams{m, k, batch, accumulate},
                 batch_first ? batch : groups, batch_first ? groups : batch);
        check(download<float>(by, size_t(batch) * m), "wg=" + std::to_string(s.wg) + " rows=" +
                                                           std::to_string(s.rows) +
                                                           " batch_first=" + std::to_string(batch_first));
      }
  }
};

}  // namespace bs::testing
