// Corpus kernels exercising atomics, control flow, packing builtins and subgroup builtins on the
// GPU, each against a line-by-line CPU mirror.
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>

#include "tests/wgsl/wgsl_gpu_test.h"

namespace bs::testing {
namespace {

class WgslFeatures : public WgslGpu {};

TEST_F(WgslFeatures, Atomics) {
  auto k = kernel("atomics.wgsl");
  std::vector<int32_t> v(1000);
  std::uniform_int_distribution<int> dist(-1000, 1000);
  for (auto& x : v) x = dist(rng());
  std::vector<uint32_t> hist(16, 0);
  int32_t mx = INT_MIN, mn = INT_MAX;
  double sum = 0;
  for (int32_t x : v) {
    hist[uint32_t(x) & 15u]++;
    mx = std::max(mx, x);
    mn = std::min(mn, x);
    sum += x & 7;
  }
  int32_t init[4] = {INT_MIN, INT_MAX, 0, 0};
  auto bv = upload(v), bh = upload(std::vector<uint32_t>(16, 0)), bs = bytes_buffer(init, sizeof(init));
  run(*k, {{0, &bv}, {1, &bh}, {2, &bs}}, uint32_t((v.size() + 63) / 64));
  EXPECT_EQ(download<uint32_t>(bh, 16), hist);
  auto st = download<int32_t>(bs, 4);
  EXPECT_EQ(st[0], mx);
  EXPECT_EQ(st[1], mn);
  EXPECT_EQ(double(std::bit_cast<float>(st[2])), sum);  // small integers: exact in any order
  EXPECT_EQ(uint32_t(st[3]), v.size());
}

// The CPU mirror of control_flow.wgsl's compute().
int32_t control_flow_ref(int32_t i) {
  const int32_t table[5] = {1, -2, 3, -4, 5};
  const int32_t bias = 3, scale = 6;
  int32_t acc = 0, calls = 0;
  for (int32_t j = 0;;) {
    if (j != 2) acc += j * table[uint32_t(j) % 5u];
    else j++;
    j++;
    if (j >= (i % 5) + 3) break;
  }
  for (int32_t k = 0; k < 6; k++)
    if (k % 2 == 0) acc += table[k % 5] * (i + 1);
  for (int32_t w = i; w > 0;) {
    w -= 3;
    acc ^= w;
  }
  int32_t x = i - 3, c;
  switch (x % 7) {
    case 0: case 1: c = 10; break;
    case 2: c = 20; break;
    case -1: case -2: c = -40; break;
    default: c = 30 + 2 * x;
  }
  acc += c;
  acc += bias;
  calls++;
  acc += 2 * i;
  int32_t arr[4] = {1, 2, 3, 4};
  arr[uint32_t(i) % 4u] *= scale;
  acc += arr[0] + arr[1] + arr[2] + arr[3];
  acc += 2 * i + 4;
  bool b = (i > 4 && i < 12) || i == 20;
  acc += (b ? 100 : 0) + calls;
  acc = int32_t(uint32_t(acc) << 1);
  return acc % 1000;
}

TEST_F(WgslFeatures, ControlFlowPointersAndOverrides) {
  auto k = kernel("control_flow.wgsl");
  const uint32_t n = 64;
  auto out = poisoned(n * 4);
  run(*k, {{0, &out}}, n / 16);
  auto r = download<int32_t>(out, n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(r[i], control_flow_ref(int32_t(i))) << "i=" << i;
}

uint32_t pack_unorm(float v) { return uint32_t(std::floor(0.5f + 255.0f * v)); }
uint32_t pack_snorm(float v) { return uint32_t(int32_t(std::floor(0.5f + 127.0f * v))) & 0xffu; }
int32_t sx8(uint32_t w, int k) { return int32_t(int8_t(uint8_t(w >> (8 * k)))); }

TEST_F(WgslFeatures, PackingAndBitBuiltins) {
  auto k = kernel("packing.wgsl");
  const uint32_t n = 64;
  std::vector<uint32_t> words(n);
  std::vector<float> floats(n * 4);
  for (uint32_t i = 0; i < n; ++i) {
    // Halves in the normal range (no denormals, infinities or NaNs) and dyadic floats: exact results.
    uint32_t w = uint32_t(rng()());
    w = (w & 0xbfffbfffu) | 0x04000400u;
    words[i] = i == 0 ? 0u : i == 1 ? 0xbbff3c00u : w;
    for (int c = 0; c < 4; ++c) floats[i * 4 + c] = float(int(rng()() % 33) - 16) / 8.0f;
  }
  auto bw = upload(words), bf = upload(floats), out = poisoned(n * 16 * 4);
  run(*k, {{0, &bw}, {1, &bf}, {2, &out}}, n / 32);
  auto r = download<uint32_t>(out, n * 16);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t w = words[i];
    const float* f = &floats[i * 4];
    const uint32_t* o = &r[i * 16];
    auto clampf = [](float v, float lo, float hi) { return std::min(std::max(v, lo), hi); };
    EXPECT_EQ(o[0], uint32_t(float_to_half(f[0])) | (uint32_t(float_to_half(f[1])) << 16));
    EXPECT_EQ(o[1], float_to_bits(half_to_float(uint16_t(w >> 16))));
    uint32_t un = 0, sn = 0;
    for (int c = 0; c < 4; ++c) {
      un |= pack_unorm(clampf(f[c], 0, 1)) << (8 * c);
      sn |= pack_snorm(clampf(f[c], -1, 1)) << (8 * c);
    }
    EXPECT_EQ(o[2], un);
    EXPECT_EQ(o[3], sn);
    float dot = 0;
    for (int c = 0; c < 4; ++c) dot += float((w >> (8 * c)) & 0xff) / 255.0f * float(c + 1);
    EXPECT_NEAR(bits_to_float(o[4]), dot, 1e-5);
    uint32_t i8 = 0, u8 = 0;
    for (int c = 0; c < 4; ++c) {
      i8 |= (uint32_t(int32_t(f[c] * 100.0f)) & 0xffu) << (8 * c);
      u8 |= std::min(uint32_t(std::fabs(f[c]) * 100.0f), 255u) << (8 * c);
    }
    EXPECT_EQ(o[5], i8);
    EXPECT_EQ(o[6], u8);
    EXPECT_EQ(int32_t(o[7]), sx8(w, 2));
    uint32_t du = 0;
    for (int c = 0; c < 4; ++c) du += ((w >> (8 * c)) & 0xff) * (4u - uint32_t(c));
    EXPECT_EQ(o[8], du);
    int32_t di = sx8(w, 0) * -128 + sx8(w, 1) * 127 + sx8(w, 2) * -1 + sx8(w, 3) * 1;
    EXPECT_EQ(int32_t(o[9]), di);
    uint32_t clz = w ? uint32_t(std::countl_zero(w)) : 32u, ctz = w ? uint32_t(std::countr_zero(w)) : 32u;
    EXPECT_EQ(o[10], uint32_t(std::popcount(w)) + (clz << 8) + (ctz << 16));
    EXPECT_EQ(o[11], (w >> 5) & 0x1ffu);
    EXPECT_EQ(int32_t(o[12]), int32_t(w) >> 20);
    EXPECT_EQ(o[13], (w & ~(0xfffu << 8)) | ((0xabcdu & 0xfffu) << 8));
    uint32_t rev = 0;
    for (int b = 0; b < 32; ++b) rev |= ((w >> b) & 1u) << (31 - b);
    int32_t sw = int32_t(w);
    uint32_t flb = (sw == 0 || sw == -1) ? 0xffffffffu
                   : sw > 0 ? uint32_t(31 - std::countl_zero(uint32_t(sw))) : uint32_t(31 - std::countl_zero(~uint32_t(sw)));
    EXPECT_EQ(o[14], rev ^ flb);
    EXPECT_EQ(o[15], (w ? uint32_t(std::countr_zero(w)) : 0xffffffffu) + float_to_bits(f[2]));
  }
}

TEST_F(WgslFeatures, Subgroups) {
  const auto& a = device().adapter();
  if (!a.subgroup_arithmetic || !a.subgroup_shuffle) GTEST_SKIP() << "subgroup operations missing";
  auto k = kernel("subgroups.wgsl");
  std::vector<float> vals(32);
  for (uint32_t i = 0; i < 32; ++i) vals[i] = float(int(rng()() % 9));
  auto bv = upload(vals), out = poisoned(32 * 12 * 4);
  run(*k, {{0, &bv}, {1, &out}}, 1);
  auto r = download<uint32_t>(out, 32 * 12);
  uint32_t n = r[0];
  ASSERT_TRUE(n >= 1 && n <= 32 && 32 % n == 0) << "subgroup size " << n;
  for (uint32_t lid = 0; lid < 32; ++lid) {
    uint32_t lane = lid % n, base = lid - lane;
    auto u = [&](uint32_t l) { return (base + l) * 3u + 1u; };
    auto x = [&](uint32_t l) { return vals[base + l]; };
    const uint32_t* o = &r[lid * 12];
    float sum = 0, mx = -1e30f;
    uint32_t ex = 0, inc = 0, orr = 0, andd = ~0u, xr = 0;
    for (uint32_t l = 0; l < n; ++l) {
      sum += x(l);
      mx = std::max(mx, x(l));
      if (l < lane) ex += u(l);
      if (l <= lane) inc += u(l);
      orr |= 1u << l;
      andd &= u(l) | 1u;
      xr ^= u(l);
    }
    EXPECT_EQ(o[0], n);
    EXPECT_EQ(bits_to_float(o[1]), sum) << lid;
    EXPECT_EQ(bits_to_float(o[2]), mx);
    EXPECT_EQ(o[3], u(0) + ex * 1000u);
    EXPECT_EQ(o[4], inc);
    EXPECT_EQ(bits_to_float(o[5]), x((lane + 1) % n));
    if ((lane ^ 1u) < n) {
      EXPECT_EQ(o[6], u(lane ^ 1u));
    }
    EXPECT_EQ(o[7], (lane + 1 < n ? u(lane + 1) : 0u) + (lane > 0 ? u(lane - 1) : 0u) * 1000u);
    EXPECT_EQ(o[8], u(0) + (u(0) + 5u) * 1000u);
    uint32_t even = 0;
    for (uint32_t l = 0; l < n; l += 2) even |= 1u << l;
    EXPECT_EQ(o[9], even);
    EXPECT_EQ(o[10], (lane == 0 ? 1u : 0u) + 2u + (n > 1 ? 4u : 0u));
    EXPECT_EQ(o[11], orr ^ andd ^ xr);
  }
}

}  // namespace
}  // namespace bs::testing
