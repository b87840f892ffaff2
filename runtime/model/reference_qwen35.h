// Float64 references for the Gated DeltaNet layers of Qwen 3.5 / 3.6 (HF Qwen3_5GatedDeltaNet): the CPU
// forward uses them, and so do the tests of the GPU kernels that implement the same steps.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runtime/model/config.h"

namespace bs::model {

// Causal depthwise conv then SiLU over rows [n, channels]: out[t, c] = silu(sum_j w[c, j] x[t - (width-1) + j, c]),
// the rows before 0 taken from `state` [channels, width-1] (oldest first; zeros for a new sequence),
// which is left holding the last width-1 input rows.
void conv_silu_reference(const double* x, int n, int channels, const double* w, int width, double* state, double* out);

// The gated delta rule over n tokens for `v_heads` heads, one step per token from the state S [v_heads, dk, dv]:
//   q, k l2-normalized (eps 1e-6), q scaled by 1/sqrt(dk); v head h reads q/k head h / (v_heads / k_heads);
//   g = -exp(a_log) softplus(a + dt_bias), beta = sigmoid(b);
//   S = exp(g) S;  S += k (beta (v - S^T k))^T;  o = S^T q.
// qkv: [n, 2 k_heads dk + v_heads dv] (q | k | v, after the conv); a, b: [n, v_heads]; o: [n, v_heads, dv].
void delta_rule_reference(const double* qkv, const double* a, const double* b, const double* a_log, const double* dt_bias,
                          int n, int k_heads, int v_heads, int dk, int dv, double* S, double* o);

// o_h = rmsnorm(o_h) * w * silu(z_h) per head of dv (the gated norm's weight is plain, not 1 + w).
void gated_norm_reference(double* o, const double* z, const double* w, int rows, int dv, double eps);

// One whole linear-attention layer from position 0: xn [n, dim] (already normed) -> out [n, dim].
using WeightLookup = std::function<const std::vector<double>&(const char*)>;
void deltanet_layer_reference(const ModelConfig& c, const WeightLookup& W, const std::vector<double>& xn, int n,
                              std::vector<double>& out);

}  // namespace bs::model
