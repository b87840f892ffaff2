// The float64 reference of the mixture-of-experts FFN (Mixtral, Qwen3-MoE, GPT-OSS) and of YaRN's RoPE
// frequencies, as transformers computes them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "runtime/base/error.h"
#include "runtime/model/reference.h"

namespace bs::model {

// The top k logits by value, ties to the lower expert id (a stable sort), and their weights: softmax over the
// k (Mixtral's and Qwen3-MoE's renormalized top-k of the full softmax is the same numbers; GPT-OSS takes the
// softmax of its top-k logits), or the full softmax's values where norm_topk_prob is false.
void moe_route(const ModelConfig& c, const double* logits, int32_t* ids, double* weights) {
  const int E = c.n_experts, k = c.n_experts_used;
  std::vector<int32_t> order(static_cast<size_t>(E));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const double mx = logits[order[0]];
  double sum_k = 0, sum_all = 0;
  for (int e = 0; e < E; ++e) sum_all += std::exp(logits[e] - mx);
  for (int i = 0; i < k; ++i) {
    ids[i] = order[size_t(i)];
    weights[i] = std::exp(logits[ids[i]] - mx);
    sum_k += weights[i];
  }
  for (int i = 0; i < k; ++i) weights[i] /= c.moe_norm_topk ? sum_k : sum_all;
}

void ReferenceModel::moe_ffn(int32_t l, const double* xn, double* out) const {
  const auto& c = cfg_;
  const int E = c.n_experts, k = c.n_experts_used, F = c.expert_ffn_dim, D = c.dim;
  auto W = [&](const char* s) -> const std::vector<double>& { return w(fmt::format("blk.{}.{}", l, s)); };
  std::vector<double> logits(static_cast<size_t>(E)), wts(static_cast<size_t>(k)), g(static_cast<size_t>(F));
  std::vector<int32_t> ids(static_cast<size_t>(k));
  matvec(W("ffn_router"), xn, E, D, logits.data());
  if (c.moe_router_bias)
    for (int e = 0; e < E; ++e) logits[size_t(e)] += W("ffn_router_bias")[size_t(e)];
  moe_route(c, logits.data(), ids.data(), wts.data());
  double kth = logits[size_t(ids[size_t(k - 1)])], next = -std::numeric_limits<double>::infinity();
  for (int e = 0; e < E; ++e)
    if (std::find(ids.begin(), ids.end(), e) == ids.end()) next = std::max(next, logits[size_t(e)]);
  min_route_margin_ = std::min(min_route_margin_, kth - next);
  std::fill(out, out + D, 0.0);
  const auto &wgu = W("ffn_gate_up_exps"), &wd = W("ffn_down_exps");
  for (int s = 0; s < k; ++s) {
    const size_t e = size_t(ids[size_t(s)]);
    for (int f = 0; f < F; ++f) {
      double a = 0, b = 0;
      const double *rg = &wgu[(e * 2 * F + f) * D], *ru = &wgu[(e * 2 * F + F + f) * D];
      for (int i = 0; i < D; ++i) a += rg[i] * xn[i], b += ru[i] * xn[i];
      if (c.moe_expert_bias)
        a += W("ffn_gate_up_exps_bias")[e * 2 * F + f], b += W("ffn_gate_up_exps_bias")[e * 2 * F + F + f];
      if (c.swiglu_limit > 0) {  // GPT-OSS
        a = std::min(a, double(c.swiglu_limit));
        b = std::clamp(b, -double(c.swiglu_limit), double(c.swiglu_limit));
        g[size_t(f)] = (b + 1) * a / (1 + std::exp(-double(c.swiglu_alpha) * a));
      } else {
        g[size_t(f)] = activation(c.act, a) * b;
      }
    }
    for (int i = 0; i < D; ++i) {
      double a = 0;
      const double* rd = &wd[(e * D + i) * F];
      for (int f = 0; f < F; ++f) a += rd[f] * g[size_t(f)];
      if (c.moe_expert_bias) a += W("ffn_down_exps_bias")[e * D + i];
      out[i] += wts[size_t(s)] * a;
    }
  }
}

// transformers' _compute_yarn_parameters: per rotated pair i, extrapolation (theta^(-2i/dim)) below the ramp
// [low, high] of correction dims, interpolation (/ factor) above it, a linear blend within.
std::vector<double> yarn_inv_freq(const RopeConfig& r, double theta, int dim) {
  auto correction_dim = [&](double rotations) {
    return dim * std::log(r.original_max_position / (rotations * 2 * M_PI)) / (2 * std::log(theta));
  };
  double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
  if (r.yarn_truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0), high = std::min(high, double(dim - 1));
  if (low == high) high += 0.001;
  std::vector<double> f(static_cast<size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i) {
    const double extra = 1.0 / std::pow(theta, double(2 * i) / dim), inter = extra / r.factor;
    const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);  // 1: interpolate
    f[size_t(i)] = inter * ramp + extra * (1 - ramp);
  }
  return f;
}

}  // namespace bs::model
