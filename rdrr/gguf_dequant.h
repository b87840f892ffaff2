// GGML tensor types RDRR does not hold, on their way into an import: the legacy 32-blocks (Q4_0, Q4_1,
// Q5_0, Q5_1) and the K-quants Q2_K, Q3_K and Q5_K. Two ways in, the nearest RDRR type for each:
//  - Q4_0 and Q5_0 become Q8_0 exactly: the same 32-value blocks with the same f16 scale, and integer
//    quants (q - 8, q - 16) that fit Q8_0's int8, so every dequantized value is unchanged;
//  - the others have an offset (Q4_1, Q5_1: + m; K-quants: - dmin * min) or scales Q8_0 cannot take
//    per 32 values, so they are dequantized (in f32, in ggml's order of operations) and rounded to F16;
//    the loss is that rounding, measured per tensor.
// The importance-matrix types (IQ*), the ternary ones (TQ*), MXFP4 and the dot-product-only Q8_1/Q8_K
// are not converted: their decoding needs ggml's lattice tables; the import refuses them by name.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "rdrr/gguf.h"

namespace bs::gguf {

// The RDRR type a tensor of type `t` is converted to; nullopt when it is not converted.
std::optional<DType> converted_dtype(GgmlType t);

// What a conversion changed: the largest |new - old| over the values, and the largest |old| (for a
// relative figure). Both 0 for exact conversions.
struct ConversionLoss {
  double max_abs_error = 0, max_abs = 0;
};

// Converts `n` values (whole blocks of `from`) in `in` to converted_dtype(from), appending to `out`.
ConversionLoss convert_blocks(GgmlType from, std::span<const std::byte> in, uint64_t n,
                              std::vector<std::byte>& out);

// ggml's dequantization of `n` values of `t` (Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q5_K).
void dequantize_ggml(GgmlType t, const std::byte* in, float* out, uint64_t n);

}  // namespace bs::gguf
