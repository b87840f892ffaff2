#include "runtime/model/reference.h"

#include <cmath>

#include "rdrr/quant.h"
#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "runtime/model/reference_qwen35.h"
#include "runtime/model/repack.h"

namespace bs::model {

ReferenceModel::ReferenceModel(const ModelSource& source) : cfg_(source.config) {
  std::vector<std::byte> converted;
  source.for_each_tensor([&](const TensorView& t) {
    const std::span<const std::byte> data = host_runnable(t, converted);  // the loader's repacks, on the host
    int64_t n = 1;
    for (auto d : t.shape) n *= d;
    int64_t row = t.shape.back();
    std::vector<float> tmp(n);
    // Rows padded to whole blocks (Q4_K "row" layout) are dequantized whole, then cut to their length.
    const uint64_t rb = padded_row_bytes(t.dtype, uint64_t(row));
    std::vector<float> padded(padded_blocks(t.dtype, uint64_t(row)) * traits(t.dtype).block_elems);
    for (int64_t r = 0; r < n / row; ++r) {
      dequantize_row(t.dtype, data.data() + r * rb, padded.data(), int64_t(padded.size()));
      std::copy(padded.begin(), padded.begin() + row, tmp.begin() + r * row);
    }
    weights_[t.name].assign(tmp.begin(), tmp.end());
  }, false);
}

const std::vector<double>& ReferenceModel::w(const std::string& name) const {
  auto it = weights_.find(name);
  if (it == weights_.end()) fail("reference: missing weight {}", name);
  return it->second;
}

// The float64 building blocks, shared with reference_gemma4.cpp (reference.h).
void rmsnorm(double* x, const double* w, int n, double eps, double offset, double* out) {
  double ss = 0;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  double s = 1.0 / std::sqrt(ss / n + eps);
  for (int i = 0; i < n; ++i) out[i] = x[i] * s * (offset + w[i]);
}

// y[m] = W[m, k] x[k]
void matvec(const std::vector<double>& W, const double* x, int m, int k, double* y) {
  for (int r = 0; r < m; ++r) {
    double s = 0;
    const double* row = &W[size_t(r) * k];
    for (int i = 0; i < k; ++i) s += row[i] * x[i];
    y[r] = s;
  }
}

double activation(Activation act, double a) {
  return act == Activation::silu ? a / (1 + std::exp(-a))
                                 : 0.5 * a * (1 + std::tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
}

namespace {

void rope(double* v, const std::vector<double>& f, int pos, int head_dim) {
  int h = head_dim / 2;
  for (int i = 0; i < h; ++i) {
    double a = pos * f[i], c = std::cos(a), s = std::sin(a);
    double x0 = v[i], x1 = v[i + h];
    v[i] = x0 * c - x1 * s;
    v[i + h] = x1 * c + x0 * s;
  }
}

}  // namespace

std::vector<double> rope_inv_freq(const ModelConfig& c, double theta, bool global, int64_t ctx) {
  // Scaling (linear, llama3, LongRoPE) applies to the global table, and to the sliding layers' where they
  // have no base of their own (Mistral, Phi-3: one rotary embedding for every layer, as in HF); Gemma's
  // sliding layers, with their local base, run unscaled.
  const bool scaled = global || c.rope.local_theta <= 0;
  // Qwen 3.5's partial rotary: frequencies over the rotated width only (rotary_dim of head_dim).
  const int hd = c.rotary_dim > 0 ? c.rotary_dim : c.head_dim_of_type(global);
  std::vector<double> f(hd / 2);
  const auto& r = c.rope;
  const std::vector<double> yarn = r.scaling == RopeScaling::yarn && scaled ? yarn_inv_freq(r, theta, hd) : std::vector<double>();
  // Gemma 4's proportional RoPE (global layers): frequencies over the whole head_dim, only the first
  // partial_factor * hd / 2 of them nonzero.
  const int rotated = global && r.partial_factor < 1.0f ? int(double(r.partial_factor) * hd / 2) : hd / 2;
  for (int i = 0; i < hd / 2; ++i) {
    double inv = i < rotated ? 1.0 / std::pow(theta, double(2 * i) / hd) : 0.0;
    if (scaled && r.scaling == RopeScaling::linear) inv /= r.factor;
    if (!yarn.empty()) inv = yarn[size_t(i)];
    if (scaled && r.scaling == RopeScaling::longrope)  // validate_config: a factor per rotated pair
      inv /= ctx > r.original_max_position ? r.long_factor[size_t(i)] : r.short_factor[size_t(i)];
    if (scaled && r.scaling == RopeScaling::llama3) {
      double low_wl = r.original_max_position / r.low_freq_factor, high_wl = r.original_max_position / r.high_freq_factor;
      double wl = 2 * M_PI / inv;
      if (wl > low_wl) {
        inv /= r.factor;
      } else if (wl >= high_wl) {
        double sm = (r.original_max_position / wl - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
        inv = (1 - sm) * inv / r.factor + sm * inv;
      }
    }
    // BLUESHIFT_ROPE_FREQ_BF16=1 rounds the frequencies to bfloat16, as HF's do once a model is cast with
    // model.to(torch.bfloat16) (the inv_freq buffers are cast with the weights) and back: how the shared 2026
    // reference logits were made (make_refs_2026.py). Real checkpoints compute them in f32; this only
    // reproduces that reference. Gemma 4 (softmax scale 1 over normalized q and k) is the one model
    // where the difference exceeds the parity bound: 7.5e-2 -> 3.7e-5 (CPU reference, gemma4-tiny).
    // Not LongRoPE's: HF's longrope update puts its f32 original_inv_freq (a plain attribute, not cast) back
    // before every forward of up to original_max_position positions.
    static const bool bf16 = env_switch("BLUESHIFT_ROPE_FREQ_BF16");
    f[i] = bf16 && r.scaling != RopeScaling::longrope ? double(bf16_to_float(float_to_bf16(float(inv)))) : inv;
  }
  return f;
}

std::vector<double> ReferenceModel::forward(std::span<const int32_t> tokens) const {
  const auto& c = cfg_;
  int n = int(tokens.size()), D = c.dim, H = c.n_heads;
  double off = c.norm_offset ? 1.0 : 0.0;
  std::vector<double> x(size_t(n) * D);
  const auto& E = w("embed");
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < D; ++i) x[size_t(t) * D + i] = E[size_t(tokens[t]) * D + i] * c.embed_scale;
  auto fg = rope_inv_freq(c, c.rope.theta, true, n);  // HF: the forward's positions pick LongRoPE's factors
  auto fl = rope_inv_freq(c, c.rope.local_theta > 0 ? c.rope.local_theta : c.rope.theta, false, n);
  const int max_hd = c.max_over_layers(&ModelConfig::head_dim_of), max_ffn = c.max_over_layers(&ModelConfig::ffn_dim_of);
  // Gemma 4 E: per-layer inputs [n, n_layers, ple_dim] from the token and its embedding (reference_gemma4).
  std::vector<double> pl = c.ple_dim > 0 ? per_layer_inputs(tokens, x) : std::vector<double>();
  const std::vector<double> ones(size_t(std::max(max_hd, D)), 1.0);
  // Keys and values per layer (KV-shared layers read an earlier layer's).
  std::vector<std::vector<double>> kc(size_t(c.n_layers)), vc(size_t(c.n_layers));
  std::vector<double> xn(D), q(size_t(n) * H * max_hd), att(size_t(H) * max_hd), tmp(std::max(D, max_ffn)),
      g(max_ffn), u(max_ffn), sc(n);
  // x_t += ffn_down(act(ffn_gate xn) * (ffn_up xn)), xn = ffn_norm(x_t) (and the post-FFN norm of sandwich layers).
  auto ffn_block = [&](int l, double* xt) {
    auto W = [&](const char* s) -> const std::vector<double>& { return w(fmt::format("blk.{}.{}", l, s)); };
    const int ffn = c.ffn_dim_of(l);
    rmsnorm(xt, W("ffn_norm").data(), D, c.norm_eps, off, xn.data());
    if (c.moe()) {  // reference_moe.cpp
      moe_ffn(l, xn.data(), tmp.data());
      for (int i = 0; i < D; ++i) xt[i] += tmp[i];
      return;
    }
    matvec(W("ffn_gate"), xn.data(), ffn, D, g.data());
    matvec(W("ffn_up"), xn.data(), ffn, D, u.data());
    for (int i = 0; i < ffn; ++i) g[i] = activation(c.act, g[i]) * u[i];
    matvec(W("ffn_down"), g.data(), D, ffn, tmp.data());
    if (c.sandwich_norm) rmsnorm(tmp.data(), W("ffn_post_norm").data(), D, c.norm_eps, off, tmp.data());
    for (int i = 0; i < D; ++i) xt[i] += tmp[i];
  };
  // Qwen 3.5: q_proj rows are [head, (q | gate), head_dim]; the gate scales the attention output.
  std::vector<double> qg(c.attn_output_gate ? size_t(2) * H * max_hd : 0);
  std::vector<double> gate(c.attn_output_gate ? size_t(n) * H * max_hd : 0);
  std::vector<double> xns, lin;  // linear-attention layers: normed rows in, branch rows out
  for (int l = 0; l < c.n_layers; ++l) {
    auto W = [&](const char* s) -> const std::vector<double>& { return w(fmt::format("blk.{}.{}", l, s)); };
    if (c.kind(l) == LayerKind::short_conv) {  // LFM2 (reference_lfm2.cpp), then the FFN
      short_conv_mixer(l, n, x);
      for (int t = 0; t < n; ++t) ffn_block(l, &x[size_t(t) * D]);
      continue;
    }
    if (c.kind(l) == LayerKind::linear_attention) {  // Qwen 3.5's Gated DeltaNet (reference_qwen35.cpp), then the FFN
      xns.resize(size_t(n) * D);
      for (int t = 0; t < n; ++t) rmsnorm(&x[size_t(t) * D], W("attn_norm").data(), D, c.norm_eps, off, &xns[size_t(t) * D]);
      deltanet_layer_reference(c, [&](const char* s) -> const std::vector<double>& { return W(s); }, xns, n, lin);
      for (int t = 0; t < n; ++t) {
        double* xt = &x[size_t(t) * D];
        for (int i = 0; i < D; ++i) xt[i] += lin[size_t(t) * D + i];
        ffn_block(l, xt);
      }
      continue;
    }
    const int hd = c.head_dim_of(l), KV = c.kv_heads_of(l);
    const int rot = c.rotary_dim > 0 ? c.rotary_dim : hd;
    bool sliding = c.sliding(l), own_kv = c.computes_kv(l);
    const auto& f = sliding ? fl : fg;
    if (own_kv) kc[l].resize(size_t(n) * KV * hd), vc[l].resize(size_t(n) * KV * hd);
    const auto& k = kc[size_t(c.kv_source(l))];
    const auto& v = vc[size_t(c.kv_source(l))];
    for (int t = 0; t < n; ++t) {
      rmsnorm(&x[size_t(t) * D], W("attn_norm").data(), D, c.norm_eps, off, xn.data());
      double* qt = &q[size_t(t) * H * hd];
      if (c.attn_output_gate) {
        matvec(W("attn_q"), xn.data(), 2 * H * hd, D, qg.data());
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < hd; ++d) {
            qt[h * hd + d] = qg[(2 * h) * hd + d];
            gate[(size_t(t) * H + h) * hd + d] = qg[(2 * h + 1) * hd + d];
          }
      } else {
        matvec(W("attn_q"), xn.data(), H * hd, D, qt);
      }
      if (c.qkv_bias)
        for (int i = 0; i < H * hd; ++i) qt[i] += W("attn_q_bias")[i];
      for (int h = 0; h < H; ++h) {
        if (c.qk_norm) rmsnorm(qt + h * hd, W("attn_q_norm").data(), hd, c.norm_eps, off, qt + h * hd);
        rope(qt + h * hd, f, t, rot);
      }
      if (!own_kv) continue;
      double* kt = &kc[l][size_t(t) * KV * hd];
      double* vt = &vc[l][size_t(t) * KV * hd];
      matvec(W("attn_k"), xn.data(), KV * hd, D, kt);
      matvec(W(c.has_v_proj(l) ? "attn_v" : "attn_k"), xn.data(), KV * hd, D, vt);  // Gemma 4: v = k's projection
      if (c.qkv_bias)
        for (int i = 0; i < KV * hd; ++i) kt[i] += W("attn_k_bias")[i], vt[i] += W("attn_v_bias")[i];
      for (int h = 0; h < KV; ++h) {
        if (c.qk_norm) rmsnorm(kt + h * hd, W("attn_k_norm").data(), hd, c.norm_eps, off, kt + h * hd);
        rope(kt + h * hd, f, t, rot);
        if (c.v_norm) rmsnorm(vt + h * hd, ones.data(), hd, c.norm_eps, 0.0, vt + h * hd);
      }
    }
    const double scale = c.softmax_scale_of(l);
    for (int t = 0; t < n; ++t) {
      int lo = (sliding && c.sliding_window > 0) ? std::max(0, t + 1 - c.sliding_window) : 0;
      for (int h = 0; h < H; ++h) {
        int kh = h / (H / KV);
        const double* qh = &q[(size_t(t) * H + h) * hd];
        // GPT-OSS's sinks: a per-head logit that joins the softmax's denominator only.
        const double sink = c.attn_sinks ? W("attn_sinks")[size_t(h)] : -1e300;
        double mx = sink;
        for (int j = lo; j <= t; ++j) {
          double s = 0;
          for (int d = 0; d < hd; ++d) s += qh[d] * k[(size_t(j) * KV + kh) * hd + d];
          s *= scale;
          if (c.attn_softcap > 0) s = c.attn_softcap * std::tanh(s / c.attn_softcap);
          sc[j] = s;
          mx = std::max(mx, s);
        }
        double sum = c.attn_sinks ? std::exp(sink - mx) : 0.0;
        for (int j = lo; j <= t; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
        for (int d = 0; d < hd; ++d) {
          double a = 0;
          for (int j = lo; j <= t; ++j) a += sc[j] * v[(size_t(j) * KV + kh) * hd + d];
          att[h * hd + d] = a / sum;
        }
      }
      if (c.attn_output_gate)
        for (int i = 0; i < H * hd; ++i) att[i] /= 1 + std::exp(-gate[size_t(t) * H * hd + i]);
      double* xt = &x[size_t(t) * D];
      matvec(W("attn_out"), att.data(), D, H * hd, tmp.data());
      if (c.attn_out_bias)
        for (int i = 0; i < D; ++i) tmp[i] += W("attn_out_bias")[size_t(i)];
      if (c.sandwich_norm) rmsnorm(tmp.data(), W("attn_post_norm").data(), D, c.norm_eps, off, tmp.data());
      for (int i = 0; i < D; ++i) xt[i] += tmp[i];
      ffn_block(l, xt);
      if (c.ple_dim > 0) per_layer_input_block(l, &pl[(size_t(t) * c.n_layers + l) * c.ple_dim], xt);
      if (c.layer_scalar)
        for (int i = 0; i < D; ++i) xt[i] *= W("layer_scalar")[0];
    }
  }
  const auto& head = c.tied_embeddings ? E : w("output");
  std::vector<double> logits(size_t(n) * c.vocab);
  for (int t = 0; t < n; ++t) {
    rmsnorm(&x[size_t(t) * D], w("output_norm").data(), D, c.norm_eps, off, xn.data());
    matvec(head, xn.data(), c.vocab, D, &logits[size_t(t) * c.vocab]);
    if (c.final_softcap > 0)
      for (int i = 0; i < c.vocab; ++i)
        logits[size_t(t) * c.vocab + i] = c.final_softcap * std::tanh(logits[size_t(t) * c.vocab + i] / c.final_softcap);
  }
  return logits;
}

}  // namespace bs::model
