// The mixture-of-experts kernels (moe.comp, matvec_*_expert, matmul_*_expert) against float64 references:
// the router's top-k and weights (runtime/model/reference.h's moe_route, which the CPU forward uses) with
// exact ties, the expert matvec reading each slot's expert from a GPU buffer, the prefill grouping by expert
// and the grouped GEMMs over it, the activation with expert biases / GPT-OSS's clamped SwiGLU, the combine.
// Fresh random inputs, odd sizes, poisoned outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/model/reference.h"
#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using namespace kparams;

// The weight dtypes of experts: the dense ones and MXFP4 (GPT-OSS's).
const DType kExpertTypes[] = {DType::F16, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::MXFP4};
std::string suffix(DType t) { return t == DType::MXFP4 ? "mxfp4" : kernel_suffix(t); }

class Moe : public KernelTest {
 protected:
  // Router over `rows` tokens: W [E, D] f16, x [rows, D] normed by the folded ffn_norm (weights nw, offset 1 for
  // Gemma-style norms); `dup`: rows of W copied onto others (exact ties).
  void router(uint32_t E, uint32_t K, uint32_t D, uint32_t rows, bool norm, bool with_bias, bool dup) {
    auto wf = random_floats(size_t(E) * D);
    if (dup) {  // experts 2i and 2i + 1 are both expert i's row: every logit appears twice, exactly
      const auto orig = wf;
      for (uint32_t e = 0; e < E; ++e) std::copy_n(orig.begin() + size_t(e / 2) * D, D, wf.begin() + size_t(e) * D);
    }
    std::vector<uint16_t> wh(wf.size());
    for (size_t i = 0; i < wf.size(); ++i) wh[i] = float_to_half(wf[i]), wf[i] = half_to_float(wh[i]);
    auto x = random_floats(size_t(rows) * D, -3, 3);
    auto nw = random_floats(D);
    const float offset = D % 2 ? 1.0f : 0.0f, eps = 1e-5f;
    std::vector<double> xn(size_t(rows) * D);
    for (uint32_t t = 0; t < rows; ++t) {
      std::vector<double> xt(x.begin() + size_t(t) * D, x.begin() + size_t(t + 1) * D), w(nw.begin(), nw.end());
      model::rmsnorm(xt.data(), w.data(), int(D), eps, offset, xn.data() + size_t(t) * D);
    }
    auto bias = random_floats(E);
    if (dup) std::fill(bias.begin(), bias.end(), 0.25f);
    ModelConfig c;
    c.n_experts = int32_t(E), c.n_experts_used = int32_t(K), c.moe_norm_topk = norm;
    auto bw = upload(wh), bx = upload(x), bb = upload(bias), bn = upload(nw);
    auto bi = poisoned(size_t(rows) * K * 4), bwt = poisoned(size_t(rows) * K * 4), bxn = poisoned(xn.size() * 4);
    run_once(kernels().get("moe_router_f32", {{0, 64}}),
             {{0, &bw}, {1, &bx}, {2, &bb}, {3, &bi}, {4, &bwt}, {5, &bn}, {6, &bxn}},
             MoeRouterParams{D, E, K, (norm ? 1u : 0u) | (with_bias ? 2u : 0u), eps, offset, 0, 0}, rows);
    EXPECT_LT(nmse(download<float>(bxn, xn.size()), xn), 1e-12) << "xn";
    auto ids = download<uint32_t>(bi, size_t(rows) * K);
    auto wts = download<float>(bwt, size_t(rows) * K);
    const std::string where = fmt::format("E={} K={} D={} rows={} norm={} bias={} dup={} seed={}", E, K, D, rows, norm,
                                          with_bias, dup, test_seed());
    for (uint32_t t = 0; t < rows; ++t) {
      std::vector<double> logits(E);
      for (uint32_t e = 0; e < E; ++e) {
        double s = with_bias ? bias[e] : 0.0;
        for (uint32_t i = 0; i < D; ++i) s += double(wf[size_t(e) * D + i]) * xn[size_t(t) * D + i];
        logits[e] = s;
      }
      std::vector<int32_t> want_ids(K);
      std::vector<double> want_w(K);
      model::moe_route(c, logits.data(), want_ids.data(), want_w.data());
      for (uint32_t s = 0; s < K; ++s) {
        // A tie in float64 is a tie on the GPU only when the rows are identical (dup); random logits closer
        // than f32 rounding would make the order a coin toss: the reference's gap decides what is checked.
        bool clear = true;
        for (uint32_t j = 0; j < E && !dup; ++j)
          if (int32_t(j) != want_ids[s] && std::abs(logits[j] - logits[size_t(want_ids[s])]) < 1e-4) clear = false;
        if (clear) {
          EXPECT_EQ(ids[size_t(t) * K + s], uint32_t(want_ids[s])) << where << " row " << t << " slot " << s;
        }
        EXPECT_NEAR(wts[size_t(t) * K + s], want_w[s], 1e-5 * std::max(1.0, want_w[s])) << where << " row " << t;
      }
    }
  }
};

