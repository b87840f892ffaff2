// The forward pass's own kernels against float64 CPU references: RoPE, KV store + attention (GQA,
// sliding window, softcap), gated activations, bias add, softcap. Fresh random data, odd sizes,
// poisoned outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using namespace kparams;

class KernelsModel : public GpuTest {
 protected:
  template <class P>
  void run(const char* name, std::vector<gpu::BindGroupEntry> e, const P& params, uint32_t gx, uint32_t gy = 1) {
    run_once(kernels().get(name), std::move(e), params, gx, gy);
  }
  gpu::Buffer state(uint32_t pos) { return upload(std::vector<uint32_t>{0, pos, 0, 0}); }

  // Causal attention in float64 over f16-rounded K and V (exact ones with f32_kv): rows of queries at
  // positions pos0 + r, GQA, an optional sliding window and softcap (cap 0: none). Output [rows, heads, hd].
  static std::vector<double> attention_ref(const std::vector<float>& q, const std::vector<float>& k,
                                           const std::vector<float>& v, uint32_t rows, uint32_t heads, uint32_t kvh,
                                           uint32_t hd, uint32_t pos0, uint32_t window, float scale, float cap,
                                           bool f32_kv = false) {
    const uint32_t kvd = kvh * hd;
    auto kv = [f32_kv](float x) { return f32_kv ? double(x) : round_half(x); };
    std::vector<double> ref(size_t(rows) * heads * hd);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t h = 0; h < heads; ++h) {
        uint32_t pos = pos0 + r, g = h / (heads / kvh);
        uint32_t lo = window && pos + 1 > window ? pos + 1 - window : 0;
        std::vector<double> s(pos + 1);
        double mx = -1e300, sum = 0;
        for (uint32_t j = lo; j <= pos; ++j) {
          double d = 0;
          for (uint32_t i = 0; i < hd; ++i) d += q[(r * heads + h) * hd + i] * kv(k[j * kvd + g * hd + i]);
          s[j] = cap > 0 ? cap * std::tanh(d * scale / cap) : d * scale;
          mx = std::max(mx, s[j]);
        }
        for (uint32_t j = lo; j <= pos; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (uint32_t i = 0; i < hd; ++i) {
          double a = 0;
          for (uint32_t j = lo; j <= pos; ++j) a += s[j] * kv(v[j * kvd + g * hd + i]);
          ref[(r * heads + h) * hd + i] = a / sum;
        }
      }
    return ref;
  }
};

TEST_F(KernelsModel, RopeRotateHalfAtStatePosition) {
  const uint32_t rows = 3, heads = 5, hd = 36, pos0 = 17;
  auto x = random_floats(rows * heads * hd);
  std::vector<float> f(hd / 2);
  for (uint32_t i = 0; i < hd / 2; ++i) f[i] = float(1.0 / std::pow(10000.0, 2.0 * i / hd));
  auto bx = upload(x), bf = upload(f), bs = state(pos0);
  run("rope_f32", {{0, &bx}, {1, &bf}, {2, &bs}}, RopeParams{rows, heads, hd, hd}, heads, rows);
  auto got = download<float>(bx, x.size());
  std::vector<double> ref(x.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t h = 0; h < heads; ++h)
      for (uint32_t i = 0; i < hd / 2; ++i) {
        size_t b = (size_t(r) * heads + h) * hd;
        double a = double(pos0 + r) * f[i], c = std::cos(a), s = std::sin(a);
        ref[b + i] = x[b + i] * c - x[b + i + hd / 2] * s;
        ref[b + i + hd / 2] = x[b + i + hd / 2] * c + x[b + i] * s;
      }
  EXPECT_LT(nmse(got, ref), 1e-10);
}

// The fused RoPE + KV append gives bit-identical q and caches to rope_f32 twice then kv_store_f16 twice
// (rope itself is checked against float64 above), and writes nothing outside rows [pos, pos + rows).
TEST_F(KernelsModel, RopeKvMatchesRopeThenKvStore) {
  const uint32_t rows = 3, heads = 6, kvh = 2, hd = 36, ctx = 29, pos0 = 11, kvd = kvh * hd;
  auto q = random_floats(rows * heads * hd), k = random_floats(rows * kvd), v = random_floats(rows * kvd);
  std::vector<float> f(hd / 2);
  for (uint32_t i = 0; i < hd / 2; ++i) f[i] = float(1.0 / std::pow(10000.0, 2.0 * i / hd));
  auto bf = upload(f), bs = state(pos0);
  // Separate kernels.
  auto q1 = upload(q), k1 = upload(k), v1 = upload(v), kc1 = poisoned(ctx * kvd * 2), vc1 = poisoned(ctx * kvd * 2);
  run("rope_f32", {{0, &q1}, {1, &bf}, {2, &bs}}, RopeParams{rows, heads, hd, hd}, heads, rows);
  run("rope_f32", {{0, &k1}, {1, &bf}, {2, &bs}}, RopeParams{rows, kvh, hd, hd}, kvh, rows);
  run("kv_store_f16", {{0, &k1}, {1, &kc1}, {2, &bs}}, KvStoreParams{rows, kvd, 0, 0}, (kvd + 127) / 128, rows);
  run("kv_store_f16", {{0, &v1}, {1, &vc1}, {2, &bs}}, KvStoreParams{rows, kvd, 0, 0}, (kvd + 127) / 128, rows);
  // Fused.
  auto q2 = upload(q), k2 = upload(k), v2 = upload(v), kc2 = poisoned(ctx * kvd * 2), vc2 = poisoned(ctx * kvd * 2);
  run("rope_kv_f32", {{0, &q2}, {1, &k2}, {2, &v2}, {3, &bf}, {4, &bs}, {5, &kc2}, {6, &vc2}},
      RopeKvParams{rows, heads, kvh, hd}, heads + 2 * kvh, rows);
  EXPECT_EQ(download<float>(q1, q.size()), download<float>(q2, q.size()));
  auto a = download<uint16_t>(kc1, ctx * kvd), b = download<uint16_t>(kc2, ctx * kvd);
  EXPECT_EQ(a, b);
  EXPECT_EQ(download<uint16_t>(vc1, ctx * kvd), download<uint16_t>(vc2, ctx * kvd));
  EXPECT_EQ(b[(pos0 - 1) * kvd], 0xffff);         // the row before is untouched
  EXPECT_EQ(b[(pos0 + rows) * kvd], 0xffff);      // and the row after
  EXPECT_NE(b[pos0 * kvd], 0xffff);
}

