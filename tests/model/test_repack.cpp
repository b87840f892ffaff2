// runtime/model/repack.h against float64 references with fresh random inputs and odd sizes: W4A16 to
// Q8_0 (exact), the int4 per-row table lookup (one f32 rounding of the product, as DOPPLER's), DOPPLER's "col" Q4_K to F16 (one f16 rounding),
// F16/BF16 widening, flat Q4_K conv kernels to F32, and the forms no kernel reads failing with the tensor's name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "rdrr/quant.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "runtime/model/repack.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

using model::Companions;

std::vector<std::byte> random_bytes(size_t n) {
  std::vector<std::byte> b(n);
  for (auto& x : b) x = std::byte(rng()() & 0xff);
  return b;
}

template <class T>
std::span<const std::byte> as_bytes(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

// Nibble e of a row of packed int4 (low nibble first), minus 8.
int nibble(const std::byte* row, int64_t e) { return int((uint8_t(row[e / 2]) >> (4 * (e & 1))) & 15) - 8; }

TEST(Repack, W4A16ToQ8_0IsExact) {
  for (auto [rows, k] : {std::pair<int64_t, int64_t>{7, 96}, {33, 32}, {5, 640}}) {
    const int64_t groups = k / 32;
    auto packed = random_bytes(size_t(rows * groups * 16));
    // BF16 scales over f16's normal range, and two that f16 cannot hold exactly (counted, not exact).
    std::uniform_real_distribution<double> e(-13.5, 3);
    std::vector<uint16_t> sc(size_t(rows * groups));
    for (auto& s : sc) s = float_to_bf16(float((rng()() & 1 ? -1 : 1) * std::exp2(e(rng())) * 1.37));
    sc[0] = float_to_bf16(3e-7f);
    uint64_t rounded = 0;
    auto q = model::w4a16_to_q8_0(as_bytes(packed), as_bytes(sc), DType::BF16, rows, k, &rounded);
    ASSERT_EQ(q.size(), size_t(rows * groups * 34));
    EXPECT_EQ(rounded, 1u);
    std::vector<float> deq(static_cast<size_t>(k));
    for (int64_t r = 0; r < rows; ++r) {
      dequantize_row(DType::Q8_0, q.data() + r * groups * 34, deq.data(), k);
      for (int64_t c = 0; c < k; ++c) {
        size_t g = size_t(r * groups + c / 32);
        double want = double(nibble(packed.data() + r * groups * 16, c)) * double(bf16_to_float(sc[g]));
        if (g == 0) continue;  // the scale f16 cannot hold
        ASSERT_EQ(double(deq[size_t(c)]), want) << "row " << r << " col " << c << " k=" << k << " seed=" << test_seed();
      }
    }
  }
}

TEST(Repack, W4A16ShapeCompanionMustAgree) {
  TensorEntry t;
  t.name = "w";
  t.dtype = DType::W4A16;
  t.shape = {4, 64};
  t.shape_tensor = "w_shape";
  auto packed = random_bytes(4 * 2 * 16);
  std::vector<uint16_t> sc(8, float_to_bf16(0.5f));
  std::vector<int64_t> good = {4, 64}, bad = {64, 4};
  auto r = model::runnable_form(t, as_bytes(packed), Companions{as_bytes(sc), DType::BF16, as_bytes(good), DType::I64}, "m.json");
  EXPECT_EQ(r.dtype, DType::Q8_0);
  EXPECT_EQ(r.data.size(), 8u * 34);
  // Deferred (the loader's form): checked, named, left as stored; host_runnable makes the same bytes.
  auto d = model::runnable_form(t, as_bytes(packed), Companions{as_bytes(sc), DType::BF16, as_bytes(good), DType::I64}, "m.json", true);
  EXPECT_EQ(d.dtype, DType::Q8_0);
  EXPECT_EQ(d.repack, model::Repack::w4a16_to_q8_0);
  EXPECT_EQ(d.data.data(), as_bytes(packed).data());
  model::TensorView v{"w", d.dtype, d.shape, d.data, d.repack, d.scales, d.scale_dtype};
  std::vector<std::byte> storage;
  auto h = model::host_runnable(v, storage);
  EXPECT_EQ(model::runnable_bytes(v), h.size());
  EXPECT_TRUE(std::equal(h.begin(), h.end(), r.data.begin(), r.data.end()));
  try {
    model::runnable_form(t, as_bytes(packed), Companions{as_bytes(sc), DType::BF16, as_bytes(bad), DType::I64}, "m.json");
    ADD_FAILURE() << "mismatched shape companion accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w_shape"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[64,4]"), std::string::npos) << e.what();
  }
}

TEST(Repack, Int4RowLookupIsExact) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 90}, {5, 7}, {300, 256}}) {
    const int64_t rb = (cols + 1) / 2;
    auto table = random_bytes(size_t(rows * rb));
    std::vector<float> scales(static_cast<size_t>(rows));
    for (auto& s : scales) s = float(std::exp2(double(rng()() % 2000) / 100.0 - 15.0));
    std::vector<float> out(size_t(cols) + 1, std::nanf(""));
    for (int64_t row : {int64_t(0), rows / 2, rows - 1}) {
      out[size_t(cols)] = -1234.5f;  // a guard: the row must not write past cols
      model::int4_row(as_bytes(table), as_bytes(scales), cols, row, out.data());
      for (int64_t c = 0; c < cols; ++c)
        // The float64 product rounded once to f32 (a 4-bit code times a 24-bit scale can need 27 bits).
        ASSERT_EQ(out[size_t(c)], float(double(nibble(table.data() + row * rb, c)) * double(scales[size_t(row)])))
            << "row " << row << " col " << c << " seed=" << test_seed();
      EXPECT_EQ(out[size_t(cols)], -1234.5f);
    }
  }
}