TEST_F(Moe, RouterTopKAndWeightsMatchFloat64) {
  for (bool norm : {true, false})
    for (bool with_bias : {false, true}) {
      router(4, 2, 256, 3, norm, with_bias, false);
      router(8, 2, 257, 5, norm, with_bias, false);
      router(37, 4, 100, 2, norm, with_bias, false);
      router(128, 8, 64, 1, norm, with_bias, false);
      router(256, 8, 33, 1, norm, with_bias, false);
    }
}

// Identical experts give bitwise-equal logits: the lower id wins every tie, as the reference's stable order.
TEST_F(Moe, RouterTiesGoToTheLowerExpert) {
  for (bool norm : {true, false}) {
    router(8, 2, 129, 3, norm, true, true);
    router(9, 4, 64, 2, norm, false, true);
    router(2, 2, 40, 1, norm, true, true);
    router(5, 1, 31, 2, norm, false, true);
  }
}

// matvec_*_expert: slot b multiplies rows row0 .. row0 + m of its expert (ids from a GPU buffer; W holds
// estride rows per expert, as the fused gate_up's gate and up halves) by x row b / x_div.
TEST_F(Moe, ExpertMatvecReadsItsExpertFromTheRouter) {
  const uint32_t E = 5, m = 37, k = 512, estride = 2 * m + 3;
  for (DType t : kExpertTypes)
    for (auto [slots, x_div, row0] : {std::tuple{2u, 2u, 0u}, std::tuple{8u, 1u, m + 3}, std::tuple{6u, 3u, 1u}}) {
      Weights w = random_weights(t, E * estride, k);
      auto x = with_nan_tail(random_floats(size_t(slots / x_div) * k));
      std::vector<uint32_t> ids(slots);
      for (auto& id : ids) id = uint32_t(rng()() % E);
      DotRef ref;
      for (uint32_t b = 0; b < slots; ++b) {
        auto r = dot_ref(w.dq.data() + (size_t(ids[b]) * estride + row0) * k, x.data() + size_t(b / x_div) * k, nullptr,
                         m, k, 1);
        ref.value.insert(ref.value.end(), r.value.begin(), r.value.end());
        ref.scale.insert(ref.scale.end(), r.scale.begin(), r.scale.end());
      }
      auto bw = upload(w.bytes), bx = upload(x), bi = upload(ids);
      auto by = poisoned(size_t(slots) * m * 4);
      run_once(kernels().get("matvec_" + suffix(t) + "_expert", {{0, 8}, {1, 4}}),
               {{0, &bw}, {1, &bx}, {2, &by}, {8, &bi}}, MoeMatvecParams{m, k, x_div, 0, 0, estride, row0, 0}, (m + 3) / 4, slots);
      EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), 1e-10)
          << suffix(t) << " slots=" << slots << " x_div=" << x_div << " seed=" << test_seed();
    }
}

// Prefill: moe_group orders the slots by expert (counts, offsets, perm), then matmul_*_expert multiplies
// each expert's gathered rows, tiles past an expert's count exiting; every slot's output row is checked.
TEST_F(Moe, GroupedExpertGemmCoversEverySlot) {
  const uint32_t E = 6, K = 2, m = 70, k = 256;
  for (DType t : kExpertTypes)
    for (uint32_t rows : {1u, 3u, 70u}) {
      const uint32_t slots = rows * K, tiles = (rows + 63) / 64;
      std::vector<uint32_t> ids(slots);
      for (uint32_t r = 0; r < rows; ++r) {  // k distinct experts per token, as the router gives
        ids[r * K] = uint32_t(rng()() % E);
        ids[r * K + 1] = (ids[r * K] + 1 + uint32_t(rng()() % (E - 1))) % E;
      }
      if (rows == 70)
        for (uint32_t r = 0; r < 66; ++r) ids[r * K] = 4;  // one expert with more than a tile of tokens
      Weights w = random_weights(t, E * m, k);
      auto x = random_floats(size_t(rows) * k);
      auto bi = upload(ids), bw = upload(w.bytes), bx = upload(x);
      auto bc = poisoned(E * 4), bo = poisoned(E * 4), bp = poisoned(slots * 4), by = poisoned(size_t(slots) * m * 4);
      run_once(kernels().get("moe_group"), {{0, &bi}, {1, &bc}, {2, &bo}, {3, &bp}}, MoeGroupParams{slots, E, 0, 0}, 1);
      auto counts = download<uint32_t>(bc, E), offsets = download<uint32_t>(bo, E), perm = download<uint32_t>(bp, slots);
      for (uint32_t e = 0, off = 0; e < E; ++e) {
        uint32_t n = 0;
        for (uint32_t b = 0; b < slots; ++b)
          if (ids[b] == e) {
            EXPECT_EQ(perm[off + n], b) << "expert " << e;
            ++n;
          }
        EXPECT_EQ(counts[e], n);
        EXPECT_EQ(offsets[e], off);
        off += n;
      }
      run_once(kernels().get("matmul_" + suffix(t) + "_expert"),
               {{0, &bw}, {1, &bx}, {2, &by}, {9, &bc}, {10, &bo}, {11, &bp}},
               MoeMatvecParams{m, k, K, 0, tiles, m, 0, 0}, (m + 63) / 64, E * tiles);
      DotRef ref;
      for (uint32_t b = 0; b < slots; ++b) {
        auto r = dot_ref(w.dq.data() + size_t(ids[b]) * m * k, x.data() + size_t(b / K) * k, nullptr, m, k, 1);
        ref.value.insert(ref.value.end(), r.value.begin(), r.value.end());
        ref.scale.insert(ref.scale.end(), r.scale.begin(), r.scale.end());
      }
      EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), 1e-10)
          << suffix(t) << " rows=" << rows << " seed=" << test_seed();
    }
}

