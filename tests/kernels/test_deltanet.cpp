// Qwen 3.5's kernels against float64 references (runtime/model/reference_qwen35.cpp, the CPU forward's own):
//   conv_silu_f32        causal depthwise conv + SiLU with the carried conv state;
//   delta_rule_f32       the gated delta rule token by token + gated RMSNorm, carried recurrent state;
//   delta_rule_chunk_f32 the same in chunks (checked against float64 and against the step kernel);
//   attn_gate_*          the gated attention's split and sigmoid gate; rope_kv_f32 with a partial rotary width.
// Odd sizes, GQA-like head sharing, k_dim != v_dim, fresh random inputs, poisoned outputs, and both a new
// sequence (state.pos == 0: the old state must be ignored) and a continued one.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/model/model.h"
#include "runtime/model/reference_qwen35.h"
#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using namespace kparams;
using model::conv_silu_reference;
using model::delta_rule_reference;
using model::gated_norm_reference;

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

class DeltaNet : public GpuTest {
 protected:
  gpu::Buffer state(uint32_t pos) { return upload(std::vector<uint32_t>{0, pos, 0, 0}); }

  // Inputs of one delta-rule run; the reference's state starts as `s0` unless the run starts a sequence.
  struct Case {
    uint32_t rows, k_heads, v_heads, dk, dv, pos;
    std::vector<float> qkv, z, a, b, a_log, dt_bias, norm_w, s0;
  };
  Case make_case(uint32_t rows, uint32_t k_heads, uint32_t v_heads, uint32_t dk, uint32_t dv, uint32_t pos) {
    Case c{rows, k_heads, v_heads, dk, dv, pos, {}, {}, {}, {}, {}, {}, {}, {}};
    c.qkv = random_floats(size_t(rows) * (2 * k_heads * dk + v_heads * dv));
    c.z = random_floats(size_t(rows) * v_heads * dv, -2, 2);
    c.a = random_floats(size_t(rows) * v_heads, -3, 3);
    c.b = random_floats(size_t(rows) * v_heads, -3, 3);
    c.a_log = random_floats(v_heads, -1, 1);
    c.dt_bias = random_floats(v_heads, -1, 1);
    c.norm_w = random_floats(dv, 0.5f, 1.5f);
    c.s0 = random_floats(size_t(v_heads) * dk * dv, -0.5f, 0.5f);
    return c;
  }
  struct Result {
    std::vector<double> o, s;
  };
  Result reference(const Case& c) {
    Result r{std::vector<double>(size_t(c.rows) * c.v_heads * c.dv), c.pos == 0 ? std::vector<double>(c.s0.size(), 0.0)
                                                                                   : to_double(c.s0)};
    auto qkv = to_double(c.qkv), a = to_double(c.a), b = to_double(c.b), al = to_double(c.a_log),
         dt = to_double(c.dt_bias), z = to_double(c.z), w = to_double(c.norm_w);
    delta_rule_reference(qkv.data(), a.data(), b.data(), al.data(), dt.data(), int(c.rows), int(c.k_heads),
                         int(c.v_heads), int(c.dk), int(c.dv), r.s.data(), r.o.data());
    gated_norm_reference(r.o.data(), z.data(), w.data(), int(c.rows * c.v_heads), int(c.dv), 1e-6);
    return r;
  }
  // chunk 0: delta_rule_f32; else delta_rule_chunk_f32 with that many tokens per chunk.
  std::pair<std::vector<float>, std::vector<float>> run_gpu(const Case& c, uint32_t chunk) {
    auto qkv = upload(c.qkv), z = upload(c.z), a = upload(c.a), b = upload(c.b), al = upload(c.a_log),
         dt = upload(c.dt_bias), w = upload(c.norm_w), s = upload(c.s0), st = state(c.pos);
    auto o = poisoned(size_t(c.rows) * c.v_heads * c.dv * 4);
    std::vector<gpu::SpecConstant> spec = {{0, c.dv}, {1, c.dk}};
    if (chunk) spec.push_back({2, chunk});
    run_once(kernels().get(chunk ? "delta_rule_chunk_f32" : "delta_rule_f32", spec),
             {{0, &qkv}, {1, &z}, {2, &a}, {3, &b}, {4, &al}, {5, &dt}, {6, &w}, {7, &s}, {8, &st}, {9, &o}},
             DeltaRuleParams{c.rows, c.k_heads, c.v_heads, 0, 1e-6f, float(1 / std::sqrt(double(c.dk))), 0, 0}, c.v_heads);
    return {download<float>(o, size_t(c.rows) * c.v_heads * c.dv), download<float>(s, c.s0.size())};
  }
};

