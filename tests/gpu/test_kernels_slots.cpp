// The *_slots kernels of serve's batched decode (BATCH_SLOTS): one dispatch serves every sequence of a batch,
// each with its own position (word 1 of its step state, rows kStateWords apart) and its own KV caches (separate
// buffers, reached through the addresses a table holds). Against float64 references: RoPE on q and k, the f16
// append of k and v at each row's own position (other cache rows stay poisoned), and split decode attention
// with each row at a different context length (0, mid-chunk, the last position), GQA, a sliding window and
// softcap, dispatched twice (the per-head arrival counts must return to zero).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using namespace kparams;

constexpr uint32_t kStateWords = 64;  // serve's 256-byte step state rows

class KernelsSlots : public GpuTest {
 protected:
  void SetUp() override {
    if (!device().hasBufferDeviceAddress()) GTEST_SKIP() << "the device has no bufferDeviceAddress (the *_slots kernels need it)";
  }
  // Step states of rows at positions `pos` (word 1 of each row).
  gpu::Buffer states(const std::vector<uint32_t>& pos) {
    std::vector<uint32_t> s(pos.size() * kStateWords, 0);
    for (size_t r = 0; r < pos.size(); ++r) s[r * kStateWords + 1] = pos[r];
    return upload(s);
  }
  // The address table: a uvec4 per row, (k cache, v cache).
  gpu::Buffer table(const std::vector<gpu::Buffer>& kc, const std::vector<gpu::Buffer>& vc) {
    std::vector<uint32_t> t;
    for (size_t r = 0; r < kc.size(); ++r) {
      uint64_t ka = kc[r].deviceAddress(), va = vc[r].deviceAddress();
      t.insert(t.end(), {uint32_t(ka), uint32_t(ka >> 32), uint32_t(va), uint32_t(va >> 32)});
    }
    return upload(t);
  }
  void rope_kv(bool f32kv);
  void split_attention(bool f32kv, bool f16_out);
};

// f16 caches (rope_kv_f32_slots) and f32 ones (rope_kv_f32kv_slots, `--precision f32`).
TEST_F(KernelsSlots, RopeKvAppendsEachRowAtItsOwnPosition) {
  for (bool f32kv : {false, true}) rope_kv(f32kv);
}
TEST_F(KernelsSlots, SplitAttentionReadsEachRowsOwnCacheAndPosition) {
  for (bool f32kv : {false, true})
    for (bool f16_out : {false, true}) split_attention(f32kv, f16_out);
}

void KernelsSlots::rope_kv(bool f32kv) {
  const uint32_t heads = 6, kvh = 2, hd = 36, ctx = 40, kvd = kvh * hd, eb = f32kv ? 4 : 2;
  const std::vector<uint32_t> pos = {0, 17, 39};
  const uint32_t rows = uint32_t(pos.size());
  auto q = random_floats(rows * heads * hd), k = random_floats(rows * kvd), v = random_floats(rows * kvd);
  std::vector<float> f(hd / 2);
  for (uint32_t i = 0; i < hd / 2; ++i) f[i] = float(1.0 / std::pow(10000.0, 2.0 * i / hd));
  auto bq = upload(q), bk = upload(k), bv = upload(v), bf = upload(f), st = states(pos);
  std::vector<gpu::Buffer> kc, vc;
  for (uint32_t r = 0; r < rows; ++r) {
    kc.push_back(poisoned(ctx * kvd * eb));
    vc.push_back(poisoned(ctx * kvd * eb));
  }
  auto tb = table(kc, vc);
  run_once(kernels().get(f32kv ? "rope_kv_f32kv_slots" : "rope_kv_f32_slots", {{1, kStateWords}}), {{0, &bq}, {1, &bk}, {2, &bv}, {3, &bf}, {4, &st}, {5, &tb}},
           RopeKvParams{rows, heads, kvh, hd}, heads + 2 * kvh, rows);
  // Rotate-half RoPE of `x` (n heads of hd) at `p`, in double.
  auto rope = [&](const float* x, uint32_t n, uint32_t p) {
    std::vector<double> out(size_t(n) * hd);
    for (uint32_t h = 0; h < n; ++h)
      for (uint32_t i = 0; i < hd / 2; ++i) {
        double a = double(float(p) * f[i]), c = std::cos(a), s = std::sin(a);
        const float* b = x + h * hd;
        out[h * hd + i] = b[i] * c - b[i + hd / 2] * s;
        out[h * hd + i + hd / 2] = b[i + hd / 2] * c + b[i] * s;
      }
    return out;
  };
  auto gq = download<float>(bq, q.size());
  for (uint32_t r = 0; r < rows; ++r) {
    auto ref_q = rope(q.data() + r * heads * hd, heads, pos[r]), ref_k = rope(k.data() + r * kvd, kvh, pos[r]);
    std::vector<float> got_q(gq.begin() + r * heads * hd, gq.begin() + (r + 1) * heads * hd);
    EXPECT_LT(nmse(got_q, ref_q), 1e-10) << "row " << r;
    // Cache values as floats, and whether each still holds the poison (all bits set).
    auto cache = [&](gpu::Buffer& b, std::vector<float>& val, std::vector<bool>& poison) {
      if (f32kv) {
        auto w = download<uint32_t>(b, ctx * kvd);
        for (size_t i = 0; i < w.size(); ++i) val.push_back(bits_to_float(w[i])), poison.push_back(w[i] == 0xffffffffu);
      } else {
        auto w = download<uint16_t>(b, ctx * kvd);
        for (size_t i = 0; i < w.size(); ++i) val.push_back(half_to_float(w[i])), poison.push_back(w[i] == 0xffff);
      }
    };
    std::vector<float> ck, cv;
    std::vector<bool> pk, pv;
    cache(kc[r], ck, pk);
    cache(vc[r], cv, pv);
    std::vector<float> got_k(ck.begin() + pos[r] * kvd, ck.begin() + (pos[r] + 1) * kvd);
    double v_err = 0;
    for (uint32_t i = 0; i < kvd; ++i)
      v_err = std::max(v_err, double(std::abs(cv[pos[r] * kvd + i] - (f32kv ? v[r * kvd + i] : round_half(v[r * kvd + i])))));
    EXPECT_LT(nmse(got_k, ref_k), f32kv ? 1e-10 : 1e-6) << "row " << r;  // f16: a relative 2^-11 per value
    EXPECT_EQ(v_err, 0.0) << "row " << r;
    size_t touched = 0;
    for (size_t i = 0; i < ck.size(); ++i) touched += (i / kvd != pos[r]) && (!pk[i] || !pv[i]);
    EXPECT_EQ(touched, 0u) << "row " << r << ": cache rows other than its position were written";
  }
}