TEST(Repack, Q4KColToF16) {
  const int64_t m = 300, k = 70;  // stored as 70 rows of 300 values, each padded to 512
  const int64_t mp = 512;
  auto f = random_floats(size_t(k * mp), -2, 2);
  const uint64_t rb = padded_row_bytes(DType::Q4_K, m);
  std::vector<std::byte> stored(size_t(k) * rb);
  std::vector<double> wt(size_t(k * mp));  // dequantized W^T, float64
  std::vector<float> row(static_cast<size_t>(mp));
  for (int64_t c = 0; c < k; ++c) {
    quantize_row(DType::Q4_K, f.data() + c * mp, stored.data() + c * rb, mp);
    dequantize_row(DType::Q4_K, stored.data() + c * rb, row.data(), mp);
    for (int64_t r = 0; r < mp; ++r) wt[size_t(c * mp + r)] = row[size_t(r)];
  }
  auto out = model::q4k_col_to_f16(stored, m, k);
  ASSERT_EQ(out.size(), size_t(m * k * 2));
  const auto* h = reinterpret_cast<const uint16_t*>(out.data());
  double worst = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) {
      double want = wt[size_t(c * mp + r)], got = half_to_float(h[size_t(r * k + c)]);
      worst = std::max(worst, std::abs(got - want) / std::max(std::abs(want), 6.1e-5));
    }
  EXPECT_LE(worst, std::exp2(-11)) << "beyond one f16 rounding; seed=" << test_seed();
}

TEST(Repack, VectorsWidenExactly) {
  std::vector<uint16_t> h(37), b(37);
  for (size_t i = 0; i < h.size(); ++i) {
    float v = random_floats(1, -4, 4)[0];
    h[i] = float_to_half(v);
    b[i] = float_to_bf16(v);
  }
  auto fh = model::widen_to_f32(DType::F16, as_bytes(h)), fb = model::widen_to_f32(DType::BF16, as_bytes(b));
  auto b16 = model::bf16_to_f16(as_bytes(b));
  for (size_t i = 0; i < h.size(); ++i) {
    float x, y;
    std::memcpy(&x, fh.data() + 4 * i, 4);
    std::memcpy(&y, fb.data() + 4 * i, 4);
    EXPECT_EQ(x, half_to_float(h[i]));
    EXPECT_EQ(y, bf16_to_float(b[i]));
    uint16_t z;
    std::memcpy(&z, b16.data() + 2 * i, 2);
    EXPECT_EQ(half_to_float(z), bf16_to_float(b[i]));  // |x| in [2^-14, 4]: exact
  }
}

// DOPPLER's LFM2 conv kernels [dim, 1, width]: Q4_K over the flattened tensor, one stream of blocks
// (the last padded). They load as F32, each value the block dequantization of its element.
TEST(Repack, FlatQ4KConvKernelBecomesF32) {
  for (int64_t dim : {37, 2048}) {
    const int64_t n = dim * 3, blocks = (n + 255) / 256;
    auto f = random_floats(size_t(blocks * 256));
    std::vector<uint8_t> q(size_t(blocks * 144));
    quantize_row(DType::Q4_K, f.data(), q.data(), blocks * 256);
    std::vector<float> want(size_t(blocks * 256));
    dequantize_row(DType::Q4_K, q.data(), want.data(), blocks * 256);
    TensorEntry t;
    t.name = "model.layers.0.conv.conv.weight";
    t.dtype = DType::Q4_K;
    t.layout = Layout::flat;
    t.shape = {dim, 1, 3};
    t.size = q.size();
    EXPECT_EQ(model::runnable_bytes(t), uint64_t(n) * 4);
    auto r = model::runnable_form(t, as_bytes(q), {}, "m.json");
    ASSERT_EQ(r.dtype, DType::F32);
    EXPECT_EQ(r.shape, t.shape);
    ASSERT_EQ(r.data.size(), size_t(n) * 4);
    std::vector<float> got(static_cast<size_t>(n));
    std::memcpy(got.data(), r.data.data(), r.data.size());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[size_t(i)], want[size_t(i)]) << i;
  }
}

TEST(Repack, FormsNoKernelReadsAreNamed) {
  auto expect_fail = [](TensorEntry t, std::string part) {
    t.name = "model.x.weight";
    std::vector<std::byte> bytes(1 << 16);
    try {
      model::runnable_form(t, bytes, {}, "m.json");
      ADD_FAILURE() << "accepted: " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("model.x.weight"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  TensorEntry q6;
  q6.dtype = DType::Q6_K;
  q6.shape = {4, 640};
  expect_fail(q6, "only the Q4_K kernels read padded rows");
  TensorEntry flat;
  flat.dtype = DType::Q4_K;
  flat.layout = Layout::flat;
  flat.shape = {4, 640};
  expect_fail(flat, "packed flat");
  TensorEntry w;
  w.dtype = DType::W4A16;
  w.shape = {4, 48};
  std::vector<int64_t> shape = {4, 48};
  std::vector<std::byte> b(1024);
  try {
    model::runnable_form(w, b, Companions{b, DType::BF16, as_bytes(shape), DType::I64}, "m.json");
    ADD_FAILURE() << "W4A16 rows of 48 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of 32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bs::testing
