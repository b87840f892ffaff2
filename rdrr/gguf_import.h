// GGUF (llama.cpp's single-file model format) -> RDRR model directory: `blueshift convert FILE.gguf
// OUT_DIR`. The models users already have, without going back to the safetensors checkpoint.
//
// The metadata ({arch}.block_count, .embedding_length, ...) becomes the config.json the same
// architecture's HF checkpoint has, so the model config comes out of config_from_hf like convert's.
// Tensors keep their bytes (blueshift's Q4_K/Q6_K/Q8_0 blocks are GGML's); only names, dims order
// (GGUF ne[0] is the row length: the reverse of the HF shape) and these change:
//  - llama.cpp's converter permutes the rows of attn_q / attn_k of the llama architecture per head
//    (HF rotates the halves (i, i + head_dim/2), llama.cpp adjacent pairs (2i, 2i + 1)); the import
//    undoes it, so RDRR holds HF order. Rows are quantized one by one, so whole rows of bytes move.
//  - Gemma 2/3: llama.cpp's converter stores every RMSNorm weight as 1 + w; the import subtracts 1 (exact in
//    f32 for the weights norms have, and the runtime's 1 + w then gives back llama.cpp's value bit for bit);
//  - Phi-3: attn_qkv and gate|up ffn_up are split by rows; LongRoPE's factor tensors become rope_scaling;
//  - Mixture of experts (gguf_import_moe.cpp): stacked expert tensors keep their bytes (MXFP4 included: GGML's
//    block_mxfp4 is blueshift's); gate and up experts stored apart are joined per expert into ffn_gate_up_exps;
//  - Gemma 4 (gguf_import_gemma.cpp): per-layer sizes, KV sharing, per-layer inputs, proportional RoPE read
//    from the rope_freqs tensor;
//  - Qwen 3.5 (gguf_import_qwen35.cpp): 1 + w norms, -exp(A_log), v heads reordered, all taken back;
//  - 1-D tensors (norms, biases, experts' biases) are stored F32 and 2-D F32 matrices F16, as convert stores them.
// Types RDRR does not hold become the nearest one it does (rdrr/gguf_dequant.h: Q4_0/Q5_0 exactly as Q8_0;
// Q4_1, Q5_1, Q2_K, Q3_K, Q5_K dequantized to F16, the f16 rounding measured and stated); the others (IQ*,
// TQ*, MXFP4 outside experts, Q8_1, Q8_K, F64, integers) fail naming the tensor and its type.
// Output goes through PartialDir as convert's does (temporary sibling, renamed at the end).
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rdrr/convert.h"
#include "rdrr/gguf.h"

namespace bs {

// True when `path` is a regular file that begins with GGUF's magic.
bool is_gguf_file(const std::filesystem::path& path);

// What an import will write, worked out from the header alone (no tensor data is read).
struct GgufImportPlan {
  struct Tensor {
    const gguf::TensorInfo* info;  // the GGUF tensor (points into the header)
    std::string internal, hf_name;
    std::vector<int64_t> shape;  // HF order
    DType source = DType::F32, stored = DType::F32;
    int32_t unpermute_heads = 0;  // > 0: undo llama.cpp's q/k row permutation over this many heads
    // Rows [row0, row0 + shape[0]) of the GGUF tensor, which has total_rows: a part of a fused one (Phi-3's
    // attn_qkv and gate|up ffn_up), split as convert splits HF's qkv_proj / gate_up_proj.
    int64_t row0 = 0, total_rows = 0;
    float add = 0;  // added to every value: -1 takes Gemma's (1 + w) norms back to HF's w
    // A GGML type RDRR does not hold, converted to `source` (gguf_dequant.h: Q4_0/Q5_0 -> Q8_0 exactly,
    // Q4_1/Q5_1/Q2_K/Q3_K/Q5_K dequantized to F16).
    std::optional<gguf::GgmlType> convert;
    // llama.cpp's ffn_up_exps (or its bias) when `info` is ffn_gate_exps: the two become blueshift's
    // ffn_gate_up_exps, each expert's gate rows followed by its up rows (the same type, whole rows of bytes).
    const gguf::TensorInfo* up = nullptr;
    // Qwen 3.5's v heads back in HF's order: stored row i is the file's row_order[i]; or, with col_group > 0,
    // stored column group i (col_group columns) of every row is the file's group row_order[i].
    std::vector<int64_t> row_order;
    int64_t col_group = 0;
    bool to_f16 = false;  // columns to move inside blocks: dequantized to F16 first
    bool a_log = false;  // the file holds -exp(A_log) (Qwen 3.5's ssm_a): stored as A_log
  };
  std::string gguf_arch;     // general.architecture
  nlohmann::json hf_config;  // the config.json it stands for
  ModelConfig config;
  std::vector<Tensor> tensors;  // in expected_tensors order
  std::string quantization;     // F16, Q8_0, Q4_K_M, ... (from the matrices' types)
  std::string chat_template;    // tokenizer.chat_template, when present
  int mtp_tensors = 0;
  int unused_kv_tensors = 0;    // Gemma 4: k / v weights of KV-shared layers, left out          // Qwen 3.5's multi-token-prediction blocks' tensors, left out
};

// Checks the header as an import needs it (architecture, hyperparameters, every tensor's name, type
// and dims); throws bs::Error(input) naming `label`, the field or tensor, expected vs actual.
// `file` (the whole file; empty for a header-only check) is where the few tensors that become config
// values are read from: Phi-3's LongRoPE factors.
GgufImportPlan plan_gguf_import(const gguf::Header& h, const std::string& label,
                                std::span<const std::byte> file = {});

// GGUF's vocabulary (tokenizer.ggml.*) as HF files, for byte-level BPE ("gpt2" model) with a known
// pre-tokenizer (tokenizer.ggml.pre: llama-bpe/llama3/lfm2/..., qwen2, gpt-2/default):
// tokenizer.json (tokens in id order; control tokens as special added tokens, user-defined ones as
// plain added tokens, unused ones left out; merges; the pre-tokenizer's split regex) and
// tokenizer_config.json (bos/eos, add_bos_token, chat_template). A vocabulary of another kind is not
// converted and `why` says so (an empty result); a malformed one throws bs::Error(input) naming the field.
struct GgufTokenizer {
  nlohmann::json tokenizer, config;
  bool add_bos = false;
};
std::optional<GgufTokenizer> gguf_tokenizer(const gguf::Header& h, const std::string& label,
                                            std::string& why);

// Imports `gguf_file` into `out_dir`. Uses options.shards, threads, force, keep_partial and progress;
// options.quant does not apply (tensors keep their types).
ConvertResult import_gguf(const std::filesystem::path& gguf_file, const std::filesystem::path& out_dir,
                          const ConvertOptions& options);

}  // namespace bs
