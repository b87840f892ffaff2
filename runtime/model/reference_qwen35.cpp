#include "runtime/model/reference_qwen35.h"

#include <cmath>

#include "runtime/model/reference.h"

namespace bs::model {

namespace {

double silu(double x) { return x / (1 + std::exp(-x)); }
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }  // torch's threshold 20

void l2norm(double* x, int n) {
  double ss = 0;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  double s = 1 / std::sqrt(ss + 1e-6);
  for (int i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace

void conv_silu_reference(const double* x, int n, int channels, const double* w, int width, double* state, double* out) {
  const int h = width - 1;
  for (int c = 0; c < channels; ++c) {
    std::vector<double> win(state + size_t(c) * h, state + size_t(c) * h + h);  // the h rows before this call
    for (int t = 0; t < n; ++t) {
      win.push_back(x[size_t(t) * channels + c]);
      double s = 0;
      for (int j = 0; j < width; ++j) s += w[size_t(c) * width + j] * win[win.size() - width + j];
      out[size_t(t) * channels + c] = silu(s);
    }
    for (int j = 0; j < h; ++j) state[size_t(c) * h + j] = win[win.size() - h + j];
  }
}

void delta_rule_reference(const double* qkv, const double* a, const double* b, const double* a_log, const double* dt_bias,
                          int n, int k_heads, int v_heads, int dk, int dv, double* S, double* o) {
  const int width = 2 * k_heads * dk + v_heads * dv, rep = v_heads / k_heads;
  std::vector<double> q(dk), k(dk), kv(dv);
  for (int t = 0; t < n; ++t) {
    const double* row = qkv + size_t(t) * width;
    for (int h = 0; h < v_heads; ++h) {
      int kh = h / rep;
      for (int i = 0; i < dk; ++i) q[i] = row[kh * dk + i], k[i] = row[k_heads * dk + kh * dk + i];
      l2norm(q.data(), dk);
      l2norm(k.data(), dk);
      for (auto& e : q) e /= std::sqrt(double(dk));
      const double* v = row + 2 * k_heads * dk + h * dv;
      double g = -std::exp(a_log[h]) * softplus(a[size_t(t) * v_heads + h] + dt_bias[h]);
      double beta = 1 / (1 + std::exp(-b[size_t(t) * v_heads + h]));
      double* s = S + size_t(h) * dk * dv;  // [dk, dv]
      double decay = std::exp(g);
      for (int i = 0; i < dk * dv; ++i) s[i] *= decay;
      for (int j = 0; j < dv; ++j) {
        double m = 0;
        for (int i = 0; i < dk; ++i) m += s[i * dv + j] * k[i];
        kv[j] = beta * (v[j] - m);
      }
      for (int i = 0; i < dk; ++i)
        for (int j = 0; j < dv; ++j) s[i * dv + j] += k[i] * kv[j];
      double* out = o + (size_t(t) * v_heads + h) * dv;
      for (int j = 0; j < dv; ++j) {
        double m = 0;
        for (int i = 0; i < dk; ++i) m += s[i * dv + j] * q[i];
        out[j] = m;
      }
    }
  }
}

void gated_norm_reference(double* o, const double* z, const double* w, int rows, int dv, double eps) {
  for (int r = 0; r < rows; ++r) {
    double* x = o + size_t(r) * dv;
    double ss = 0;
    for (int i = 0; i < dv; ++i) ss += x[i] * x[i];
    double s = 1 / std::sqrt(ss / dv + eps);
    for (int i = 0; i < dv; ++i) x[i] = x[i] * s * w[i] * silu(z[size_t(r) * dv + i]);
  }
}

void deltanet_layer_reference(const ModelConfig& c, const WeightLookup& W, const std::vector<double>& xn, int n,
                              std::vector<double>& out) {
  const int D = c.dim, C = c.linear_qkv_dim(), V = c.linear_out_dim(), H = c.linear_v_heads;
  auto project = [&](const char* name, int m, std::vector<double>& y) {
    const auto& w = W(name);
    y.assign(size_t(n) * m, 0);
    for (int t = 0; t < n; ++t) matvec(w, &xn[size_t(t) * D], m, D, &y[size_t(t) * m]);
  };
  std::vector<double> qkv, z, a, b;
  project("linear_qkv", C, qkv);
  project("linear_z", V, z);
  project("linear_a", H, a);
  project("linear_b", H, b);
  std::vector<double> conv_state(size_t(C) * (c.linear_conv - 1), 0.0), mixed(qkv.size());
  conv_silu_reference(qkv.data(), n, C, W("linear_conv").data(), c.linear_conv, conv_state.data(), mixed.data());
  std::vector<double> S(size_t(H) * c.linear_k_dim * c.linear_v_dim, 0.0), o(size_t(n) * V);
  delta_rule_reference(mixed.data(), a.data(), b.data(), W("linear_a_log").data(), W("linear_dt_bias").data(), n,
                       c.linear_k_heads, H, c.linear_k_dim, c.linear_v_dim, S.data(), o.data());
  gated_norm_reference(o.data(), z.data(), W("linear_norm").data(), n * H, c.linear_v_dim, c.norm_eps);
  const auto& wo = W("linear_out");
  out.assign(size_t(n) * D, 0);
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < D; ++r) {
      double s = 0;
      for (int i = 0; i < V; ++i) s += wo[size_t(r) * V + i] * o[size_t(t) * V + i];
      out[size_t(t) * D + r] = s;
    }
}

}  // namespace bs::model