// rope_kv_f32_planes (prefill: q, k or v still in their split-k planes) gives the same bits as splitk_reduce into q, k
// and v, then rope_kv_f32: q in 2 planes, k in 3, v in none (read from its buffer), at odd float offsets in one
// workspace, partial rotary off and on (q then from its buffer: the model takes q's planes with full rotary only).
TEST_F(KernelsModel, RopeKvFromPlanesMatchesReduceThenRopeKv) {
  const uint32_t rows = 3, heads = 6, kvh = 2, hd = 36, ctx = 29, pos0 = 11, kvd = kvh * hd, qd = heads * hd;
  const uint32_t q_parts = 2, k_parts = 3, q_off = 5, k_off = q_off + q_parts * rows * qd + 7;
  auto ws = random_floats(k_off + k_parts * rows * kvd + 3), v = random_floats(rows * kvd);
  std::vector<float> f(hd / 2);
  for (uint32_t i = 0; i < hd / 2; ++i) f[i] = float(1.0 / std::pow(10000.0, 2.0 * i / hd));
  auto bf = upload(f), bs = state(pos0), bws = upload(ws);
  for (uint32_t rot : {0u, 20u}) {
    std::vector<float> qw(ws.begin() + q_off, ws.begin() + q_off + q_parts * rows * qd);
    std::vector<float> kw(ws.begin() + k_off, ws.begin() + k_off + k_parts * rows * kvd);
    auto bqw = upload(qw), bkw = upload(kw);
    auto q1 = poisoned(rows * qd * 4), k1 = poisoned(rows * kvd * 4), v1 = upload(v);
    run("splitk_reduce", {{0, &bqw}, {1, &q1}}, SplitKParams{rows * qd, q_parts, 0, 0}, (rows * qd + 255) / 256);
    run("splitk_reduce", {{0, &bkw}, {1, &k1}}, SplitKParams{rows * kvd, k_parts, 0, 0}, (rows * kvd + 255) / 256);
    auto kc1 = poisoned(ctx * kvd * 2), vc1 = poisoned(ctx * kvd * 2);
    const gpu::SpecConstant sc{0, rot};
    run_once(kernels().get("rope_kv_f32", {sc}),
             {{0, &q1}, {1, &k1}, {2, &v1}, {3, &bf}, {4, &bs}, {5, &kc1}, {6, &vc1}},
             RopeKvParams{rows, heads, kvh, hd}, 4, rows);
    // Partial rotary: q from its buffer (the planes form writes q's rotated dims only), summed here as the reduce sums.
    std::vector<float> qs(rows * qd, 0.0f);
    for (uint32_t i = 0; i < rows * qd; ++i)
      for (uint32_t j = 0; j < q_parts; ++j) qs[i] += qw[j * rows * qd + i];
    const uint32_t qp = rot ? 0 : q_parts;
    auto q2 = rot ? upload(qs) : poisoned(rows * qd * 4), k2 = poisoned(rows * kvd * 4), v2 = upload(v);
    auto kc2 = poisoned(ctx * kvd * 2), vc2 = poisoned(ctx * kvd * 2);
    run_once(kernels().get("rope_kv_f32_planes", {sc}),
             {{0, &q2}, {1, &k2}, {2, &v2}, {3, &bf}, {4, &bs}, {5, &kc2}, {6, &vc2}, {7, &bws}},
             RopeKvPlanesParams{rows, heads, kvh, hd, qp, k_parts, 0, 0, q_off, k_off, 0, 0}, 4, rows);
    EXPECT_EQ(download<float>(q1, rows * qd), download<float>(q2, rows * qd)) << "rot " << rot;
    EXPECT_EQ(download<uint16_t>(kc1, ctx * kvd), download<uint16_t>(kc2, ctx * kvd)) << "rot " << rot;
    EXPECT_EQ(download<uint16_t>(vc1, ctx * kvd), download<uint16_t>(vc2, ctx * kvd)) << "rot " << rot;
  }
}

