// The one table that knows Llama from Gemma: HF checkpoint tensor names <-> the internal names of
// runtime/model/config.h, plus each internal tensor's expected shape, role and group.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/config.h"

namespace bs {

class TensorNames {
 public:
  // `model_type`: the text model's type (llama, mistral, qwen2, qwen3, gemma3_text). `multimodal`:
  // tensors of the text model live under language_model prefixes and vision tensors are skipped.
  TensorNames(std::string model_type, bool multimodal);
  // Names as DOPPLER's manifests keep them, which say no HF model_type: the norm layout follows the
  // config's flags (sandwich norms, q/k norms, biases, an untied head), and every text-model prefix
  // DOPPLER writes is accepted ("model.", "model.language_model.", "language_model.model.", none).
  // A tensor the config does not declare stays unknown.
  explicit TensorNames(const ModelConfig& c);

  // expert_part: one expert's tensor (Mixtral, Qwen3-MoE) or GPT-OSS's fused gate_up_proj / down_proj, which
  // rdrr/moe_tensors.h stacks or splits into the internal [experts, rows, cols] tensors.
  enum class Kind { mapped, skipped, unknown, expert_part };
  struct Result {
    Kind kind;
    std::string internal;  // when mapped
  };
  // Maps one HF tensor name. `skipped`: not part of the text model (vision tower, rotary caches).
  Result to_internal(std::string_view hf) const;
  // The HF name a text-only checkpoint of this architecture uses for `internal` (synth, DOPPLER).
  std::string to_hf(std::string_view internal) const;

 private:
  bool allowed(int only) const;

  std::string model_type_;
  bool multimodal_ = false;
  bool any_prefix_ = false;  // DOPPLER: every text-model prefix, no tower to skip
  bool sandwich_ = false;
  bool qk_norm_ = true, qkv_bias_ = true, lm_head_ = true;
  bool fused_ = false;  // Phi-3's qkv_proj and gate_up_proj
  bool lfm2_ = false;    // LFM2's names (operator_norm, conv.*, feed_forward.w1/w2/w3, ...)
  bool linear_ = false;  // Qwen 3.5's Gated DeltaNet layers
  bool gemma4_ = false, ple_ = false;  // Gemma 4's layer_scalar; its per-layer inputs
  bool moe_ = false, out_bias_ = false, sinks_ = false, router_bias_ = false;  // issue 16 (MoE, GPT-OSS)
};

// Internal names of every tensor the model needs, in the order the converter writes them
// (embed, layer by layer, output_norm, output).
std::vector<std::string> expected_tensors(const ModelConfig& c);
// One internal tensor stored as rows [row0, row0 + rows) of a fused checkpoint tensor.
struct FusedPart {
  std::string internal;
  int64_t row0, rows;
};
// The parts of a fused internal tensor (blk.N.attn_qkv -> attn_q/k/v, blk.N.ffn_gate_up -> ffn_gate/up),
// in row order; empty when `internal` is not fused.
std::vector<FusedPart> fused_parts(const ModelConfig& c, std::string_view internal);
// Expected HF shape ([out, in] for matmuls) of an internal tensor; throws for unknown names.
std::vector<int64_t> expected_shape(const ModelConfig& c, std::string_view internal);

// "embedding", "lm_head", "norm", "bias" or "matmul" (manifest `role`).
std::string tensor_role(std::string_view internal);
// "embed", "layer.N" or "head" (manifest `group`).
std::string tensor_group(std::string_view internal);
// Layer index of blk.N.*, or -1.
int32_t tensor_layer(std::string_view internal);

}  // namespace bs
