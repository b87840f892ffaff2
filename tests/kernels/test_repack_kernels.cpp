// The load-time repack kernels (kernels_glsl/repack_*.comp, runtime/model/gpu_repack.h) against a
// float64 reference and against the host repack (runtime/model/repack.h) bit for bit: fresh random
// inputs, odd sizes (group counts, rows and columns), scales f16 cannot hold, poisoned outputs, and the
// chunked dispatches a small binding limit forces.
//   repack_w4a16_q8_0: exact for every input (integer arithmetic only).
//   repack_q4k_col_f16: exact wherever a block's d and dmin are finite (the inputs here).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "runtime/gpu/uploader.h"
#include "runtime/model/gpu_repack.h"
#include "runtime/model/repack.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::RepackQ4kColParams;
using kparams::RepackW4a16Params;

std::vector<uint8_t> random_bytes(size_t n) {
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng()() & 0xff);
  return b;
}

template <class T>
std::span<const std::byte> as_bytes(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

// Bytes padded with zeros to whole 16-byte units, as the loader's buffers are.
template <class T>
std::vector<uint8_t> padded16(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  b.resize((b.size() + 15) / 16 * 16, 0);
  return b;
}

std::pair<uint32_t, uint32_t> grid(uint64_t invocations) {
  uint64_t groups = (invocations + 255) / 256, x = std::min<uint64_t>(std::max<uint64_t>(groups, 1), 65535);
  return {uint32_t(x), uint32_t((groups + x - 1) / x)};
}

// n scales of dtype t (2 or 4 bytes each): magnitudes over f16's normal range, and, at fixed places,
// values f16 cannot hold (below its subnormals, inside them, past 65504), zeros, inf and NaN.
std::vector<uint8_t> random_scales(DType t, size_t n) {
  std::uniform_real_distribution<double> e(-13.5, 3);
  std::vector<float> f(n);
  for (auto& s : f) s = float((rng()() & 1 ? -1 : 1) * std::exp2(e(rng())) * 1.37);
  const float special[] = {3e-7f, 1e-9f, -7.1e-6f, 70000.0f, -1e30f, 0.0f, -0.0f, INFINITY, NAN};
  for (size_t i = 0; i < std::size(special) && 3 * i < n; ++i) f[3 * i] = special[i];
  std::vector<uint8_t> out(n * (t == DType::F32 ? 4 : 2));
  for (size_t i = 0; i < n; ++i) {
    if (t == DType::F32) {
      std::memcpy(out.data() + 4 * i, &f[i], 4);
    } else {
      uint16_t h = t == DType::BF16 ? float_to_bf16(f[i]) : float_to_half(f[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

double scale_value(const std::vector<uint8_t>& s, DType t, size_t g) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, s.data() + 4 * g, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, s.data() + 2 * g, 2);
  return t == DType::BF16 ? bf16_to_float(h) : half_to_float(h);
}

class RepackKernels : public KernelTest {};

TEST_F(RepackKernels, W4A16ToQ8_0MatchesHostBitForBit) {
  for (DType st : {DType::BF16, DType::F16, DType::F32})
    for (auto [rows, k] : {std::pair<int64_t, int64_t>{7, 96}, {33, 32}, {5, 640}, {1, 32}, {301, 224}}) {
      const size_t groups = size_t(rows * k / 32);
      auto packed = random_bytes(groups * 16);
      auto scales = random_scales(st, groups);
      auto want = model::w4a16_to_q8_0(as_bytes(packed), as_bytes(scales), st, rows, k);
      ASSERT_EQ(want.size(), groups * 34);

      auto bp = upload(padded16(packed)), bs = upload(padded16(scales));
      const size_t words = (34 * groups + 3) / 4, out_bytes = words * 4 + 64;  // 64 poisoned bytes past the end
      auto out = poisoned(out_bytes);
      auto [gx, gy] = grid((groups + 1) / 2);
      run_once(kernels().get("repack_w4a16_q8_0"), {{0, &bp}, {1, &bs}, {2, &out}},
               RepackW4a16Params{uint32_t(groups), st == DType::F16 ? 0u : st == DType::BF16 ? 1u : 2u, 0, 0}, gx, gy);
      auto got = download<uint8_t>(out, out_bytes);
      const std::string where = fmt::format("{} scales, [{}, {}], seed={}", dtype_name(st), rows, k, test_seed());
      ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << where;
      for (size_t i = want.size(); i < words * 4; ++i) ASSERT_EQ(got[i], 0) << "the word past the blocks, " << where;
      for (size_t i = words * 4; i < out_bytes; ++i) ASSERT_EQ(got[i], 0xff) << "written past its words, " << where;

      // Float64: every weight (nibble - 8) * scale, wherever the scale is an f16 as it is.
      std::vector<float> deq(32);
      for (size_t g = 0; g < groups; ++g) {
        double s = scale_value(scales, st, g);
        if (!std::isfinite(s) || double(round_half(float(s))) != s) continue;
        dequantize_row(DType::Q8_0, got.data() + 34 * g, deq.data(), 32);
        for (int i = 0; i < 32; ++i) {
          double q = double(int((packed[16 * g + size_t(i) / 2] >> (4 * (i & 1))) & 15) - 8);
          ASSERT_EQ(double(deq[size_t(i)]), q * s) << "group " << g << " weight " << i << ", " << where;
        }
      }
    }
}

// The kernels' f32 -> f16 rounding (f16_bits.glsl) is half.h's for any bit pattern: F32 scales of
// every kind -- random bits, exponents around f16's range, exact ties in the normal and subnormal
// ranges, NaNs with payloads.
TEST_F(RepackKernels, W4A16F32ScalesOfAnyBitPattern) {
  const size_t groups = 20001;
  std::vector<uint32_t> bits(groups);
  std::uniform_int_distribution<uint32_t> exp_near(95, 145);
  for (size_t i = 0; i < groups; ++i) {
    uint32_t r = uint32_t(rng()());
    switch (i % 5) {
      case 0: bits[i] = r; break;                                                         // anything
      case 1: bits[i] = (r & 0x807fffffu) | (exp_near(rng()) << 23); break;                // near f16's range
      case 2: bits[i] = (r & 0x807fe000u) | 0x1000u | (exp_near(rng()) << 23); break;      // ties (normal)
      case 3: {  // ties in f16's subnormal range: the bits below the kept ones are exactly one half
        uint32_t e = 103 + r % 10, shift = 126 - e, mant = (r >> 4) & 0x7fffffu;
        bits[i] = (r & 0x80000000u) | (e << 23) | (mant & ~((1u << shift) - 1)) | (1u << (shift - 1));
        break;
      }
      default: bits[i] = (r & 0x80000000u) | 0x7f800000u | (r & 0x7fffffu); break;          // inf and NaNs
    }
  }
  auto packed = random_bytes(groups * 16);
  auto want = model::w4a16_to_q8_0(as_bytes(packed), as_bytes(bits), DType::F32, int64_t(groups), 32);
  auto bp = upload(padded16(packed)), bs = upload(padded16(bits));
  const size_t words = (34 * groups + 3) / 4;
  auto out = poisoned(words * 4);
  auto [gx, gy] = grid((groups + 1) / 2);
  run_once(kernels().get("repack_w4a16_q8_0"), {{0, &bp}, {1, &bs}, {2, &out}}, RepackW4a16Params{uint32_t(groups), 2, 0, 0}, gx, gy);
  auto got = download<uint8_t>(out, want.size());
  for (size_t g = 0; g < groups; ++g) {
    uint16_t a, b;
    std::memcpy(&a, got.data() + 34 * g, 2);
    std::memcpy(&b, want.data() + 34 * g, 2);
    ASSERT_EQ(a, b) << fmt::format("scale bits {:#010x}: GPU f16 {:#06x}, host {:#06x}", bits[g], a, b);
  }
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0);
}

// k stored rows (columns of W [m, k]) of m values padded to whole blocks: half of them quantized from
// random values, half random bytes with finite d and dmin (any 6-bit scales and mins, any nibbles).
std::vector<uint8_t> random_q4k_cols(int64_t m, int64_t k) {
  const int64_t mp = int64_t(padded_blocks(DType::Q4_K, uint64_t(m))) * 256;
  const uint64_t rb = padded_row_bytes(DType::Q4_K, uint64_t(m));
  std::vector<uint8_t> stored(size_t(k) * rb);
  for (int64_t c = 0; c < k; ++c) {
    uint8_t* row = stored.data() + c * rb;
    if (c % 2) {
      auto f = random_floats(size_t(mp), -2, 2);
      quantize_row(DType::Q4_K, f.data(), row, mp);
      continue;
    }
    auto b = random_bytes(rb);
    std::memcpy(row, b.data(), rb);
    for (uint64_t blk = 0; blk < rb; blk += 144)
      for (int h = 0; h < 2; ++h) {
        uint16_t v;
        std::memcpy(&v, row + blk + 2 * h, 2);
        if ((v & 0x7c00) == 0x7c00) v &= 0xbfff;  // inf/NaN -> finite
        std::memcpy(row + blk + 2 * h, &v, 2);
      }
  }
  return stored;
}

// Float64 dequantization of element r of stored row c (GGML's Q4_K: d * sc * q - dmin * m).
double q4k_ref(const std::vector<uint8_t>& stored, int64_t m, int64_t c, int64_t r) {
  const uint8_t* b = stored.data() + c * padded_row_bytes(DType::Q4_K, uint64_t(m)) + (r / 256) * 144;
  uint16_t d, dmin;
  std::memcpy(&d, b, 2);
  std::memcpy(&dmin, b + 2, 2);
  int el = int(r % 256), j = el / 32, l = el % 32;
  const uint8_t* s = b + 4;
  int sc = j < 4 ? s[j] & 63 : (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
  int mn = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  int q = (b[16 + 32 * (j / 2) + l] >> (4 * (j % 2))) & 15;
  return double(half_to_float(d)) * sc * q - double(half_to_float(dmin)) * mn;
}

TEST_F(RepackKernels, Q4KColToF16MatchesHostBitForBit) {
  for (auto [m, k] : {std::pair<int64_t, int64_t>{300, 70}, {256, 3}, {1, 1}, {513, 129}, {37, 256}}) {
    auto stored = random_q4k_cols(m, k);
    auto want = model::q4k_col_to_f16(as_bytes(stored), m, k);
    ASSERT_EQ(want.size(), size_t(m * k * 2));

    auto in = upload(padded16(stored));
    const size_t words = size_t(m * k + 1) / 2, out_bytes = words * 4 + 64;
    auto out = poisoned(out_bytes);
    auto [gx, gy] = grid(words);
    run_once(kernels().get("repack_q4k_col_f16"), {{0, &in}, {1, &out}},
             RepackQ4kColParams{uint32_t(m), uint32_t(k), uint32_t(padded_blocks(DType::Q4_K, uint64_t(m))), 0}, gx, gy);
    auto got = download<uint8_t>(out, out_bytes);
    const std::string where = fmt::format("[{}, {}], seed={}", m, k, test_seed());
    ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0) << where;
    for (size_t i = want.size(); i < words * 4; ++i) ASSERT_EQ(got[i], 0) << "the half word past W, " << where;
    for (size_t i = words * 4; i < out_bytes; ++i) ASSERT_EQ(got[i], 0xff) << "written past its words, " << where;

    // Float64: W[r, c] is element r of stored row c, rounded once to f16 (relative 2^-11, or half an
    // f16 subnormal step, absolute) -- the f32 step in between is exact up to its own one rounding.
    const auto* h = reinterpret_cast<const uint16_t*>(got.data());
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < k; ++c) {
        double ref = q4k_ref(stored, m, c, r), v = half_to_float(h[r * k + c]);
        if (std::abs(ref) > 65504) continue;  // past f16: inf, as the host's
        ASSERT_LE(std::abs(v - ref), std::max(std::abs(ref) * std::exp2(-11), std::exp2(-25)) * (1 + std::exp2(-12)))
            << "W[" << r << ", " << c << "], " << where;
      }
  }
}

// The loader's path (GpuRepacker through the Uploader) with binding limits that force several
// dispatches per tensor: the W4A16 groups in chunks of 128, the F16 rows in chunks of 128.
TEST_F(RepackKernels, ChunkedThroughTheUploaderMatchesHost) {
  auto run = [&](const model::TensorView& t, uint64_t limit) {
    std::vector<std::byte> host;
    auto want = model::host_runnable(t, host);
    auto dst = poisoned((want.size() + 15) / 16 * 16);
    {
      gpu::Uploader up(device(), 1 << 16, 2);  // small slots: the stored bytes span several submits
      model::GpuRepacker repacker(device(), kernels(), up, limit);
      EXPECT_TRUE(repacker.can(t));
      repacker.repack(t, dst);
      up.flush();
    }
    auto got = download<uint8_t>(dst, want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0)
        << t.name << " limit " << limit << " seed=" << test_seed();
  };
  for (DType st : {DType::BF16, DType::F32}) {
    const int64_t rows = 389, k = 96;  // 1167 groups: 9 full chunks of 128 and an odd one of 15
    auto packed = random_bytes(size_t(rows * k / 2));
    auto scales = random_scales(st, size_t(rows * k / 32));
    model::TensorView t{"w4a16", DType::Q8_0, {rows, k}, as_bytes(packed), model::Repack::w4a16_to_q8_0, as_bytes(scales), st};
    run(t, 128 * 34 + 16);
    run(t, 1 << 20);
  }
  const int64_t m = 300, k = 71;  // F16 rows of 142 bytes: chunks of 128, 128 and 44 rows
  auto stored = random_q4k_cols(m, k);
  model::TensorView t{"col", DType::F16, {m, k}, as_bytes(stored), model::Repack::q4k_col_to_f16, {}, DType::BF16};
  run(t, 128 * k * 2 + 16 + 4096);
  // Stored blocks past one binding: the loader converts that tensor on the host.
  gpu::Uploader up(device());
  EXPECT_FALSE(model::GpuRepacker(device(), kernels(), up, 16384).can(t));
}

}  // namespace
}  // namespace bs::testing