TEST_F(KernelsModel, KvStoreThenAttentionGqaWindowSoftcap) {
  for (uint32_t window : {0u, 7u}) {
    const uint32_t heads = 6, kvh = 2, hd = 20, ctx = 40, rows = 3, pos0 = 21;
    const uint32_t kvd = kvh * hd, n = pos0 + rows;
    const float scale = 0.3f, cap = 5.0f;
    // Fill the cache for positions [0, n) through kv_store, as the forward does.
    auto k = random_floats(n * kvd), v = random_floats(n * kvd), q = random_floats(rows * heads * hd);
    auto kc = poisoned(ctx * kvd * 2), vc = poisoned(ctx * kvd * 2);
    auto bk = upload(k), bv = upload(v), s0 = state(0);
    run("kv_store_f16", {{0, &bk}, {1, &kc}, {2, &s0}}, KvStoreParams{n, kvd, 0, 0}, (kvd + 127) / 128, n);
    run("kv_store_f16", {{0, &bv}, {1, &vc}, {2, &s0}}, KvStoreParams{n, kvd, 0, 0}, (kvd + 127) / 128, n);
    auto bq = upload(q), out = poisoned(rows * heads * hd * 4), scores = poisoned(rows * heads * ctx * 4);
    auto sp = state(pos0);
    run("attention_f16kv", {{0, &bq}, {1, &kc}, {2, &vc}, {3, &out}, {4, &scores}, {5, &sp}},
        AttentionParams{rows, heads, kvh, hd, ctx, window, scale, cap}, heads, rows);
    auto got = download<float>(out, rows * heads * hd);
    auto ref = attention_ref(q, k, v, rows, heads, kvh, hd, pos0, window, scale, cap);
    EXPECT_LT(nmse(got, ref), 1e-10) << "window " << window;
  }
}

// The f32 KV cache (`--precision f32`): kv_store_f32 and rope_kv_f32kv write exact floats only to rows
// [pos, pos + rows), and attention_f32kv / attention_split_f32kv read them as floats — against float64 with
// unrounded K and V, at odd sizes, with a window and a softcap, into poisoned outputs.
TEST_F(KernelsModel, F32KvCacheStoreRopeAndAttention) {
  const uint32_t heads = 6, kvh = 2, hd = 20, ctx = 41, rows = 3, pos0 = 23, kvd = kvh * hd, n = pos0 + rows;
  const float scale = 0.3f, cap = 5.0f;
  auto k = random_floats(n * kvd), v = random_floats(n * kvd);
  auto kc = poisoned(ctx * kvd * 4), vc = poisoned(ctx * kvd * 4);
  // Positions [0, pos0) through kv_store_f32, the last `rows` through the fused RoPE + append.
  std::vector<float> k0(k.begin(), k.begin() + pos0 * kvd), v0(v.begin(), v.begin() + pos0 * kvd);
  auto bk0 = upload(k0), bv0 = upload(v0), s0 = state(0);
  run("kv_store_f32", {{0, &bk0}, {1, &kc}, {2, &s0}}, KvStoreParams{pos0, kvd, 0, 0}, (kvd + 127) / 128, pos0);
  run("kv_store_f32", {{0, &bv0}, {1, &vc}, {2, &s0}}, KvStoreParams{pos0, kvd, 0, 0}, (kvd + 127) / 128, pos0);
  auto cache = download<float>(kc, ctx * kvd);
  for (uint32_t i = 0; i < pos0 * kvd; ++i) ASSERT_EQ(cache[i], k[i]) << i;
  std::vector<float> f(hd / 2);
  for (uint32_t i = 0; i < hd / 2; ++i) f[i] = float(1.0 / std::pow(10000.0, 2.0 * i / hd));
  auto q = random_floats(rows * heads * hd);
  std::vector<float> kt(k.begin() + pos0 * kvd, k.end()), vt(v.begin() + pos0 * kvd, v.end());
  auto bq = upload(q), bkt = upload(kt), bvt = upload(vt), bf = upload(f), sp = state(pos0);
  run("rope_kv_f32kv", {{0, &bq}, {1, &bkt}, {2, &bvt}, {3, &bf}, {4, &sp}, {5, &kc}, {6, &vc}},
      RopeKvParams{rows, heads, kvh, hd}, heads + 2 * kvh, rows);
  // The k rows went to the cache rotated (as rope_f32 rotates them) and as exact floats, v unrotated;
  // rows past pos0 + rows untouched.
  auto bkr = upload(kt);
  run("rope_f32", {{0, &bkr}, {1, &bf}, {2, &sp}}, RopeParams{rows, kvh, hd, hd}, kvh, rows);
  auto kr = download<float>(bkr, kt.size());
  cache = download<float>(kc, ctx * kvd);
  auto vcache = download<float>(vc, ctx * kvd);
  for (uint32_t i = 0; i < rows * kvd; ++i) {
    ASSERT_EQ(cache[pos0 * kvd + i], kr[i]) << i;
    ASSERT_EQ(vcache[pos0 * kvd + i], vt[i]) << i;
  }
  uint32_t poison;
  std::memcpy(&poison, &cache[n * kvd], 4);
  EXPECT_EQ(poison, 0xffffffffu);
  std::copy(kr.begin(), kr.end(), k.begin() + pos0 * kvd);
  auto qr = download<float>(bq, q.size());
  for (uint32_t window : {0u, 7u}) {
    auto out = poisoned(rows * heads * hd * 4), scores = poisoned(rows * heads * ctx * 4), bqr = upload(qr);
    run("attention_f32kv", {{0, &bqr}, {1, &kc}, {2, &vc}, {3, &out}, {4, &scores}, {5, &sp}},
        AttentionParams{rows, heads, kvh, hd, ctx, window, scale, cap}, heads, rows);
    auto ref = attention_ref(qr, k, v, rows, heads, kvh, hd, pos0, window, scale, cap, true);
    EXPECT_LT(nmse(download<float>(out, rows * heads * hd), ref), 1e-12) << "window " << window;
    // Decode: the last row alone through the split kernel (3 splits).
    const uint32_t splits = 3, last = n - 1;
    std::vector<float> ql(qr.end() - heads * hd, qr.end());
    auto bql = upload(ql), outl = poisoned(heads * hd * 4), part = poisoned(heads * splits * (hd + 2) * 4);
    auto count = upload(std::vector<uint32_t>(heads, 0)), sl = state(last);
    run("attention_split_f32kv", {{0, &bql}, {1, &kc}, {2, &vc}, {3, &outl}, {4, &part}, {5, &count}, {6, &sl}},
        AttentionSplitParams{heads, kvh, hd, splits, window, scale, cap, 0}, heads, splits);
    auto refl = attention_ref(ql, k, v, 1, heads, kvh, hd, last, window, scale, cap, true);
    EXPECT_LT(nmse(download<float>(outl, heads * hd), refl), 1e-12) << "split, window " << window;
  }
}