// matvec_mxfp4 (a plain MXFP4 matrix): odd row counts, batches, k of one block and of many.
TEST_F(Moe, Mxfp4MatvecMatchesFloat64) {
  for (auto [m, k, batch] : {std::tuple{37u, 32u, 1u}, std::tuple{5u, 2880u, 2u}, std::tuple{130u, 736u, 3u}}) {
    Weights w = random_weights(DType::MXFP4, m, k);
    auto x = with_nan_tail(random_floats(size_t(batch) * k));
    DotRef ref = dot_ref(w.dq.data(), x.data(), nullptr, m, k, batch);
    auto bw = upload(w.bytes), bx = upload(x);
    auto by = poisoned(size_t(batch) * m * 4);
    run_once(kernels().get("matvec_mxfp4", {{0, 8}, {1, 4}}), {{0, &bw}, {1, &bx}, {2, &by}},
             MatvecParams{m, k, batch, 0}, (m + 3) / 4, batch);
    EXPECT_LT(scaled_error(download<float>(by, ref.value.size()), ref), 1e-10) << m << "x" << k << " seed=" << test_seed();
  }
}

TEST_F(Moe, ActivationAndCombine) {
  const uint32_t E = 5, K = 3, rows = 4, F = 300, D = 261, slots = rows * K;
  for (bool gpt_oss : {false, true}) {
    auto gu = random_floats(size_t(slots) * 2 * F, -9, 9);  // [slots, gate F | up F]
    auto bgu = random_floats(size_t(E) * 2 * F);  // [E, 2F]: gate biases, then up biases
    std::vector<uint32_t> ids(slots);
    for (auto& id : ids) id = uint32_t(rng()() % E);
    const float alpha = 1.702f, limit = 7.0f;
    std::vector<double> want(size_t(slots) * F);
    for (uint32_t b = 0; b < slots; ++b)
      for (uint32_t f = 0; f < F; ++f) {
        double a = gu[size_t(b) * 2 * F + f], c = gu[size_t(b) * 2 * F + F + f];
        if (gpt_oss) {
          a = std::min(a + bgu[size_t(ids[b]) * 2 * F + f], double(limit));
          c = std::clamp(c + bgu[size_t(ids[b]) * 2 * F + F + f], -double(limit), double(limit));
          want[size_t(b) * F + f] = (c + 1) * a / (1 + std::exp(-alpha * a));
        } else {
          want[size_t(b) * F + f] = model::activation(Activation::silu, a) * c;
        }
      }
    auto bgub = upload(gu), bid = upload(ids), bbgu = upload(bgu);
    auto bh = poisoned(size_t(slots) * F * 4);
    run_once(kernels().get("moe_act_f32"), {{0, &bgub}, {2, &bh}, {3, &bid}, {4, &bbgu}},
             MoeActParams{F, slots, gpt_oss ? 1u : 0u, 0, gpt_oss ? alpha : 0.0f, gpt_oss ? limit : 0.0f, 0, 0},
             (F + 255) / 256, slots);
    EXPECT_LT(nmse(download<float>(bh, want.size()), want), 1e-12) << "act gpt_oss=" << gpt_oss << " seed=" << test_seed();

    auto x = random_floats(size_t(rows) * D), y = random_floats(size_t(slots) * D), wts = random_floats(slots, 0, 1);
    auto bd = random_floats(size_t(E) * D);
    std::vector<double> want_x(size_t(rows) * D);
    for (uint32_t t = 0; t < rows; ++t)
      for (uint32_t i = 0; i < D; ++i) {
        double acc = x[size_t(t) * D + i];
        for (uint32_t s = 0; s < K; ++s) {
          uint32_t b = t * K + s;
          acc += double(wts[b]) * (y[size_t(b) * D + i] + (gpt_oss ? bd[size_t(ids[b]) * D + i] : 0.0f));
        }
        want_x[size_t(t) * D + i] = acc;
      }
    auto bx = upload(x), by = upload(y), bwt = upload(wts), bbd = upload(bd);
    run_once(kernels().get("moe_combine_f32"), {{0, &bx}, {1, &by}, {2, &bid}, {3, &bwt}, {4, &bbd}},
             MoeCombineParams{D, rows, K, gpt_oss ? 1u : 0u}, (D + 255) / 256, rows);
    EXPECT_LT(nmse(download<float>(bx, want_x.size()), want_x), 1e-12) << "combine gpt_oss=" << gpt_oss;
  }
}

}  // namespace
}  // namespace bs::testing
