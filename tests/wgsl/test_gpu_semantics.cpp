// The WGSL answers where GLSL differs, observed on the GPU: integer division and remainder by zero
// and INT_MIN / -1, shifts modulo 32, saturating float -> int, zero-initialised memory, struct
// layout offsets; plus atomics, control flow, packing and subgroup builtins against CPU mirrors.
#include <climits>
#include <cmath>
#include <cstring>

#include "tests/wgsl/wgsl_gpu_test.h"

namespace bs::testing {
namespace {

class WgslSemantics : public WgslGpu {};

int32_t wdiv(int32_t a, int32_t b) { return b == 0 || (a == INT_MIN && b == -1) ? a : a / b; }
int32_t wmod(int32_t a, int32_t b) { return b == 0 || (a == INT_MIN && b == -1) ? 0 : a % b; }
int32_t sat_i32(float f) { return f > 2147483520.0f ? INT_MAX : f <= -2147483648.0f ? INT_MIN : int32_t(f); }
uint32_t sat_u32(float f) { return f > 4294967040.0f ? UINT_MAX : f <= 0.0f ? 0u : uint32_t(f); }

TEST_F(WgslSemantics, IntegerDivisionShiftsAndCasts) {
  std::vector<int32_t> a = {7, -7, 7, -7, INT_MIN, INT_MIN, 5, 0, INT_MAX, -1, 123456, 9};
  std::vector<int32_t> b = {2, 2, -2, -2, -1, 0, 0, 0, -1, 33, 31, 64};
  std::vector<float> f = {7.5f, -7.5f, 1e10f, -1e10f, 3e9f, 2147483520.0f, 2147483648.0f, 4294967040.0f,
                          5e9f, -0.5f, 0.0f, -2147483648.0f};
  size_t n = a.size();
  auto ba = upload(a), bb = upload(b), bf = upload(f);
  {
    auto k = kernel("semantics.wgsl", "int_ops");
    auto out = poisoned(n * 8 * 4);
    run(*k, {{0, &ba}, {1, &bb}, {2, &out}}, 1);
    auto r = download<int32_t>(out, n * 8);
    for (size_t i = 0; i < n; ++i) {
      uint32_t ux = uint32_t(a[i]), uy = uint32_t(b[i]);
      EXPECT_EQ(r[8 * i + 0], wdiv(a[i], b[i])) << a[i] << " / " << b[i];
      EXPECT_EQ(r[8 * i + 1], wmod(a[i], b[i])) << a[i] << " % " << b[i];
      EXPECT_EQ(uint32_t(r[8 * i + 2]), uy == 0 ? ux : ux / uy);
      EXPECT_EQ(uint32_t(r[8 * i + 3]), uy == 0 ? 0 : ux % uy);
      EXPECT_EQ(r[8 * i + 4], wdiv(a[i], b[i]));
      EXPECT_EQ(r[8 * i + 5], wmod(a[i], b[i]));
      EXPECT_EQ(r[8 * i + 6], wdiv(a[i], b[i]));
      EXPECT_EQ(r[8 * i + 7], int32_t(0u - ux));
    }
  }
  {
    auto k = kernel("semantics.wgsl", "shifts");
    auto out = poisoned(n * 4 * 4);
    run(*k, {{0, &ba}, {1, &bb}, {2, &out}}, 1);
    auto r = download<int32_t>(out, n * 4);
    for (size_t i = 0; i < n; ++i) {
      uint32_t s = uint32_t(b[i]) & 31u, ux = uint32_t(a[i]);
      EXPECT_EQ(uint32_t(r[4 * i + 0]), ux << s) << a[i] << " << " << b[i];
      EXPECT_EQ(r[4 * i + 1], a[i] >> s) << a[i] << " >> " << b[i];
      EXPECT_EQ(uint32_t(r[4 * i + 2]), ux >> s);
      EXPECT_EQ(uint32_t(r[4 * i + 3]), (ux << s) ^ (1u << ((uint32_t(b[i]) + 1u) & 31u)));
    }
  }
  {
    auto k = kernel("semantics.wgsl", "casts");
    auto out = poisoned(n * 4 * 4);
    run(*k, {{2, &out}, {3, &bf}}, 1);  // `casts` uses only these: the layout comes from the entry point
    auto r = download<int32_t>(out, n * 4);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(r[4 * i + 0], sat_i32(f[i])) << "i32(" << f[i] << ")";
      EXPECT_EQ(uint32_t(r[4 * i + 1]), sat_u32(f[i])) << "u32(" << f[i] << ")";
      if (std::fabs(f[i]) < 100) {
        float m;
        std::memcpy(&m, &r[4 * i + 2], 4);
        EXPECT_NEAR(m, f[i] - 3.0f * std::trunc(f[i] / 3.0f), 1e-5) << f[i] << " % 3";
      }
      EXPECT_EQ(r[4 * i + 3], sat_i32(-f[i]));
    }
  }
}

TEST_F(WgslSemantics, WorkgroupAndPrivateMemoryStartAtZero) {
  auto dirty = kernel("workgroup_zero.wgsl", "dirty");
  auto check = kernel("workgroup_zero.wgsl", "check");
  auto out = poisoned(64 * 4);
  for (int rep = 0; rep < 3; ++rep) {
    run(*dirty, {{0, &out}}, 4);
    run(*check, {{0, &out}}, 4);
    auto r = download<uint32_t>(out, 64);
    for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(r[i], 0u) << "invocation " << i;
  }
}

// Tricky, as laid out by WGSL (see layout.wgsl): offsets 0, 16, 28, 30, 48, 56 (Inner: a 0, b 8),
// 80, 112, 128; size 144.
TEST_F(WgslSemantics, StructLayoutOffsets) {
  auto k = kernel("layout.wgsl");
  const size_t S = 144, n = 2;
  std::vector<uint8_t> src(S * n, 0);
  auto put_f = [&](size_t off, float v) { std::memcpy(&src[off], &v, 4); };
  auto put_h = [&](size_t off, float v) { uint16_t h = float_to_half(v); std::memcpy(&src[off], &h, 2); };
  auto put_u = [&](size_t off, uint32_t v) { std::memcpy(&src[off], &v, 4); };
  for (size_t i = 0; i < n; ++i) {
    size_t b = i * S;
    float base = float(i * 100);
    put_f(b + 0, base + 1);
    put_f(b + 16, base + 2); put_f(b + 20, base + 3); put_f(b + 24, base + 4);
    put_h(b + 28, base + 5);
    put_h(b + 30, base + 6);
    put_u(b + 48, uint32_t(base) + 7);
    put_h(b + 56, base + 8);
    put_h(b + 64, base + 9); put_h(b + 66, base + 10); put_h(b + 68, base + 11);
    put_f(b + 80, base + 12); put_f(b + 96 + 8, base + 13);
    put_f(b + 112, base + 14); put_f(b + 116, base + 15); put_f(b + 120, base + 16); put_f(b + 124, base + 17);
    put_h(b + 128, base + 18);
  }
  std::vector<uint8_t> uni(64, 0);
  float uv = 0.5f, uh = 0.25f, ul = 2.0f;
  uint32_t uy = 3;
  std::memcpy(&uni[20], &uv, 4);
  std::memcpy(&uni[28], &uh, 4);
  std::memcpy(&uni[48], &uy, 4);
  std::memcpy(&uni[52], &ul, 4);
  struct { uint32_t n; float scale; float offs[2]; float dir[4]; } u2{4, 0.5f, {0, 0.125f}, {0, 0, 0, 8}};
  auto bs = bytes_buffer(src.data(), src.size()), bd = poisoned(S * n), bf = poisoned(24 * n * 4);
  auto bu = bytes_buffer(uni.data(), uni.size()), bu2 = bytes_buffer(&u2, sizeof(u2));
  run(*k, {{0, &bs}, {1, &bd}, {2, &bf}, {3, &bu}, {4, &bu2}}, uint32_t(n));
  auto flat = download<float>(bf, 24 * n);
  for (size_t i = 0; i < n; ++i) {
    float base = float(i * 100);
    for (int j = 0; j < 18; ++j) EXPECT_EQ(flat[i * 24 + j], base + float(j + 1)) << "element " << i << " field " << j;
    EXPECT_EQ(flat[i * 24 + 18], uv + uh + float(uy) + ul);
    EXPECT_EQ(flat[i * 24 + 19], 4 + 0.5f + 0.125f + 8);
  }
  auto dst = download<uint8_t>(bd, S * n);
  for (size_t i = 0; i < n; ++i) {
    size_t b = i * S;
    float base = float(i * 100);
    auto get_f = [&](size_t off) { float v; std::memcpy(&v, &dst[b + off], 4); return v; };
    auto get_h = [&](size_t off) { uint16_t h; std::memcpy(&h, &dst[b + off], 2); return half_to_float(h); };
    uint32_t y;
    std::memcpy(&y, &dst[b + 48], 4);
    EXPECT_EQ(get_f(0), base + 2);
    EXPECT_EQ(get_f(24), base + 4);
    EXPECT_EQ(get_h(30), base + 6);
    EXPECT_EQ(y, uint32_t(base) + 8);
    EXPECT_EQ(get_h(66), round_half(2 * (base + 10)));
    EXPECT_EQ(get_f(104), base + 13);
    EXPECT_EQ(get_f(124), base + 17);
    EXPECT_EQ(get_h(128), round_half(base + 19));
  }
}

}  // namespace
}  // namespace bs::testing
