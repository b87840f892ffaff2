// A float64 CPU forward pass over the same (dequantized) weights: the reference the GPU forward is
// checked against for every quantization, and for models HF has no logits for. Slow and plain on purpose.
#pragma once
#include <map>
#include <span>
#include <string>
#include <vector>

#include "runtime/model/source.h"

namespace bs::model {

// HF's RoPE inverse frequencies (default, linear, llama3), in double; the GPU path stores them as f32.
std::vector<double> rope_inv_freq(const ModelConfig& c, double theta, bool scaled);

class ReferenceModel {
 public:
  explicit ReferenceModel(const ModelSource& source);
  // Logits [tokens.size(), vocab] for tokens at positions 0..n-1 (teacher-forced).
  std::vector<double> forward(std::span<const int32_t> tokens) const;
  const ModelConfig& config() const { return cfg_; }

 private:
  const std::vector<double>& w(const std::string& name) const;
  // LFM2: x[t] += out_proj(C * conv(B * x)) of layer l over rows t < n (reference_lfm2.cpp).
  void short_conv_mixer(int l, int n, std::vector<double>& x) const;
  ModelConfig cfg_;
  std::map<std::string, std::vector<double>> weights_;
};

}  // namespace bs::model