TEST_F(DeltaNet, ConvSiluCarriesItsState) {
  for (uint32_t width : {4u, 3u, 1u})
    for (uint32_t pos : {0u, 9u}) {
      const uint32_t ch = 77, rows = width == 4 ? 2 : 11, h = width - 1;
      auto x = random_floats(size_t(rows) * ch, -2, 2), w = random_floats(size_t(ch) * width),
           cs = random_floats(std::max<size_t>(size_t(ch) * h, 1));
      std::vector<double> ref_state = pos ? to_double(cs) : std::vector<double>(cs.size(), 0.0), ref(x.size());
      auto xd = to_double(x), wd = to_double(w);
      conv_silu_reference(xd.data(), int(rows), int(ch), wd.data(), int(width), ref_state.data(), ref.data());
      auto bx = upload(x), bw = upload(w), bcs = upload(cs), st = state(pos), out = poisoned(x.size() * 4);
      run_once(kernels().get("conv_silu_f32"), {{0, &bx}, {1, &bw}, {2, &bcs}, {3, &st}, {4, &out}},
               ConvSiluParams{ch, rows, width, 0}, (ch + 63) / 64);
      EXPECT_LT(nmse(download<float>(out, x.size()), ref), 1e-10) << "width " << width << " pos " << pos;
      if (h) {
        std::vector<double> want(ref_state.begin(), ref_state.begin() + ch * h);
        EXPECT_LT(nmse(download<float>(bcs, size_t(ch) * h), want), 1e-12) << "conv state, width " << width << " pos " << pos;
      }
    }
}

TEST_F(DeltaNet, StepKernelMatchesFloat64) {
  struct S { uint32_t rows, kh, vh, dk, dv, pos; };
  for (S s : {S{1, 2, 6, 24, 40, 0}, S{1, 2, 6, 24, 40, 17}, S{7, 1, 3, 36, 20, 5}, S{5, 2, 2, 32, 32, 0}, S{3, 1, 2, 20, 24, 0}}) {
    Case c = make_case(s.rows, s.kh, s.vh, s.dk, s.dv, s.pos);
    Result ref = reference(c);
    auto [o, st] = run_gpu(c, 0);
    EXPECT_LT(nmse(o, ref.o), 1e-9) << "rows " << s.rows << " pos " << s.pos << " seed " << test_seed();
    EXPECT_LT(nmse(st, ref.s), 1e-9) << "state, rows " << s.rows << " pos " << s.pos;
  }
}

// The chunked form against float64 and against the step kernel: row counts that end in a partial chunk,
// several chunks (the state carried between them), one chunk, a continued sequence and a new one.
TEST_F(DeltaNet, ChunkKernelMatchesStepKernelAndFloat64) {
  struct S { uint32_t rows, kh, vh, dk, dv, pos, chunk; };
  for (S s : {S{45, 2, 6, 24, 40, 0, 16}, S{45, 2, 6, 24, 40, 33, 8}, S{13, 1, 3, 36, 20, 0, 32},
              S{70, 2, 4, 32, 32, 3, 32}}) {
    Case c = make_case(s.rows, s.kh, s.vh, s.dk, s.dv, s.pos);
    Result ref = reference(c);
    auto [o_step, st_step] = run_gpu(c, 0);
    auto [o, st] = run_gpu(c, s.chunk);
    std::string what = "rows " + std::to_string(s.rows) + " chunk " + std::to_string(s.chunk) + " pos " +
                       std::to_string(s.pos) + " seed " + std::to_string(test_seed());
    EXPECT_LT(nmse(o, ref.o), 1e-9) << what;
    EXPECT_LT(nmse(st, ref.s), 1e-9) << "state, " << what;
    EXPECT_LT(nmse(o, to_double(o_step)), 1e-9) << "vs step kernel, " << what;
    EXPECT_LT(nmse(st, to_double(st_step)), 1e-9) << "state vs step kernel, " << what;
  }
}

