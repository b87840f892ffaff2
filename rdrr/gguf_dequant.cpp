// The block layouts are ggml-common.h's; the arithmetic follows ggml's reference dequantize_row_* (f32,
// the same order of operations), so F16 output differs from llama.cpp's values by f16 rounding only.
#include "rdrr/gguf_dequant.h"

#include <cmath>
#include <cstring>

#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs::gguf {

namespace {

float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return half_to_float(h);
}

// Q4_K / Q5_K's 6-bit scale and min of sub-block j from the 12 packed bytes.
void scale_min_k4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// One 32-value block of Q4_0 (offset 8) or Q5_0 (offset 16) as its integer quants, q - offset.
void legacy_quants(GgmlType t, const uint8_t* b, int8_t* q) {
  const bool five = t == GgmlType::Q5_0 || t == GgmlType::Q5_1;
  const bool has_min = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
  const uint8_t* qs = b + (has_min ? 4 : 2) + (five ? 4 : 0);
  uint32_t qh = 0;
  if (five) std::memcpy(&qh, b + (has_min ? 4 : 2), 4);
  const int offset = has_min ? 0 : five ? 16 : 8;
  for (int j = 0; j < 16; ++j) {
    int x0 = qs[j] & 0x0F, x1 = qs[j] >> 4;
    if (five) {
      x0 |= int(((qh >> j) << 4) & 0x10);
      x1 |= int((qh >> (j + 12)) & 0x10);
    }
    q[j] = int8_t(x0 - offset);
    q[j + 16] = int8_t(x1 - offset);
  }
}

void dequantize_block(GgmlType t, const uint8_t* b, float* y) {
  switch (t) {
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_1: {
      int8_t q[32];
      legacy_quants(t, b, q);
      const float d = f16_at(b);
      const bool has_min = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
      const float m = has_min ? f16_at(b + 2) : 0.0f;
      for (int j = 0; j < 32; ++j) y[j] = has_min ? float(q[j]) * d + m : float(q[j]) * d;
      return;
    }
    case GgmlType::Q2_K: {
      const uint8_t *scales = b, *q = b + 16;
      const float d = f16_at(b + 80), min = f16_at(b + 82);
      int is = 0;
      for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2)
          for (int half = 0; half < 2; ++half) {
            const uint8_t sc = scales[is++];
            const float dl = d * float(sc & 0xF), ml = min * float(sc >> 4);
            for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
          }
      return;
    }
    case GgmlType::Q3_K: {
      const uint8_t *hm = b, *q = b + 32;
      const float d_all = f16_at(b + 108);
      // The 16 6-bit scales: low 4 bits from bytes 0..7, high 2 bits from bytes 8..11.
      uint32_t aux[4];
      std::memcpy(aux, b + 96, 12);
      const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = aux[2];
      aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
      aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
      aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
      aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
      int8_t scales[16];
      std::memcpy(scales, aux, 16);
      int is = 0;
      uint8_t m = 1;
      for (int n = 0; n < 256; n += 128, q += 32)
        for (int shift = 0; shift < 8; shift += 2, m = uint8_t(m << 1))
          for (int half = 0; half < 2; ++half) {
            const float dl = d_all * float(scales[is++] - 32);
            for (int l = 0; l < 16; ++l) {
              const int i = l + 16 * half;
              *y++ = dl * float(int((q[i] >> shift) & 3) - ((hm[i] & m) ? 0 : 4));
            }
          }
      return;
    }
    case GgmlType::Q5_K: {
      const float d = f16_at(b), min = f16_at(b + 2);
      const uint8_t *scales = b + 4, *qh = b + 16, *ql = b + 48;
      uint8_t u1 = 1, u2 = 2;
      for (int j = 0, is = 0; j < 256;
           j += 64, ql += 32, is += 2, u1 = uint8_t(u1 << 2), u2 = uint8_t(u2 << 2)) {
        uint8_t sc, m;
        scale_min_k4(is, scales, sc, m);
        const float d1 = d * float(sc), m1 = min * float(m);
        scale_min_k4(is + 1, scales, sc, m);
        const float d2 = d * float(sc), m2 = min * float(m);
        for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
      }
      return;
    }
    default:
      fail_kind(ErrorKind::internal, "dequantize_ggml: type {} is not dequantized here", uint32_t(t));
  }
}

}  // namespace

std::optional<DType> converted_dtype(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
      return DType::Q8_0;
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q5_K:
      return DType::F16;
    default:
      return std::nullopt;
  }
}

void dequantize_ggml(GgmlType t, const std::byte* in, float* out, uint64_t n) {
  const auto tr = ggml_traits(t);
  if (!tr || !converted_dtype(t))
    fail_kind(ErrorKind::internal, "dequantize_ggml: type {} is not dequantized here", uint32_t(t));
  const auto* b = reinterpret_cast<const uint8_t*>(in);
  for (uint64_t i = 0; i < n / tr->block_elems; ++i)
    dequantize_block(t, b + i * tr->block_bytes, out + i * tr->block_elems);
}

ConversionLoss convert_blocks(GgmlType from, std::span<const std::byte> in, uint64_t n,
                              std::vector<std::byte>& out) {
  const auto tr = ggml_traits(from);
  const std::optional<DType> to = converted_dtype(from);
  if (!tr || !to || n % tr->block_elems || in.size() != n / tr->block_elems * tr->block_bytes)
    fail_kind(ErrorKind::internal, "convert_blocks: {} values do not fill the {} bytes of type {}", n,
              in.size(), uint32_t(from));
  const auto* b = reinterpret_cast<const uint8_t*>(in.data());
  ConversionLoss loss;
  const size_t at = out.size();
  if (*to == DType::Q8_0) {  // same scale, quants shifted into int8: exact
    out.resize(at + n / 32 * 34);
    for (uint64_t i = 0; i < n / 32; ++i) {
      const uint8_t* blk = b + i * tr->block_bytes;
      int8_t q[32];
      legacy_quants(from, blk, q);
      std::memcpy(out.data() + at + i * 34, blk, 2);
      std::memcpy(out.data() + at + i * 34 + 2, q, 32);
    }
    return loss;
  }
  out.resize(at + n * 2);
  std::vector<float> y(tr->block_elems);
  for (uint64_t i = 0; i < n / tr->block_elems; ++i) {
    dequantize_block(from, b + i * tr->block_bytes, y.data());
    for (size_t j = 0; j < y.size(); ++j) {
      const uint16_t h = float_to_half(y[j]);
      const double err = std::abs(double(half_to_float(h)) - double(y[j]));
      loss.max_abs_error = std::isnan(err) || err > loss.max_abs_error ? err : loss.max_abs_error;
      loss.max_abs = std::max(loss.max_abs, double(std::abs(y[j])));
      std::memcpy(out.data() + at + 2 * (i * tr->block_elems + j), &h, 2);
    }
  }
  return loss;
}

}  // namespace bs::gguf
