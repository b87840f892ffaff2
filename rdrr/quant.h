// GGML block quantization on the CPU: Q8_0, Q4_K and Q6_K rows, byte for byte in GGML's layout
// (see runtime/base/dtype.h). The quantizers search for block scales that minimize weighted squared
// error; the dequantizers are the plain reference the GPU kernels are tested against.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/base/dtype.h"

namespace bs {

// Writes `n` values of `src` as dtype `t` (F32, F16, BF16, Q8_0, Q4_K or Q6_K) into `dst`, which holds
// row_bytes(t, n) bytes. For block types n must be a multiple of the block size.
void quantize_row(DType t, const float* src, void* dst, int64_t n);

// Reads `n` values of dtype `t` from `src` into `dst` (the reference dequantization).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// Block quantizers of one block each, exposed for tests.
void quantize_block_q8_0(const float* x, uint8_t* out);    // 32 values -> 34 B
void quantize_block_q4_k(const float* x, uint8_t* out);    // 256 values -> 144 B
void quantize_block_q6_k(const float* x, uint8_t* out);    // 256 values -> 210 B
void quantize_block_mxfp4(const float* x, uint8_t* out);   // 32 values -> 17 B
// The plain min/max Q4_K quantizer (no search), kept as the baseline the tests compare against.
void quantize_block_q4_k_minmax(const float* x, uint8_t* out);

// What the converter stores for a 2-D weight [rows, K] when `requested` was asked for: the block
// type when K is a multiple of its block, else Q8_0 when K % 32 == 0, else F16. `reason` says why
// a fallback was taken (empty when none).
DType storable_dtype(DType requested, int64_t k, std::string* reason);

}  // namespace bs