// The tiled prefill attention (16 query rows per workgroup, K/V tiles of 32 keys, online softmax) against
// float64: row counts that leave the last block partly empty, a start position inside a tile, GQA,
// sliding window, softcap, head_dim 20 (5 of 16 lanes own output) and 128 (the largest it takes).
TEST_F(KernelsModel, TiledAttentionMatchesFloat64) {
  struct TCase {
    uint32_t hd, rows, pos0, window;
    float cap;
  };
  for (TCase t : {TCase{20, 37, 21, 0, 5.0f}, TCase{20, 37, 21, 7, 0.0f}, TCase{128, 50, 3, 0, 0.0f},
                  TCase{128, 16, 70, 40, 30.0f}, TCase{64, 1, 0, 0, 0.0f}}) {
    const uint32_t heads = 6, kvh = 2, hd = t.hd, rows = t.rows, pos0 = t.pos0, ctx = pos0 + rows + 5;
    const uint32_t kvd = kvh * hd, n = pos0 + rows;
    const float scale = 1.0f / std::sqrt(float(hd));
    std::vector<float> k = random_floats(n * kvd, -2, 2), v = random_floats(n * kvd), q = random_floats(rows * heads * hd, -2, 2);
    std::vector<uint16_t> kh(ctx * kvd, 0xffff), vh(ctx * kvd, 0xffff);
    for (size_t i = 0; i < k.size(); ++i) kh[i] = float_to_half(k[i]), vh[i] = float_to_half(v[i]);
    auto kc = upload(kh), vc = upload(vh), bq = upload(q), out = poisoned(rows * heads * hd * 4), sp = state(pos0);
    run("attention_tiled_f16kv", {{0, &bq}, {1, &kc}, {2, &vc}, {3, &out}, {5, &sp}},
        AttentionParams{rows, heads, kvh, hd, ctx, t.window, scale, t.cap}, heads, (rows + 15) / 16);
    auto got = download<float>(out, rows * heads * hd);
    auto ref = attention_ref(q, k, v, rows, heads, kvh, hd, pos0, t.window, scale, t.cap);
    EXPECT_LT(nmse(got, ref), 1e-10) << "hd " << hd << " rows " << rows << " pos0 " << pos0 << " window " << t.window;
  }
}

// The tensor-core prefill attention (attention_fa_f16kv_hd64 / _hd128: 16 rows per subgroup, one pass,
// Q and P in f16) against float64 over f16-rounded Q: ragged row blocks, start positions inside a
// 16-key fragment, GQA, window and softcap, and cache rows past the last position filled with NaN (the
// edge fragment must not read them into a product). Only where the device has cooperative matrices.
TEST_F(KernelsModel, TensorCoreAttentionMatchesFloat64) {
  if (!device().has_coopmat_f16())
    GTEST_SKIP()
        << device().adapter().name << " has no cooperative matrices (VK_NV_cooperative_matrix): the "
        << "tensor-core attention cannot run here (the tiled attention it falls back to is tested above)";
  struct TCase {
    uint32_t hd, rows, pos0, window;
    float cap;
  };
  // The last two: several workgroups of rows, a window that skips whole K/V blocks, ragged last blocks.
  for (TCase t : {TCase{64, 37, 0, 0, 0.0f}, TCase{64, 100, 21, 0, 5.0f}, TCase{128, 50, 3, 0, 0.0f},
                  TCase{128, 130, 70, 40, 30.0f}, TCase{128, 1, 0, 0, 0.0f}, TCase{64, 64, 16, 7, 0.0f},
                  TCase{128, 300, 5, 0, 0.0f}, TCase{64, 257, 33, 100, 0.0f}}) {
    const uint32_t heads = 6, kvh = 2, hd = t.hd, rows = t.rows, pos0 = t.pos0, ctx = pos0 + rows + 37;
    const uint32_t kvd = kvh * hd, n = pos0 + rows;
    const float scale = 1.0f / std::sqrt(float(hd));
    std::vector<float> k = random_floats(n * kvd, -2, 2), v = random_floats(n * kvd),
                       q = random_floats(rows * heads * hd, -2, 2);
    std::vector<uint16_t> kh(ctx * kvd, 0x7e00), vh(ctx * kvd, 0x7e00);  // NaN past the last position
    for (size_t i = 0; i < k.size(); ++i) kh[i] = float_to_half(k[i]), vh[i] = float_to_half(v[i]);
    auto kc = upload(kh), vc = upload(vh), bq = upload(q), out = poisoned(rows * heads * hd * 4),
         sp = state(pos0);
    const std::string name = "attention_fa_f16kv_hd" + std::to_string(hd);
    run(name.c_str(), {{0, &bq}, {1, &kc}, {2, &vc}, {3, &out}, {5, &sp}},
        AttentionParams{rows, heads, kvh, hd, ctx, t.window, scale, t.cap}, heads, (rows + 63) / 64);
    auto got = download<float>(out, rows * heads * hd);
    std::vector<float> qh(q.size());
    for (size_t i = 0; i < q.size(); ++i) qh[i] = float(round_half(q[i]));
    auto ref = attention_ref(qh, k, v, rows, heads, kvh, hd, pos0, t.window, scale, t.cap);
    // P in f16 (unit roundoff 2^-11) weighs each value: a relative error of ~2^-11 / sqrt(3) per term,
    // an nmse of ~1e-7 at most; a wrong index or a NaN gives ~1 or NaN.
    EXPECT_LT(nmse(got, ref), 1e-6) << "hd " << hd << " rows " << rows << " pos0 " << pos0 << " window "
                                    << t.window;
    // The _f16o variant (the o projection's f16 input): the same values rounded to f16 as to_f16 rounds them, bit
    // for bit, and nothing written past the last row (an f16 buffer poisoned one row further).
    const uint32_t n16 = rows * heads * hd, pad = heads * hd;
    auto out16 = upload(std::vector<uint16_t>(n16 + pad, 0x7e01));
    run((name + "_f16o").c_str(), {{0, &bq}, {1, &kc}, {2, &vc}, {3, &out16}, {5, &sp}},
        AttentionParams{rows, heads, kvh, hd, ctx, t.window, scale, t.cap}, heads, (rows + 63) / 64);
    auto got16 = download<uint16_t>(out16, n16 + pad);
    size_t wrong = 0;
    for (uint32_t i = 0; i < n16; ++i) wrong += got16[i] != float_to_half(got[i]);
    for (uint32_t i = n16; i < n16 + pad; ++i) wrong += got16[i] != 0x7e01;
    EXPECT_EQ(wrong, 0u) << "f16o hd " << hd << " rows " << rows << " pos0 " << pos0 << " window " << t.window;
  }
}

