// LFM2's short-conv mixer in float64 (Lfm2ShortConv.slow_forward): B, C, x = in_proj(operator_norm(h))
// chunked in that order, y = C * causal_depthwise_conv(B * x) (tap k of a width-K filter multiplies the
// input K - 1 - k rows back; zeros before the first token), then out_proj(y) added to the residual.
#include <cmath>

#include "runtime/base/error.h"
#include "runtime/model/reference.h"

namespace bs::model {

void ReferenceModel::short_conv_mixer(int l, int n, std::vector<double>& x) const {
  const auto& c = cfg_;
  const int D = c.dim, K = c.conv_kernel;
  auto W = [&](const char* s) -> const std::vector<double>& { return w(fmt::format("blk.{}.{}", l, s)); };
  const auto& norm = W("attn_norm");
  const auto& in = W("conv_in");
  const auto& kernel = W("conv_kernel");  // [D, 1, K]
  const auto& out = W("conv_out");
  double off = c.norm_offset ? 1.0 : 0.0;
  std::vector<double> bx(size_t(n) * D), cg(size_t(n) * D), xn(D), bcx(3 * size_t(D)), y(D), o(D);
  for (int t = 0; t < n; ++t) {
    rmsnorm(&x[size_t(t) * D], norm.data(), D, c.norm_eps, off, xn.data());
    matvec(in, xn.data(), 3 * D, D, bcx.data());
    for (int i = 0; i < D; ++i) {
      bx[size_t(t) * D + i] = bcx[i] * bcx[2 * size_t(D) + i];
      cg[size_t(t) * D + i] = bcx[size_t(D) + i];
    }
  }
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < D; ++i) {
      double a = 0;
      for (int k = 0; k < K; ++k) {
        int src = t - (K - 1) + k;
        if (src >= 0) a += kernel[size_t(i) * K + k] * bx[size_t(src) * D + i];
      }
      y[i] = cg[size_t(t) * D + i] * a;
    }
    matvec(out, y.data(), D, D, o.data());
    for (int i = 0; i < D; ++i) x[size_t(t) * D + i] += o[i];
  }
}

}  // namespace bs::model
