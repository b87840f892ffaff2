// safetensors checkpoint -> RDRR model directory. Streaming: one tensor at a time, in chunks of rows
// quantized in parallel, written through the shard writer (about two shards in memory). The model is
// built in a temporary directory next to the output and renamed into place at the end, so an
// interrupted conversion never leaves a partial model at OUT_DIR.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "rdrr/manifest.h"
#include "sharding/writer.h"

namespace bs {

// mxfp4: MoE experts in MXFP4 (as GPT-OSS ships them), every other matrix F16 (as GPT-OSS ships the rest).
enum class QuantMode { f16, q8_0, q4_k_m, mxfp4 };
QuantMode parse_quant_mode(const std::string& s);  // "f16", "q8_0", "q4_k_m", "mxfp4"; throws usage error

struct ConvertOptions {
  QuantMode quant = QuantMode::q4_k_m;
  ShardWriterOptions shards;
  int threads = 0;    // quantization threads; 0 = hardware_concurrency
  bool force = false; // replace an existing OUT_DIR
  bool keep_partial = false;  // report stale .OUT_DIR.partial-* siblings instead of removing them
  std::function<void(uint64_t done, uint64_t total)> progress;  // checkpoint bytes consumed
};

struct ConvertResult {
  Manifest manifest;
  uint64_t source_bytes = 0;  // checkpoint bytes of the converted tensors
  double seconds = 0;
};

ConvertResult convert_model(const std::filesystem::path& hf_dir, const std::filesystem::path& out_dir,
                            const ConvertOptions& options);

// The dtype the policy asks for (before the row-length fallback of storable_dtype):
//   1-D tensors (norms, biases) F32; f16: F16; q8_0: Q8_0;
//   q4_k_m: Q6_K for embed and output, and for attn_v and ffn_down in the layers llama.cpp's Q4_K_M
//   promotes (the first and last eighth of the layers and every third layer between); Q4_K otherwise.
DType requested_dtype(QuantMode mode, const ModelConfig& c, const std::string& internal, size_t rank);

// Layers whose attn_v and ffn_down get Q6_K under q4_k_m (llama.cpp's use_more_bits rule).
bool promoted_layer(int32_t layer, int32_t n_layers);

}  // namespace bs