// f16_out: the *_f16o variants (o as f16, serve's tensor-core o projection input), within f16's rounding.
void KernelsSlots::split_attention(bool f32kv, bool f16_out) {
  const uint32_t heads = 6, kvh = 2, hd = 20, ctx = 300, splits = 3, kvd = kvh * hd;
  const std::vector<uint32_t> pos = {0, 70, 299, 5};
  const uint32_t rows = uint32_t(pos.size());
  const float scale = 0.3f, cap = 5.0f;
  auto kv = [f32kv](float x) { return f32kv ? double(x) : double(round_half(x)); };
  std::vector<std::vector<float>> k(rows), v(rows);
  std::vector<gpu::Buffer> kc, vc;
  for (uint32_t r = 0; r < rows; ++r) {
    k[r] = random_floats(ctx * kvd), v[r] = random_floats(ctx * kvd);
    if (f32kv) {
      kc.push_back(upload(k[r]));
      vc.push_back(upload(v[r]));
    } else {
      std::vector<uint16_t> kh(ctx * kvd), vh(ctx * kvd);
      for (size_t i = 0; i < kh.size(); ++i) kh[i] = float_to_half(k[r][i]), vh[i] = float_to_half(v[r][i]);
      kc.push_back(upload(kh));
      vc.push_back(upload(vh));
    }
  }
  auto tb = table(kc, vc), st = states(pos);
  auto part = poisoned(rows * heads * splits * (hd + 2) * 4);
  auto count = upload(std::vector<uint32_t>(rows * heads, 0));
  for (uint32_t window : {0u, 7u}) {
    auto q = random_floats(rows * heads * hd);
    // One value past the output, poisoned: an f16 kernel writing f32 strides would reach it.
    auto bq = upload(q), out = poisoned((rows * heads * hd + 1) * (f16_out ? 2 : 4));
    const std::string kernel = std::string(f32kv ? "attention_split_f32kv_slots" : "attention_split_f16kv_slots") +
                               (f16_out ? "_f16o" : "");
    run_once(kernels().get(kernel, {{0, kStateWords}}), {{0, &bq}, {3, &out}, {4, &part}, {5, &count}, {6, &st}, {7, &tb}},
             AttentionSplitParams{heads, kvh, hd, splits, window, scale, window ? cap : 0.0f, 0}, heads, splits * rows);
    std::vector<float> got;
    if (f16_out) {
      auto h = download<uint16_t>(out, rows * heads * hd + 1);
      EXPECT_EQ(h.back(), 0xffff) << kernel << ": written past the output";
      for (size_t i = 0; i + 1 < h.size(); ++i) got.push_back(half_to_float(h[i]));
    } else {
      got = download<float>(out, rows * heads * hd);
    }
    for (uint32_t r = 0; r < rows; ++r) {
      std::vector<double> ref(heads * hd);
      for (uint32_t h = 0; h < heads; ++h) {
        uint32_t g = h / (heads / kvh), p = pos[r], lo = window && p + 1 > window ? p + 1 - window : 0;
        std::vector<double> sc(p + 1);
        double mx = -1e300, sum = 0;
        for (uint32_t j = lo; j <= p; ++j) {
          double d = 0;
          for (uint32_t i = 0; i < hd; ++i) d += q[(r * heads + h) * hd + i] * kv(k[r][j * kvd + g * hd + i]);
          sc[j] = window ? cap * std::tanh(d * scale / cap) : d * scale;
          mx = std::max(mx, sc[j]);
        }
        for (uint32_t j = lo; j <= p; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
        for (uint32_t i = 0; i < hd; ++i) {
          double a = 0;
          for (uint32_t j = lo; j <= p; ++j) a += sc[j] * kv(v[r][j * kvd + g * hd + i]);
          ref[h * hd + i] = a / sum;
        }
      }
      std::vector<float> got_r(got.begin() + r * heads * hd, got.begin() + (r + 1) * heads * hd);
      // f16 output: a relative 2^-12 per value at most, an nmse below 6e-8.
      EXPECT_LT(nmse(got_r, ref), f16_out ? 1e-7 : 1e-10)
          << kernel << " row " << r << " pos " << pos[r] << " window " << window;
    }
    EXPECT_EQ(download<uint32_t>(count, rows * heads), std::vector<uint32_t>(rows * heads, 0));
  }
}

}  // namespace
}  // namespace bs::testing
