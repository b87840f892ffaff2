// The GGUF import's byte transforms: a tensor's bytes as RDRR stores them (see gguf_import.h for what
// changes).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "rdrr/gguf_dequant.h"
#include "rdrr/gguf_import_arch.h"
#include "rdrr/quant.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs::gguf_import {

// A tensor's bytes as stored: rows converted to F32 / F16 where the type changes, q/k rows in HF
// order. Returns `in` itself when nothing changes (most tensors: no copy of the mapped file).
std::span<const std::byte> stored_bytes(const GgufImportPlan::Tensor& t, std::span<const std::byte> in,
                                        int32_t head_dim, std::vector<std::byte>& out,
                                        std::vector<std::byte>& dequantized, gguf::ConversionLoss& loss) {
  if (t.total_rows > 0 && t.shape[0] != t.total_rows) {  // a part of a fused tensor: its rows
    const size_t row = in.size() / size_t(t.total_rows);
    in = in.subspan(size_t(t.row0) * row, size_t(t.shape[0]) * row);
  }
  if (t.convert) {
    uint64_t n = 1;
    for (int64_t d : t.shape) n *= uint64_t(d);
    dequantized.clear();
    loss = gguf::convert_blocks(*t.convert, in, n, dequantized);
    in = dequantized;
  }
  DType source = t.source;  // the type `in` holds
  std::vector<std::byte> wide;
  if (t.to_f16 && traits(source).quantized) {
    uint64_t n = 1;
    for (int64_t d : t.shape) n *= uint64_t(d);
    std::vector<float> f(n);
    dequantize_row(source, in.data(), f.data(), int64_t(n));
    wide.resize(2 * n);
    loss = {};
    for (uint64_t i = 0; i < n; ++i) {
      const uint16_t h = float_to_half(f[i]);
      std::memcpy(wide.data() + 2 * i, &h, 2);
      loss.max_abs_error = std::max(loss.max_abs_error, std::abs(double(half_to_float(h)) - f[i]));
      loss.max_abs = std::max(loss.max_abs, std::abs(double(f[i])));
    }
    in = wide;
    source = DType::F16;
  }
  std::span<const std::byte> src = in;
  std::vector<std::byte> converted;
  if (t.stored != source || t.add != 0 || t.a_log) {
    const uint64_t n = in.size() / traits(source).block_bytes;
    converted.resize(n * traits(t.stored).block_bytes);
    for (uint64_t i = 0; i < n; ++i) {
      float f;
      if (source == DType::F32) {
        std::memcpy(&f, in.data() + 4 * i, 4);
      } else {
        uint16_t v;
        std::memcpy(&v, in.data() + 2 * i, 2);
        f = source == DType::BF16 ? bf16_to_float(v) : half_to_float(v);
      }
      f += t.add;
      if (t.a_log) {
        if (!(f < 0) || !std::isfinite(f))
          fail("tensor '{}'[{}]: expected A = -exp(A_log) < 0, got {}", t.info->name, i, f);
        f = gguf_import::a_log_of(f);
      }
      if (t.stored == DType::F32) {
        std::memcpy(converted.data() + 4 * i, &f, 4);
      } else {
        uint16_t hv = float_to_half(f);
        std::memcpy(converted.data() + 2 * i, &hv, 2);
      }
    }
    src = converted;
  }
  if (!t.row_order.empty()) {  // Qwen 3.5's v heads, back in HF's grouped order
    const size_t rows = size_t(t.shape[0]), row = src.size() / rows;
    out.resize(src.size());
    if (t.col_group == 0) {
      for (size_t r = 0; r < rows; ++r)
        std::memcpy(out.data() + r * row, src.data() + size_t(t.row_order[r]) * row, row);
    } else {
      const size_t unit = row / t.row_order.size();  // bytes of one head's columns in a row
      for (size_t r = 0; r < rows; ++r)
        for (size_t u = 0; u < t.row_order.size(); ++u)
          std::memcpy(out.data() + r * row + u * unit, src.data() + r * row + size_t(t.row_order[u]) * unit,
                      unit);
    }
    return out;
  }
  if (t.unpermute_heads == 0) {
    if (src.data() == in.data()) return in;
    out.assign(src.begin(), src.end());
    return out;
  }
  // GGUF row h*hd + 2i + j holds HF row h*hd + j*hd/2 + i (export-gguf's permutation, inverted).
  const size_t rows = size_t(t.shape[0]), row = src.size() / rows, hd = size_t(head_dim), half = hd / 2;
  out.resize(src.size());
  for (size_t h = 0; h < size_t(t.unpermute_heads); ++h)
    for (size_t i = 0; i < half; ++i)
      for (size_t j = 0; j < 2; ++j)
        std::memcpy(out.data() + (h * hd + j * half + i) * row, src.data() + (h * hd + 2 * i + j) * row, row);
  return out;
}

}  // namespace bs::gguf_import