// Split-context decode attention against float64: idle workgroups (pos 0 with 3 or 10 splits), chunks
// that end mid-window, chunks longer than the minimum (300 positions in 3 splits), 20 splits (merges of
// more than one round), a sliding window, softcap, head_dim 20 (idle invocations) and 256 (one group),
// repeated dispatches (the per-head arrival count must return to zero), and GPT-OSS's sinks (a per-head
// logit in the softmax's sum).
TEST_F(KernelsModel, SplitAttentionMatchesFloat64) {
  struct Case { uint32_t heads, kvh, hd, ctx, splits; };
  for (Case c :
       {Case{6, 2, 20, 300, 3}, Case{6, 2, 20, 300, 10}, Case{4, 1, 256, 131, 2}, Case{4, 2, 32, 1300, 20}}) {
    const uint32_t kvd = c.kvh * c.hd, splits = c.splits;
    const float scale = 0.3f, cap = 5.0f;
    auto k = random_floats(c.ctx * kvd), v = random_floats(c.ctx * kvd);
    auto kc = poisoned(c.ctx * kvd * 2), vc = poisoned(c.ctx * kvd * 2);
    auto bk = upload(k), bv = upload(v), s0 = state(0);
    const KvStoreParams kp{c.ctx, kvd, 0, 0};
    run("kv_store_f16", {{0, &bk}, {1, &kc}, {2, &s0}}, kp, (kvd + 127) / 128, c.ctx);
    run("kv_store_f16", {{0, &bv}, {1, &vc}, {2, &s0}}, kp, (kvd + 127) / 128, c.ctx);
    auto part = poisoned(c.heads * splits * (c.hd + 2) * 4);
    auto count = upload(std::vector<uint32_t>(c.heads, 0));
    for (uint32_t pos : {0u, 5u, c.ctx / 2, c.ctx - 1})
      for (uint32_t window : {0u, 7u})
        for (bool with_sinks : {false, true}) {
          auto q = random_floats(c.heads * c.hd), sinks = random_floats(c.heads);
          auto bq = upload(q), out = poisoned(c.heads * c.hd * 4), sp = state(pos), bsinks = upload(sinks);
          const float softcap = window ? cap : 0.0f;
          const AttentionSplitParams ap{c.heads, c.kvh, c.hd, splits, window, scale, softcap, 0};
          std::vector<gpu::BindGroupEntry> e = {{0, &bq},   {1, &kc},    {2, &vc}, {3, &out},
                                                {4, &part}, {5, &count}, {6, &sp}};
          if (with_sinks) e.push_back({7, &bsinks});
          const char* kernel = with_sinks ? "attention_split_f16kv_sinks" : "attention_split_f16kv";
          run_once(kernels().get(kernel), e, ap, c.heads, splits);
          auto got = download<float>(out, c.heads * c.hd);
          std::vector<double> ref(got.size());
          for (uint32_t h = 0; h < c.heads; ++h) {
            uint32_t g = h / (c.heads / c.kvh), lo = window && pos + 1 > window ? pos + 1 - window : 0;
            std::vector<double> sc(pos + 1);
            double mx = -1e300, sum = 0;
            for (uint32_t j = lo; j <= pos; ++j) {
              double d = 0;
              for (uint32_t i = 0; i < c.hd; ++i)
                d += q[h * c.hd + i] * round_half(k[j * kvd + g * c.hd + i]);
              sc[j] = window ? cap * std::tanh(d * scale / cap) : d * scale;
              mx = std::max(mx, sc[j]);
            }
            if (with_sinks) mx = std::max(mx, double(sinks[h]));
            for (uint32_t j = lo; j <= pos; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
            if (with_sinks) sum += std::exp(sinks[h] - mx);
            for (uint32_t i = 0; i < c.hd; ++i) {
              double a = 0;
              for (uint32_t j = lo; j <= pos; ++j) a += sc[j] * round_half(v[j * kvd + g * c.hd + i]);
              ref[h * c.hd + i] = a / sum;
            }
          }
          EXPECT_LT(nmse(got, ref), 1e-10) << "hd " << c.hd << " splits " << splits << " pos " << pos
                                           << " window " << window << " sinks " << with_sinks;
          // The _gqa variant (a kv head's query heads in one workgroup; the long-context decode's): the same values,
          // from a fresh poison.
          if (with_sinks || c.heads / c.kvh > 4) continue;
          auto out_g = poisoned(c.heads * c.hd * 4);
          e[3] = {3, &out_g};
          run_once(kernels().get("attention_split_f16kv_gqa"), e, ap, c.kvh, splits);
          EXPECT_LT(nmse(download<float>(out_g, c.heads * c.hd), ref), 1e-10)
              << "gqa: hd " << c.hd << " splits " << splits << " pos " << pos << " window " << window;
        }
    EXPECT_EQ(download<uint32_t>(count, c.heads), std::vector<uint32_t>(c.heads, 0));
  }
}

// The sampler (sample.comp) against a float64 reference of HF's warpers: repetition penalty, temperature,
// top-k (ties at the k-th value kept), top-p of what top-k kept (HF renormalizes between them), min-p,
// then the kernel's draw: u = (Philox4x32-10(step, seed).x >> 8 + 0.5) / 2^24 of the kept mass, walked
// in token order. A draw within 1e-4 of a boundary between two tokens accepts either; logits that put
// a threshold within rounding of a value are redrawn. Also the step bookkeeping (ring, history, state).
namespace {
std::array<uint32_t, 4> philox_ref(std::array<uint32_t, 4> c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k1, uint32_t(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

struct SampleRef {
  std::vector<uint32_t> ok;  // acceptable tokens (more than one only at a boundary)
  bool ambiguous = false;    // a threshold within rounding of a logit: redraw the logits
};

SampleRef sample_ref(std::vector<float> l, const std::vector<uint32_t>& hist, const kparams::SampleParams& p, uint32_t step) {
  SampleRef out;
  const uint32_t V = p.vocab;
  if (p.repeat_penalty != 1.0f)
    for (uint32_t t : std::set<uint32_t>(hist.begin(), hist.end())) l[t] = l[t] > 0 ? l[t] / p.repeat_penalty : l[t] * p.repeat_penalty;
  float inv_t = p.temperature > 0 ? 1.0f / p.temperature : 1.0f;
  for (auto& v : l) v *= inv_t;
  uint32_t arg = uint32_t(std::max_element(l.begin(), l.end()) - l.begin());  // first maximum
  if (p.temperature <= 0) return {{arg}, false};
  double mx = l[arg];
  std::vector<float> sorted(l);
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  auto near = [&](double t) {  // some logit within rounding of the threshold t
    for (float v : l)
      if (std::abs(v - t) < 1e-4) return true;
    return false;
  };
  double t = mx - 1e4;
  if (p.top_k > 0 && p.top_k < V) t = std::max<double>(t, sorted[p.top_k - 1]);
  if (p.top_p > 0 && p.top_p < 1) {
    double total = 0, cum = 0;
    for (float v : sorted)
      if (v >= t) total += std::exp(v - mx);
    for (float v : sorted) {
      if (v < t) break;
      cum += std::exp(v - mx);
      if (cum >= p.top_p * total) {
        out.ambiguous |= std::abs(cum - p.top_p * total) < 1e-5 * total ||
                         std::abs(cum - std::exp(v - mx) - p.top_p * total) < 1e-5 * total;
        t = std::max<double>(t, v);
        break;
      }
    }
  }
  if (p.min_p > 0) {
    double m = double(float(mx) + std::log(p.min_p));
    out.ambiguous |= near(m);
    t = std::max(t, m);
  }
  double kept = 0;
  for (float v : l)
    if (v >= t) kept += std::exp(v - mx);
  auto r = philox_ref({step, 0u, 0x5eed5eedu, 0u}, p.seed_lo, p.seed_hi);
  double u = (double(r[0] >> 8) + 0.5) / 16777216.0 * kept, acc = 0, eps = 1e-4 * kept;
  for (uint32_t i = 0; i < V; ++i) {
    if (l[i] < t) continue;
    double next = acc + std::exp(l[i] - mx);
    if (u >= acc - eps && u < next + eps) out.ok.push_back(i);
    acc = next;
  }
  return out;
}
}  // namespace

TEST_F(KernelsModel, SamplerMatchesFloat64Reference) {
  struct SCase {
    float temperature;
    uint32_t top_k;
    float top_p, min_p, penalty;
  };
  const SCase cases[] = {{0, 0, 1, 0, 1},     {0, 0, 1, 0, 1.3f},   {0.7f, 0, 1, 0, 1},    {1, 40, 1, 0, 1},
                         {0.9f, 0, 0.8f, 0, 1}, {1, 50, 0.6f, 0, 1}, {1.2f, 0, 1, 0.05f, 1}, {1, 30, 0.9f, 0.02f, 1.2f}};
  const uint32_t wg = std::min<uint32_t>({1024u, 64u * device().subgroupSize(), device().adapter().max_workgroup_invocations});
  static gpu::KernelCache wgsl(device(), gpu::KernelSource::wgsl);  // the WGSL twin must sample the same way
  const gpu::ComputePipeline* glsl_sampler = &kernels().get("sample", {{0, wg}});
  // serve's batched decode samples with its options in a buffer (binding 8) instead of push constants.
  const gpu::ComputePipeline* slot_sampler = &kernels().get("sample_slots", {{0, wg}});
  for (const gpu::ComputePipeline* pp : {glsl_sampler, &wgsl.get("sample", {{0, wg}}), slot_sampler})
    for (uint32_t V : {1000u, 4099u, 32001u})
      for (const SCase& c : cases)
        for (uint32_t draw = 0; draw < 3; ++draw) {
          const uint32_t pos = 20 + draw, ring_size = 64, n = 5, step = uint32_t(rng()());
          kparams::SampleParams p{V, c.top_k, c.temperature, c.top_p, c.min_p, c.penalty, uint32_t(rng()()), uint32_t(rng()()),
                                  100, 1, 0, ring_size};
          std::vector<float> logits;
          SampleRef ref;
          std::vector<uint32_t> hist(pos + 2, 0);
          for (int tries = 0; tries < 20; ++tries) {
            logits = random_floats(V, -8.0f, 8.0f);
            for (uint32_t i = 0; i <= pos; ++i) hist[i] = uint32_t(rng()() % V);
            ref = sample_ref(logits, std::vector<uint32_t>(hist.begin(), hist.begin() + pos + 1), p, step);
            if (!ref.ambiguous) break;
          }
          ASSERT_FALSE(ref.ambiguous);
          auto bl = upload(logits), bst = upload(std::vector<uint32_t>{7, pos, 0, n, step, 0, 0, 0});
          auto bh = upload(hist), bring = upload(std::vector<uint32_t>(ring_size + 2, 0xffffffffu));
          auto beos = upload(std::vector<uint32_t>{V + 1, 0xffffffffu});  // an EOS no draw can hit
          auto bseen = upload(std::vector<uint32_t>(V / 32 + 1, 0)), btok = upload(std::vector<uint32_t>{0}),
               bctl = upload(std::vector<uint32_t>{0});
          std::vector<gpu::BindGroupEntry> e = {{0, &bl},   {1, &bst},   {2, &bh},  {3, &bring},
                                                {4, &beos}, {5, &bseen}, {6, &btok}, {7, &bctl}};
          if (pp == slot_sampler) {
            auto bp = upload(std::vector<kparams::SampleParams>{p});
            e.push_back({8, &bp});
            auto bg = device().createBindGroup(*pp, 0, e);
            auto enc = device().createCommandEncoder("sample_slots");
            auto pass = enc.beginComputePass();
            pass.setPipeline(*pp);
            pass.setBindGroup(0, bg);
            pass.dispatchWorkgroups(1);
            auto cb = enc.finish();
            device().queue().wait(device().queue().submit(cb));
          } else {
            run_once(*pp, e, p, 1);
          }
          auto ring = download<uint32_t>(bring, ring_size + 2);
          uint32_t tok = ring[2 + n];
          EXPECT_NE(std::find(ref.ok.begin(), ref.ok.end(), tok), ref.ok.end())
              << "V " << V << " T " << c.temperature << " top_k " << c.top_k << " top_p " << c.top_p << " min_p " << c.min_p
              << " penalty " << c.penalty << " (" << (pp == glsl_sampler ? "GLSL" : pp == slot_sampler ? "slot" : "WGSL") << " sampler): drew " << tok << ", reference " << (ref.ok.empty() ? -1 : int(ref.ok[0]))
              << " seed=" << test_seed();
          auto st = download<uint32_t>(bst, 5);
          EXPECT_EQ(st[0], tok);
          EXPECT_EQ(st[1], pos + 1);
          EXPECT_EQ(st[2], 0u);
          EXPECT_EQ(st[3], n + 1);
          EXPECT_EQ(st[4], step + 1);
          EXPECT_EQ(ring[0], n + 1);
          EXPECT_EQ(download<uint32_t>(bh, pos + 2)[pos + 1], tok);
          EXPECT_EQ(download<uint32_t>(btok, 1)[0], tok);
          auto seen = download<uint32_t>(bseen, V / 32 + 1);
          EXPECT_EQ(std::count(seen.begin(), seen.end(), 0u), long(seen.size())) << "the penalty bitmap is left clear";
        }
}

// Greedy decoding's argmax in two dispatches (argmax_parts over slices of the vocabulary, then sample_parts):
// torch.argmax's pick (the lowest id of the largest logit) for odd vocabularies and slice counts, with the largest
// value repeated across slices, -inf logits, all logits equal, and the slices' buffer poisoned first. The step's
// bookkeeping as the one-workgroup sampler does it, and the slices' keys left 0 (none).
TEST_F(KernelsModel, GreedyArgmaxInSlicesTakesTheFirstMaximum) {
  const uint32_t wg = std::min<uint32_t>({256u, 64u * device().subgroupSize(), device().adapter().max_workgroup_invocations});
  const auto& sampler = kernels().get("sample_parts", {{0, wg}});
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t V : {1u, 1000u, 4099u, 32001u, 128256u})
    for (uint32_t slices : {1u, 7u, (V + 2047) / 2048})
      for (int form = 0; form < 4; ++form) {
        std::vector<float> logits = random_floats(V, -8.0f, 8.0f);
        if (form == 1 && V > 3) {  // the largest value at several ids, the first of them in a later slice
          for (uint32_t i = 0; i < 4; ++i) logits[V - 1 - rng()() % (V / 2)] = 9.5f;
          logits[V / 2 + rng()() % (V / 2)] = 9.5f;
        }
        if (form == 2) {  // -inf logits (masked tokens) around finite ones (one at least)
          const uint32_t keep = uint32_t(rng()() % V);
          for (uint32_t i = 0; i < V; ++i)
            if (i != keep && rng()() % 3 != 0) logits[i] = -inf;
        }
        if (form == 3) std::fill(logits.begin(), logits.end(), 0.25f);  // every id ties: 0
        const uint32_t want = uint32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
        const uint32_t pos = 11, n = 2, step = 5;
        // Key g at word g * stride, 3 keys more than argmax_parts writes (a head's slices are more than its), 0 as the
        // last sampler left them; the rest poisoned.
        const uint32_t stride = kparams::kArgmaxKeyStride;
        std::vector<uint64_t> words((slices + 3) * stride, ~uint64_t(0));
        for (uint32_t g = slices; g < slices + 3; ++g) words[g * stride] = 0;
        auto bl = upload(logits), parts = upload(words);
        run_once(kernels().get("argmax_parts", {{0, 256}}), {{0, &bl}, {1, &parts}}, ArgmaxParams{V, 0, 0, 0}, slices);
        auto bst = upload(std::vector<uint32_t>{7, pos, 0, n, step, 0, 0, 0});
        auto bh = upload(std::vector<uint32_t>(pos + 2, 0)), bring = upload(std::vector<uint32_t>(16 + 2, 0xffffffffu));
        auto beos = upload(std::vector<uint32_t>{V + 1}), bseen = upload(std::vector<uint32_t>(V / 32 + 1, 0)),
             btok = upload(std::vector<uint32_t>{0}), bctl = upload(std::vector<uint32_t>{0});
        kparams::SampleParams p{V, 0, 0.0f, 1.0f, 0.0f, 1.0f, 0, 0, 100, 1, 0, 16};
        run_once(sampler, {{9, &parts}, {1, &bst}, {2, &bh}, {3, &bring}, {4, &beos}, {5, &bseen}, {6, &btok}, {7, &bctl}}, p, 1);
        const uint32_t tok = download<uint32_t>(bring, 18)[2 + n];
        EXPECT_EQ(tok, want) << "V " << V << " slices " << slices << " form " << form << " seed=" << test_seed();
        auto st = download<uint32_t>(bst, 5);
        EXPECT_EQ(st[0], tok);
        EXPECT_EQ(st[1], pos + 1);
        EXPECT_EQ(st[3], n + 1);
        EXPECT_EQ(st[4], step + 1);
        EXPECT_EQ(download<uint32_t>(bh, pos + 2)[pos + 1], tok);
        EXPECT_EQ(download<uint32_t>(btok, 1)[0], tok);
        auto left = download<uint64_t>(parts, words.size());  // cleared for a head that maxes into them (*_argmax)
        for (uint32_t g = 0; g < slices + 3; ++g) EXPECT_EQ(left[g * stride], 0u) << "V " << V << " slices " << slices;
      }
}

TEST_F(KernelsModel, GatedActivationsBiasAndSoftcap) {
  const uint32_t n = 1237;
  auto g = random_floats(n, -4, 4), u = random_floats(n);
  auto bg = upload(g), bu = upload(u);
  for (uint32_t act : {0u, 1u}) {
    auto h = poisoned(n * 4);
    run("gated_act_f32", {{0, &bg}, {1, &bu}, {2, &h}}, GatedActParams{n, act, 0, 0}, (n + 255) / 256);
    auto got = download<float>(h, n);
    std::vector<double> ref(n);
    for (uint32_t i = 0; i < n; ++i) {
      double x = g[i];
      double a = act == 0 ? x / (1 + std::exp(-x)) : 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      ref[i] = a * u[i];
    }
    EXPECT_LT(nmse(got, ref), 1e-11) << "act " << act;
  }
  const uint32_t rows = 3, m = 301;
  auto y = random_floats(rows * m), b = random_floats(m);
  auto by = upload(y), bb = upload(b);
  run("add_bias_f32", {{0, &by}, {1, &bb}}, BiasParams{m, rows, 0, 0}, (m + 255) / 256, rows);
  auto yb = download<float>(by, y.size());
  std::vector<double> ref(y.size());
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t i = 0; i < m; ++i) ref[r * m + i] = double(y[r * m + i]) + b[i];
  EXPECT_LT(nmse(yb, ref), 1e-13);
  auto x = random_floats(n, -60, 60);
  auto bx = upload(x);
  run("softcap_f32", {{0, &bx}}, SoftcapParams{n, 30.0f, 0, 0}, (n + 255) / 256);
  auto xs = download<float>(bx, n);
  std::vector<double> rs(n);
  for (uint32_t i = 0; i < n; ++i) rs[i] = 30.0 * std::tanh(x[i] / 30.0);
  EXPECT_LT(nmse(xs, rs), 1e-11);
}

}  // namespace
}  // namespace bs::testing