TEST_F(DeltaNet, ChunkSizeFitsSharedMemory) {
  EXPECT_EQ(model::delta_chunk(32, 32768), 32u);   // qwen35-tiny on lavapipe
  EXPECT_EQ(model::delta_chunk(128, 32768), 16u);
  EXPECT_EQ(model::delta_chunk(128, 49152), 32u);  // Qwen 3.5 0.8B on an NVIDIA GPU
  EXPECT_EQ(model::delta_chunk(256, 8192), 0u);
}

TEST_F(DeltaNet, AttentionGateSplitAndApply) {
  const uint32_t rows = 3, heads = 5, hd = 36, n = rows * heads * hd;
  auto qg = random_floats(2 * n), x = random_floats(n);
  auto bqg = upload(qg), q = poisoned(n * 4), g = poisoned(n * 4);
  run_once(kernels().get("attn_gate_split_f32"), {{0, &bqg}, {1, &q}, {2, &g}}, AttnGateParams{n, hd, 0, 0},
           (n + 255) / 256);
  std::vector<double> rq(n), rg(n), rx(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t src = (i / hd) * 2 * hd + i % hd;
    rq[i] = qg[src];
    rg[i] = qg[src + hd];
    rx[i] = x[i] / (1 + std::exp(-double(qg[src + hd])));
  }
  EXPECT_EQ(nmse(download<float>(q, n), rq), 0.0);
  EXPECT_EQ(nmse(download<float>(g, n), rg), 0.0);
  auto bx = upload(x);
  run_once(kernels().get("attn_gate_apply_f32"), {{0, &bx}, {1, &g}}, AttnGateParams{n, hd, 0, 0}, (n + 255) / 256);
  EXPECT_LT(nmse(download<float>(bx, n), rx), 1e-12);
}

// Partial rotary: the first rot dims of each q / k head rotate (rotate-half within them), the rest pass
// through into q and the f16 k cache unchanged.
TEST_F(DeltaNet, RopeKvPartialRotary) {
  const uint32_t rows = 3, heads = 4, kvh = 2, hd = 36, rot = 12, ctx = 19, pos0 = 7, kvd = kvh * hd;
  auto q = random_floats(rows * heads * hd), k = random_floats(rows * kvd), v = random_floats(rows * kvd);
  std::vector<float> f(rot / 2);
  for (uint32_t i = 0; i < rot / 2; ++i) f[i] = float(1.0 / std::pow(10000.0, 2.0 * i / rot));
  auto bq = upload(q), bk = upload(k), bv = upload(v), bf = upload(f), st = state(pos0);
  auto kc = poisoned(ctx * kvd * 2), vc = poisoned(ctx * kvd * 2);
  run_once(kernels().get("rope_kv_f32", {{0, rot}}), {{0, &bq}, {1, &bk}, {2, &bv}, {3, &bf}, {4, &st}, {5, &kc}, {6, &vc}},
           RopeKvParams{rows, heads, kvh, hd}, heads + 2 * kvh, rows);
  auto rotate = [&](const std::vector<float>& x, size_t base, uint32_t pos, std::vector<double>& out) {
    for (uint32_t i = 0; i < hd; ++i) out[base + i] = x[base + i];
    for (uint32_t i = 0; i < rot / 2; ++i) {
      double a = double(pos) * f[i], c = std::cos(a), s = std::sin(a);
      out[base + i] = x[base + i] * c - x[base + i + rot / 2] * s;
      out[base + i + rot / 2] = x[base + i + rot / 2] * c + x[base + i] * s;
    }
  };
  std::vector<double> rq(q.size()), rk(k.size());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t h = 0; h < heads; ++h) rotate(q, (size_t(r) * heads + h) * hd, pos0 + r, rq);
    for (uint32_t h = 0; h < kvh; ++h) rotate(k, (size_t(r) * kvh + h) * hd, pos0 + r, rk);
  }
  EXPECT_LT(nmse(download<float>(bq, q.size()), rq), 1e-10);
  auto cache = download<uint16_t>(kc, ctx * kvd);
  std::vector<float> got(rows * kvd);
  for (size_t i = 0; i < got.size(); ++i) got[i] = half_to_float(cache[pos0 * kvd + i]);
  EXPECT_LT(nmse(got, rk), 1e-6);  // f16 cache
  EXPECT_EQ(cache[(pos0 - 1) * kvd], 0xffff);  // rows outside [pos0, pos0 + rows) untouched
}

}  // namespace
}  // namespace bs::testing
