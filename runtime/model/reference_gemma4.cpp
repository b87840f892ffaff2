// Gemma 4's per-layer inputs (the E variants) in the float64 reference: a second, narrow embedding
// per token and layer, mixed with a projection of the main embedding, and added back into the
// residual stream after each layer through a gated projection.
#include <cmath>

#include "runtime/base/error.h"
#include "runtime/model/reference.h"

namespace bs::model {

// pl[t, l, :] = (rmsnorm(W_proj[l] e_t / sqrt(dim)) * w_norm + E_pl[token_t, l, :] * ple_embed_scale) / sqrt(2),
// e_t the scaled embedding (x on entry), W_proj[l] the rows l*P .. l*P + P of ple_proj.
std::vector<double> ReferenceModel::per_layer_inputs(std::span<const int32_t> tokens, const std::vector<double>& x) const {
  const auto& c = cfg_;
  const int n = int(tokens.size()), L = c.n_layers, P = c.ple_dim, D = c.dim;
  const double off = c.norm_offset ? 1.0 : 0.0;
  const auto& table = w("ple_embed");
  const auto& proj = w("ple_proj");
  const auto& norm = w("ple_proj_norm");
  std::vector<double> pl(size_t(n) * L * P), y(size_t(L) * P);
  for (int t = 0; t < n; ++t) {
    matvec(proj, &x[size_t(t) * D], L * P, D, y.data());
    for (int l = 0; l < L; ++l) {
      double* yl = &y[size_t(l) * P];
      for (int i = 0; i < P; ++i) yl[i] /= std::sqrt(double(D));
      rmsnorm(yl, norm.data(), P, c.norm_eps, off, yl);
      double* out = &pl[(size_t(t) * L + l) * P];
      const double* row = &table[(size_t(tokens[t]) * L + l) * P];
      for (int i = 0; i < P; ++i) out[i] = (yl[i] + row[i] * c.ple_embed_scale) * std::sqrt(0.5);
    }
  }
  return pl;
}

// x_t += rmsnorm(W_out (act(W_gate x_t) * pl_t,l)) * w_post.
void ReferenceModel::per_layer_input_block(int32_t l, const double* pl, double* xt) const {
  const auto& c = cfg_;
  const int P = c.ple_dim, D = c.dim;
  const double off = c.norm_offset ? 1.0 : 0.0;
  std::vector<double> g(P), o(D);
  matvec(w(fmt::format("blk.{}.ple_gate", l)), xt, P, D, g.data());
  for (int i = 0; i < P; ++i) g[i] = activation(c.act, g[i]) * pl[i];
  matvec(w(fmt::format("blk.{}.ple_out", l)), g.data(), D, P, o.data());
  rmsnorm(o.data(), w(fmt::format("blk.{}.ple_post_norm", l)).data(), D, c.norm_eps, off, o.data());
  for (int i = 0; i < D; ++i) xt[i] += o[i];
}

}  // namespace bs::model
