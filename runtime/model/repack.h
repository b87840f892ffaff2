// DOPPLER's stored forms turned, at load, into what blueshift's kernels read (the `bind` contract in
// model.cpp: matrices F16 | Q8_0 | Q4_K | Q6_K, vectors F32). Each conversion is exact unless its
// comment says otherwise. W4A16 and "col" Q4_K are converted by the loader, on the GPU (gpu_repack.h);
// their host functions here are what the GPU kernels must reproduce bit for bit.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rdrr/manifest.h"
#include "runtime/model/source.h"

namespace bs::model {

// A tensor in its runnable form: `data` points into `owned` when converted, else at the loaded bytes.
// A conversion left to the loader (runnable_form's `defer`) is named in `repack`, with `data` the stored
// bytes and `scales` a W4A16's group scales.
struct Runnable {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> owned;
  std::span<const std::byte> data;
  Repack repack = Repack::none;
  std::span<const std::byte> scales;
  DType scale_dtype = DType::BF16;
};

// A W4A16 tensor's companions, as loaded.
struct Companions {
  std::span<const std::byte> scales;
  DType scale_dtype = DType::BF16;
  std::span<const std::byte> shape;  // 2 x I64 (or I32)
  DType shape_dtype = DType::I64;
};

// The runnable form of `t` (manifest `label`) from its loaded bytes (and a W4A16's companions):
// F16/BF16 vectors become F32; BF16 matrices F16; W4A16 Q8_0; Q4_K "col" F16; Q4_K "row" with padded
// rows stays as it is (the Q4_K kernels read padded rows). What no kernel reads (padded Q8_0/Q6_K
// rows, flat Q4_K of a matrix whose rows are not whole blocks) fails naming t. With `defer`, W4A16 and
// "col" Q4_K are checked but left as stored, their conversion named in `repack`, for the loader to make
// on the GPU (gpu_repack.h) or with host_runnable.
Runnable runnable_form(const TensorEntry& t, std::span<const std::byte> bytes, const Companions& companions,
                       const std::string& label, bool defer = false);
// Whether t runs as its stored bytes, byte for byte on the GPU: runnable_form leaves them as they are (no conversion,
// nothing deferred) and the GPU takes them unpadded (not Q6_K). Such a tensor may be uploaded in pieces as its
// shards arrive (ModelSource::for_each_tensor's `parts`).
bool runnable_as_stored(const TensorEntry& t);
// Bytes runnable_form makes of t on the GPU (for the memory estimate before loading; Q6_K blocks padded, dtype.h).
uint64_t runnable_bytes(const TensorEntry& t);
// Bytes of t's runnable form: t.data's size, or what its repack makes of it.
uint64_t runnable_bytes(const TensorView& t);
// t's runnable bytes on the host: t.data, or its repack made into `storage` (w4a16_to_q8_0,
// q4k_col_to_f16: the references the GPU repack kernels match bit for bit).
std::span<const std::byte> host_runnable(const TensorView& t, std::vector<std::byte>& storage);

// Vectors of F16 or BF16 (norm weights, biases) as F32: exact.
std::vector<std::byte> widen_to_f32(DType t, std::span<const std::byte> in);
// BF16 as F16: exact for |x| in [2^-14, 65504] with at most 11 significant bits (every BF16 value in
// that range); smaller magnitudes round into f16's subnormals, larger overflow to inf.
std::vector<std::byte> bf16_to_f16(std::span<const std::byte> in);

// W4A16 (compressed-tensors int4, dtype.h) [rows, k], k % 32 == 0, with its group scales [rows, k / 32]
// (BF16 | F16 | F32), as Q8_0 rows: each group of 32 is one block, code = nibble - 8, d = the scale as
// f16. Exact (every weight (q - 8) * s is reproduced bit for bit) wherever the scale is an f16 without
// rounding: every BF16 scale of magnitude >= 2^-17 and <= 65504; `rounded` counts the others.
// Q8_0 needs 34 bytes per 32 weights where W4A16 has 16 + 2: 1.9x the memory, for kernels that exist.
std::vector<std::byte> w4a16_to_q8_0(std::span<const std::byte> packed, std::span<const std::byte> scales,
                                     DType scale_dtype, int64_t rows, int64_t k, uint64_t* rounded = nullptr);

// DOPPLER's transposed Q4_K ("col") of a matrix [m, k]: k rows of m values padded to whole blocks,
// dequantized and transposed into F16 [m, k]. Rounds each weight once, to f16 (there is no exact
// Q4_K re-blocking along the other axis).
std::vector<std::byte> q4k_col_to_f16(std::span<const std::byte> in, int64_t m, int64_t k);

// Row `row` of DOPPLER's int4 per-row table [rows, cols] (dtype I4: nibbles low first, offset by 8)
// and its F32 row scales: out[c] = (nibble - 8) * scale[row], the product rounded once to f32 (as
// DOPPLER's dequant stores it). The lookup a per-layer
// embedding does per token.
void int4_row(std::span<const std::byte> table, std::span<const std::byte> scales, int64_t cols, int64_t row, float* out);

}  // namespace bs::model
