// Helpers for the weight-kernel tests: random weights quantized with the project's quantizer (rdrr),
// their dequantized values (what a float64 reference multiplies by, so the tests measure the kernel and
// not quantization error), and a one-dispatch runner.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
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
  std::vector<uint8_t> bytes;  // m rows of padded_row_bytes(t, k), padded with zeros to a multiple of 16
  std::vector<float> dq;       // the dequantized values [m, k]
};

// x for a weight kernel, with `tail` NaNs after it in the buffer: a kernel that reads past the last
// row's k values (a padded row's padding, say) turns its output into NaN.
inline std::vector<float> with_nan_tail(std::vector<float> x, size_t tail = 256) {
  x.insert(x.end(), tail, std::nanf(""));
  return x;
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
  uint64_t rb = padded_row_bytes(t, k);
  w.bytes.assign((m * rb + 15) / 16 * 16, 0);
  w.dq.resize(size_t(m) * k);
  std::vector<float> row(kp);
  for (uint32_t r = 0; r < m; ++r) {
    quantize_row(t, f.data() + size_t(r) * kp, w.bytes.data() + r * rb, kp);
    dequantize_row(t, w.bytes.data() + r * rb, row.data(), kp);
    std::copy(row.begin(), row.begin() + k, w.dq.begin() + size_t(r) * k);
  }
  return w;
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

using KernelTest = GpuTest;

}  // namespace bs::testing
