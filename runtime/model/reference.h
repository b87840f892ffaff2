// A float64 CPU forward pass over the same (dequantized) weights: the reference the GPU forward is
// checked against for every quantization, and for models HF has no logits for. Slow and plain on purpose.
#pragma once
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "runtime/model/source.h"

namespace bs::model {

// HF's RoPE inverse frequencies (default, linear, llama3, longrope; Gemma 4's proportional), in double; the
// GPU path stores them as f32. `global`: the global (full-attention) layers' table, else the sliding
// layers' (scaled only where they have no local base); head_dim / 2 entries of that layer type's head_dim
// (ModelConfig::head_dim_of_type).
// BLUESHIFT_ROPE_FREQ_BF16=1 rounds them to bfloat16 (reproduces references made after model.to(bf16)).
// LongRoPE: the long factors when `ctx` (the context the model is built for) exceeds original_max_position.
std::vector<double> rope_inv_freq(const ModelConfig& c, double theta, bool global, int64_t ctx = 0);

// The float64 building blocks: out = x / rms(x) * (offset + w) (out may be x); y[m] = W[m, k] x[k];
// the FFN activation.
void rmsnorm(double* x, const double* w, int n, double eps, double offset, double* out);
void matvec(const std::vector<double>& W, const double* x, int m, int k, double* y);
double activation(Activation act, double a);
// MoE routing (reference_moe.cpp): the top n_experts_used of `logits` (ties: the lower id first) and their weights.
void moe_route(const ModelConfig& c, const double* logits, int32_t* ids, double* weights);
// YaRN's inverse frequencies over `dim` rotated dims (reference_moe.cpp).
std::vector<double> yarn_inv_freq(const RopeConfig& r, double theta, int dim);

class ReferenceModel {
 public:
  explicit ReferenceModel(const ModelSource& source);
  // Logits [tokens.size(), vocab] for tokens at positions 0..n-1 (teacher-forced).
  std::vector<double> forward(std::span<const int32_t> tokens) const;
  const ModelConfig& config() const { return cfg_; }
  // Mixture of experts: the smallest gap, over every routed row of the forwards so far, between the k-th
  // largest router logit and the next one (infinity without experts). Below the GPU's rounding of the
  // router logits (~1e-5) the two may route a row to different experts: a near tie, not a fault.
  double min_route_margin() const { return min_route_margin_; }

 private:
  const std::vector<double>& w(const std::string& name) const;
  // LFM2: x[t] += out_proj(C * conv(B * x)) of layer l over rows t < n (reference_lfm2.cpp).
  void short_conv_mixer(int l, int n, std::vector<double>& x) const;
  // Gemma 4 E (reference_gemma4.cpp): per-layer inputs [tokens, n_layers, ple_dim] from the tokens and
  // their scaled embeddings x [tokens, dim]; and the per-layer input block that adds to x_t after layer l.
  std::vector<double> per_layer_inputs(std::span<const int32_t> tokens, const std::vector<double>& x) const;
  void per_layer_input_block(int32_t l, const double* pl, double* xt) const;
  // Mixture of experts (reference_moe.cpp): out[dim] = the routed experts' weighted sum for one normed row.
  void moe_ffn(int32_t l, const double* xn, double* out) const;
  ModelConfig cfg_;
  std::map<std::string, std::vector<double>> weights_;
  mutable double min_route_margin_ = std::numeric_limits<double>::infinity();
};

}  // namespace bs::model
