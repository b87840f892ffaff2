// The persistent decode kernel (kernels_glsl/decode_persistent.comp): every layer of a one-token
// forward in one dispatch, the dependent phases separated by grid barriers instead of dispatch
// boundaries. Model::record_forward records it for M == 1 where create() accepted the model; the
// embedding, the head and the sampler stay separate dispatches.
//
// Scope: attention layers of the llama family (Llama, Mistral, Qwen2 biases, GQA, sliding windows),
// F16 / Q8_0 / Q4_K / Q6_K weights in whole blocks. Anything else — q/k norms, sandwich norms,
// softcaps, other layer kinds, rows padded to whole blocks — keeps the per-phase dispatches, as does
// a device without buffer device addresses or with no known resident grid. By default it runs on GPUs
// for layers not in F16 (where it measured faster; persistent.cpp); BLUESHIFT_PERSISTENT=1 takes it wherever
// it can run, BLUESHIFT_NO_PERSISTENT=1 never (A/B runs). BLUESHIFT_PERSISTENT_GRID=N and _WG=N fix the grid and
// workgroup size (tuning; a grid larger than fits at once trips the barrier timeout, which check() reports),
// BLUESHIFT_PERSISTENT_SPLITS=N the context chunks per head, BLUESHIFT_PERSISTENT_SKIP=MASK skips phases'
// work (timing breakdowns; wrong logits).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels_glsl/persistent.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/kernel_cache.h"

namespace bs::model {

class Model;

// BLUESHIFT_Q4K_DOT=float|int|intmx|half: whether the decode kernels meet Q4_K rows with x in integer dot products
// (x quantized per 16 values in two int8 levels, error <= 2^-16 of the largest: kernels_glsl/int_dot.glsl)
// rather than the float decode; intmx takes the high nibbles in place in mixed-signedness dot products, half
// (decode_persistent_h16 only) meets them in packed f16 arithmetic. The kernel `base`_i8 / `base`_i8mx /
// `base`_h16 where `kernels` offers it (the _i8 ones need shaderIntegerDotProduct), else `base`; a usage error
// for any other value. Default half: decode_persistent_h16, and the float matvec_q4k, which has no _h16 (the H200,
// benchmarks/results/2026-11-28-h200-session22.md: 8B q4_k_m 270 -> 291 tok/s, 1B 966 -> 993; int lost to float).
std::string q4k_dot_kernel(const gpu::KernelCache& kernels, const std::string& base);

class PersistentDecode {
 public:
  // The kernel's plan for `model`, or nullptr with the reason in `why` (for logs and tests).
  static std::shared_ptr<PersistentDecode> create(Model& model, std::string* why = nullptr);

  // decode_persistent, or decode_persistent_i8 / _i8mx / _h16 (Q4_K rows on integer dot products or packed f16:
  // q4k_dot_kernel), with _fold where the o projection is folded into the attention phase (persistent.cpp).
  const std::string& kernel() const { return kernel_; }
  // The kernel's constants and parameters; with `long_context`, the long-context recording's form (Model::
  // long_context_from): attention items by kv head (ATTN_GQA), where has_long().
  const std::vector<gpu::SpecConstant>& spec(bool long_context = false) const {
    return long_context && has_long_ ? long_spec_ : spec_;
  }
  std::vector<gpu::BindGroupEntry> entries() const;
  const kparams::PersistentParams& params(bool long_context = false) const {
    return long_context && has_long_ ? long_params_ : params_;
  }
  bool has_long() const { return has_long_; }
  uint32_t grid() const { return grid_; }
  uint32_t workgroup() const { return wg_; }
  // Floats of x (or h) each workgroup stages in shared memory, and the column passes the down projection's input
  // takes, by the down matrices' dtype (decode_persistent.comp, P5: a Q4_K matrix in the slot forms stages its slots
  // alone, in fewer passes).
  uint32_t staging_floats() const { return staging_; }
  const std::map<std::string, uint32_t>& down_passes() const { return down_passes_; }
  // Whether the phases whose matrices are all Q4_K take their RMSNorm straight into the slots, and by default q/k/v
  // where only some are (NORM_SLOTS 2: the floats staged beside them; the slot forms, where dim's slots fit one a
  // workgroup invocation; BLUESHIFT_PERSISTENT_NORM_SLOTS=0 turns it off, =1 keeps it to the all-Q4_K phases).
  bool norm_slots() const { return norm_slots_; }
  // Whether the kernel ends with the output norm in the int8 form the Q6_K head reads (HEAD_Q8X; record_forward then
  // records no norm dispatch before the head).
  bool head_norm() const { return head_norm_; }
  // Throws bs::Error(gpu) when a grid barrier timed out since the model was created: the grid was not
  // resident at once, so the logits of that step are wrong. (Reads the flag back: not for the hot loop.)
  void check() const;

 private:
  explicit PersistentDecode(Model& model) : model_(model) {}
  Model& model_;
  std::string kernel_ = "decode_persistent";
  uint32_t grid_ = 1, wg_ = 64, staging_ = 0;
  bool norm_slots_ = false, head_norm_ = false, has_long_ = false;
  std::map<std::string, uint32_t> down_passes_;
  std::vector<gpu::SpecConstant> spec_, long_spec_;
  kparams::PersistentParams params_{}, long_params_{};
  gpu::Buffer table_, scratch_, sync_;
};

}  // namespace bs::model
