// Mixture-of-experts tensors (issue 16): what a MoE layer holds, and the stacked [experts, rows, cols]
// tensors blueshift stores (DOPPLER's layout and names: experts.gate_up_proj [E, 2F, dim], gate rows then up
// rows per expert, and experts.down_proj [E, dim, F]) made from a checkpoint's own forms: one tensor per expert
// (Mixtral's block_sparse_moe.experts.E.w1/w3/w2, Qwen3-MoE's mlp.experts.E.gate/up/down_proj), or GPT-OSS's
// fused and transposed mlp.experts.gate_up_proj [E, dim, 2F] (gate and up interleaved by column) and
// down_proj [E, F, dim] with their biases.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/dtype.h"
#include "runtime/model/config.h"

namespace bs {

class Checkpoint;

// Per-layer internal names (after "blk.N.") of a MoE layer's FFN, in the order the converter writes them.
std::vector<std::string> moe_layer_tensors(const ModelConfig& c);
// The shape of one of them (n after "blk.N."), or nullopt when n is not a MoE tensor.
std::optional<std::vector<int64_t>> moe_tensor_shape(const ModelConfig& c, std::string_view n);
// Whether `rest` (a checkpoint name after "model.") is an expert tensor of model_type that moe_stacked
// consumes rather than one mapped by name.
bool is_expert_source(std::string_view model_type, std::string_view rest);

// One stacked tensor: `row(r, out)` writes row r of the tensor viewed as [rows, shape.back()] as floats.
// `name` is the manifest's (HF-style) name.
struct StackedTensor {
  std::string internal, name;
  std::vector<int64_t> shape;
  DType source_dtype = DType::BF16;
  uint64_t source_bytes = 0;
  std::function<void(int64_t, float*)> row;
  // GPT-OSS's MXFP4 experts (*_blocks, *_scales): rows already MXFP4, written as they are (nibbles reordered to
  // GGML's block order, no re-quantization); `row` is then empty.
  std::function<void(int64_t, uint8_t*)> mxfp4_row;
};
// The checkpoint tensors an HF model of this architecture holds for layer l's experts (what moe_stacked reads):
// per-expert matrices, or GPT-OSS's fused ones and their biases (synth writes these).
struct HfExpertTensor {
  std::string name;
  std::vector<int64_t> shape;
  bool bias = false;
};
std::vector<HfExpertTensor> moe_hf_tensors(const ModelConfig& c, int32_t l);
// Every stacked tensor of the checkpoint's MoE layers; fails naming the missing or misshapen source tensor.
std::vector<StackedTensor> moe_stacked(const ModelConfig& c, const Checkpoint& ck, const std::string& label);

}  // namespace bs
