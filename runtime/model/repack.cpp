#include "runtime/model/repack.h"

#include <cstring>

#include "rdrr/quant.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs::model {

namespace {

uint16_t u16_at(std::span<const std::byte> b, size_t i) {
  uint16_t v;
  std::memcpy(&v, b.data() + 2 * i, 2);
  return v;
}

float scale_at(std::span<const std::byte> b, DType t, size_t i) {
  if (t == DType::F32) {
    float f;
    std::memcpy(&f, b.data() + 4 * i, 4);
    return f;
  }
  return t == DType::BF16 ? bf16_to_float(u16_at(b, i)) : half_to_float(u16_at(b, i));
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

}  // namespace

std::vector<std::byte> widen_to_f32(DType t, std::span<const std::byte> in) {
  size_t n = in.size() / 2;
  std::vector<std::byte> out(n * 4);
  for (size_t i = 0; i < n; ++i) {
    float f = t == DType::BF16 ? bf16_to_float(u16_at(in, i)) : half_to_float(u16_at(in, i));
    std::memcpy(out.data() + 4 * i, &f, 4);
  }
  return out;
}

std::vector<std::byte> bf16_to_f16(std::span<const std::byte> in) {
  size_t n = in.size() / 2;
  std::vector<std::byte> out(n * 2);
  for (size_t i = 0; i < n; ++i) {
    uint16_t h = float_to_half(bf16_to_float(u16_at(in, i)));
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::vector<std::byte> w4a16_to_q8_0(std::span<const std::byte> packed, std::span<const std::byte> scales,
                                     DType scale_dtype, int64_t rows, int64_t k, uint64_t* rounded) {
  const size_t groups = size_t(k) / 32, n = size_t(rows) * groups;
  std::vector<std::byte> out(n * 34);
  uint64_t inexact = 0;
  for (size_t g = 0; g < n; ++g) {
    float s = scale_at(scales, scale_dtype, g);
    uint16_t d = float_to_half(s);
    inexact += half_to_float(d) != s;
    std::byte* blk = out.data() + 34 * g;
    std::memcpy(blk, &d, 2);
    const std::byte* q = packed.data() + 16 * g;
    for (size_t i = 0; i < 16; ++i) {
      uint8_t v = uint8_t(q[i]);
      blk[2 + 2 * i] = std::byte(int8_t((v & 15) - 8));  // weight 2i: the low nibble
      blk[3 + 2 * i] = std::byte(int8_t((v >> 4) - 8));  // weight 2i + 1: the high one
    }
  }
  if (rounded) *rounded = inexact;
  return out;
}

std::vector<std::byte> q4k_col_to_f16(std::span<const std::byte> in, int64_t m, int64_t k) {
  const int64_t mp = int64_t(padded_blocks(DType::Q4_K, uint64_t(m))) * 256;
  const uint64_t rb = padded_row_bytes(DType::Q4_K, uint64_t(m));
  std::vector<float> col(static_cast<size_t>(mp));
  std::vector<std::byte> out(size_t(m) * size_t(k) * 2);
  auto* o = reinterpret_cast<uint16_t*>(out.data());
  for (int64_t c = 0; c < k; ++c) {  // stored row c is column c of W
    dequantize_row(DType::Q4_K, in.data() + uint64_t(c) * rb, col.data(), mp);
    for (int64_t r = 0; r < m; ++r) o[size_t(r) * size_t(k) + size_t(c)] = float_to_half(col[size_t(r)]);
  }
  return out;
}

void int4_row(std::span<const std::byte> table, std::span<const std::byte> scales, int64_t cols, int64_t row, float* out) {
  const uint64_t rb = padded_row_bytes(DType::I4, uint64_t(cols));
  const std::byte* q = table.data() + uint64_t(row) * rb;
  float s;
  std::memcpy(&s, scales.data() + 4 * size_t(row), 4);
  for (int64_t c = 0; c < cols; ++c) {
    uint8_t v = uint8_t(q[c / 2]);
    out[c] = float(int((c & 1) ? v >> 4 : v & 15) - 8) * s;
  }
}

uint64_t runnable_bytes(const TensorEntry& t) {
  if (!t.companion_of.empty() || t.skipped) return 0;  // folded into the tensor it serves; a tower
  if (t.dtype == DType::W4A16) return t.size / 16 * 34;
  if (t.layout == Layout::flat && t.shape.size() != 2 && traits(t.dtype).block_elems > 1) {
    uint64_t n = 1;
    for (auto d : t.shape) n *= uint64_t(d);
    return n * 4;  // dequantized to F32 (runnable_form)
  }
  if (t.dtype == DType::Q4_K && t.layout == Layout::col) return t.shape.size() == 2 ? uint64_t(t.shape[0] * t.shape[1]) * 2 : 0;
  if ((t.dtype == DType::F16 || t.dtype == DType::BF16) && t.shape.size() != 2 && !t.internal.ends_with("_exps"))
    return t.size * 2;
  return gpu_bytes(t.dtype, t.size);  // Q6_K: blocks padded on the GPU
}

bool runnable_as_stored(const TensorEntry& t) {
  if (!t.companion_of.empty() || t.skipped || t.internal.empty()) return false;
  if (t.layout == Layout::flat && t.shape.size() != 2 && traits(t.dtype).block_elems > 1) return false;  // to F32
  switch (t.dtype) {
    case DType::F16: return t.shape.size() == 2 || t.internal.ends_with("_exps");  // else widened to F32
    case DType::Q4_K: return t.layout != Layout::col;                               // "col": converted to F16
    case DType::Q8_0:
    case DType::F32: return true;
    default: return false;  // BF16 (converted), Q6_K (padded on the way up), W4A16 (repacked), the rest
  }
}

uint64_t runnable_bytes(const TensorView& t) {
  const uint64_t elems = t.shape.size() == 2 ? uint64_t(t.shape[0]) * uint64_t(t.shape[1]) : 0;
  switch (t.repack) {
    case Repack::w4a16_to_q8_0: return elems / 32 * 34;
    case Repack::q4k_col_to_f16: return elems * 2;
    case Repack::none: break;
  }
  return t.data.size();
}

std::span<const std::byte> host_runnable(const TensorView& t, std::vector<std::byte>& storage) {
  switch (t.repack) {
    case Repack::w4a16_to_q8_0: storage = w4a16_to_q8_0(t.data, t.scales, t.scale_dtype, t.shape[0], t.shape[1]); break;
    case Repack::q4k_col_to_f16: storage = q4k_col_to_f16(t.data, t.shape[0], t.shape[1]); break;
    case Repack::none: return t.data;
  }
  return storage;
}

Runnable runnable_form(const TensorEntry& t, std::span<const std::byte> bytes, const Companions& c,
                       const std::string& label, bool defer) {
  Runnable r{t.dtype, t.shape, {}, bytes};
  // A blocked tensor of other than 2 dims packed flat (DOPPLER quantizes LFM2's conv kernels
  // [dim, 1, width] so, as one stream of blocks): no matrix kernel reads it, so it becomes F32.
  if (t.layout == Layout::flat && t.shape.size() != 2 && traits(t.dtype).block_elems > 1) {
    uint64_t n = 1;
    for (auto d : t.shape) n *= uint64_t(d);
    std::vector<float> f(padded_blocks(t.dtype, n) * traits(t.dtype).block_elems);
    dequantize_row(t.dtype, bytes.data(), f.data(), int64_t(f.size()));
    std::vector<std::byte> out(n * 4);
    std::memcpy(out.data(), f.data(), n * 4);
    r.dtype = DType::F32;
    r.owned = std::move(out);
    r.data = r.owned;
    return r;
  }
  // The loader converts it (GPU or host); here it is only named.
  auto deferred = [&](DType dt, Repack how) {
    r.dtype = dt;
    r.repack = how;
    r.scales = c.scales;
    r.scale_dtype = c.scale_dtype;
  };
  auto own = [&](DType dt, std::vector<std::byte> b) {
    r.dtype = dt;
    r.owned = std::move(b);
    r.data = r.owned;
  };
  const auto& tr = traits(t.dtype);
  const int64_t k = t.shape.empty() ? 1 : t.shape.back();
  switch (t.dtype) {
    case DType::F16:
    case DType::BF16:
      // Vectors, and Qwen 3.5's conv kernels [channels, 1, width], run as F32; matrices (MoE experts
      // [experts, rows, cols] too) as F16.
      if (t.shape.size() != 2 && !t.internal.ends_with("_exps")) own(DType::F32, widen_to_f32(t.dtype, bytes));
      else if (t.dtype == DType::BF16) own(DType::F16, bf16_to_f16(bytes));
      return r;
    case DType::W4A16: {
      // The I64 (or I32) shape companion must agree with the manifest's shape.
      std::vector<int64_t> logical;
      for (size_t i = 0; i < 2; ++i) {
        int64_t v = 0;
        if (c.shape_dtype == DType::I64) {
          std::memcpy(&v, c.shape.data() + 8 * i, 8);
        } else {
          int32_t v32;
          std::memcpy(&v32, c.shape.data() + 4 * i, 4);
          v = v32;
        }
        logical.push_back(v);
      }
      if (logical != t.shape)
        fail("{}: tensors['{}']: its shape companion '{}' holds {}, the manifest says {}", label, t.name, t.shape_tensor,
             shape_str(logical), shape_str(t.shape));
      if (k % 32)
        fail("{}: tensors['{}']: W4A16 rows of {} values (not a multiple of 32) cannot become Q8_0 rows", label, t.name, k);
      if (defer) deferred(DType::Q8_0, Repack::w4a16_to_q8_0);
      else own(DType::Q8_0, w4a16_to_q8_0(bytes, c.scales, c.scale_dtype, t.shape[0], k));
      return r;
    }
    case DType::Q4_K:
      if (t.layout == Layout::col) {
        if (defer) deferred(DType::F16, Repack::q4k_col_to_f16);
        else own(DType::F16, q4k_col_to_f16(bytes, t.shape[0], t.shape[1]));
        return r;
      }
      if (t.layout == Layout::flat && t.shape.size() >= 2 && k % 256)
        fail("{}: tensors['{}']: Q4_K {} packed flat (no \"layout\": \"row\"): its rows of {} do not start on block "
             "boundaries, so no matrix kernel reads it",
             label, t.name, shape_str(t.shape), k);
      if (k % 4) fail("{}: tensors['{}']: Q4_K rows of {} values: the Q4_K kernels need a multiple of 4", label, t.name, k);
      return r;
    case DType::Q8_0:
    case DType::Q6_K:
      if (k % tr.block_elems)
        fail("{}: tensors['{}']: {} rows of {} values padded to whole blocks: only the Q4_K kernels read padded rows",
             label, t.name, tr.name, k);
      return r;
    default:
      return r;
  }
}

}  // namespace bs::model
