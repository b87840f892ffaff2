#include "rdrr/synth_like_gen.h"

#include <algorithm>
#include <cstring>

#include "rdrr/quant.h"
#include "rdrr/synth.h"
#include "runtime/base/half.h"

namespace bs {

namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;
constexpr uint32_t kQkK = 256;                            // values per Q4_K / Q6_K block
constexpr uint32_t kQ4KBytes = 144, kQ6KBytes = 210;
constexpr uint32_t kW4Group = 32, kW4GroupBytes = 16;     // compressed-tensors group: 32 int4 in 16 B

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Uniform in [0, 1) from 24 bits of h.
float unit_float(uint64_t h) { return float(h & 0xffffff) * (1.0f / 16777216.0f); }

uint32_t elem_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

void put_value(DType t, float v, uint8_t* p) {
  if (t == DType::F32) {
    std::memcpy(p, &v, 4);
    return;
  }
  uint16_t h = t == DType::BF16 ? float_to_bf16(v) : float_to_half(v);
  std::memcpy(p, &h, 2);
}

void put_half(uint8_t* p, float f) {
  uint16_t h = float_to_half(f);
  std::memcpy(p, &h, 2);
}

// One block_q4_K of `valid` real values (the rest padding): w = d*sc*q - dmin*m per 32-value sub-block.
// Random codes q in [0, 15] are uniform (std 4.6), so a step d*sc ~ std / 4.6 and an offset
// dmin*m ~ 7.5 steps centre the values on 0 with about `std` spread; sc, m in [32, 63] keep d a normal
// f16 (>= 2^-14) for std >= 0.02.
// A sub-block with padding gets m = 0 and its padded codes 0; a sub-block of padding only, sc = 0 too
// (as DOPPLER's quantizer writes it): either way the padding is exactly 0.
void q4_k_block(uint64_t key, uint64_t block, uint32_t valid, float std, uint8_t* out) {
  uint64_t h = synth_mix(key ^ synth_mix(block * 2 + 1));
  const float step = std / 4.6f, jitter = 0.75f + 0.5f * unit_float(h);
  put_half(out, step / 47.5f * jitter);
  put_half(out + 2, 7.5f * step / 47.5f * jitter);
  uint64_t hs = synth_mix(h), hm = synth_mix(hs);
  uint8_t sc[8], m[8];
  for (uint32_t j = 0; j < 8; ++j) {
    uint32_t lo = 32 * j, n = valid > lo ? std::min<uint32_t>(32, valid - lo) : 0;
    sc[j] = n == 0 ? 0 : uint8_t(32 + ((hs >> (5 * j)) & 31));
    m[j] = n < 32 ? 0 : uint8_t(32 + ((hm >> (5 * j)) & 31));
  }
  // GGML's 12-byte packing of eight 6-bit (sc, m) pairs: the low 6 bits of pairs 0-3 in bytes 0-7,
  // pairs 4-7 as low nibbles in bytes 8-11 with their top 2 bits in the high bits of bytes 0-7.
  for (uint32_t j = 0; j < 4; ++j) {
    out[4 + j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
    out[8 + j] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
    out[12 + j] = uint8_t((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
  uint8_t* qs = out + 16;
  for (uint32_t i = 0; i < 128; i += 8) {
    uint64_t c = synth_mix(key + (block * 16 + i / 8) * kGolden);
    std::memcpy(qs + i, &c, 8);
  }
  if (valid < kQkK)  // codes of padded values: value v lives in chunk v/64, byte v%32, high nibble if v%64 >= 32
    for (uint32_t v = valid; v < kQkK; ++v) {
      uint8_t& b = qs[32 * (v / 64) + v % 32];
      b = (v % 64) >= 32 ? uint8_t(b & 0x0f) : uint8_t(b & 0xf0);
    }
}

// One block_q6_K through the project's quantizer: values N(0, std), padding exactly 0.0f, which a
// symmetric code (q = 32) represents exactly.
void q6_k_block(uint64_t key, uint64_t block, uint32_t valid, float std, uint8_t* out) {
  float x[kQkK];
  for (uint32_t i = 0; i < kQkK; ++i) x[i] = i < valid ? std * synth_gauss(key, block * kQkK + i) : 0.0f;
  quantize_block_q6_k(x, out);
}

// One W4A16 group of 32 nibbles: uniform codes, the padded lanes 8 (offset-binary zero).
void w4a16_group(uint64_t key, uint64_t group, uint32_t valid, uint8_t* out) {
  for (uint32_t i = 0; i < kW4GroupBytes; i += 8) {
    uint64_t c = synth_mix(key + (group * 2 + i / 8) * kGolden);
    std::memcpy(out + i, &c, 8);
  }
  for (uint32_t lane = valid; lane < kW4Group; ++lane) {
    uint8_t& b = out[lane / 2];
    b = lane % 2 ? uint8_t((b & 0x0f) | 0x80) : uint8_t((b & 0xf0) | 0x08);
  }
}

}  // namespace

uint64_t ByteStream::size() const {
  switch (kind) {
    case StreamKind::normal:
    case StreamKind::positive: return rows * row_len * elem_bytes(dtype);
    case StreamKind::q4_k: return rows * ceil_div(row_len, kQkK) * kQ4KBytes;
    case StreamKind::q6_k: return rows * ceil_div(row_len, kQkK) * kQ6KBytes;
    case StreamKind::w4a16: return rows * ceil_div(row_len, kW4Group) * kW4GroupBytes;
    case StreamKind::int4_rows: return rows * ceil_div(row_len, 2);
    case StreamKind::int64: return values.size() * 8;
  }
  return 0;
}

uint32_t ByteStream::unit() const {
  switch (kind) {
    case StreamKind::normal:
    case StreamKind::positive: return elem_bytes(dtype);
    case StreamKind::q4_k: return kQ4KBytes;
    case StreamKind::q6_k: return kQ6KBytes;
    case StreamKind::w4a16: return kW4GroupBytes;
    case StreamKind::int4_rows: return 1;
    case StreamKind::int64: return 8;
  }
  return 1;
}

void ByteStream::units(uint64_t first, uint64_t count, uint8_t* dst) const {
  const uint32_t ub = unit();
  switch (kind) {
    case StreamKind::normal:
      for (uint64_t i = 0; i < count; ++i) put_value(dtype, mean + spread * synth_gauss(key, first + i), dst + i * ub);
      return;
    case StreamKind::positive:
      for (uint64_t i = 0; i < count; ++i)
        put_value(dtype, mean * (0.75f + 0.5f * unit_float(synth_mix(key + (first + i) * kGolden))), dst + i * ub);
      return;
    case StreamKind::q4_k:
    case StreamKind::q6_k: {
      const uint64_t per_row = ceil_div(row_len, kQkK);
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t b = first + i, in_row = b % per_row;
        uint32_t valid = uint32_t(std::min<uint64_t>(kQkK, row_len - in_row * kQkK));
        if (kind == StreamKind::q4_k) q4_k_block(key, b, valid, spread, dst + i * ub);
        else q6_k_block(key, b, valid, spread, dst + i * ub);
      }
      return;
    }
    case StreamKind::w4a16: {
      const uint64_t per_row = ceil_div(row_len, kW4Group);
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t g = first + i, in_row = g % per_row;
        w4a16_group(key, g, uint32_t(std::min<uint64_t>(kW4Group, row_len - in_row * kW4Group)), dst + i * ub);
      }
      return;
    }
    case StreamKind::int4_rows: {
      const uint64_t row_bytes = ceil_div(row_len, 2);
      const uint8_t pad = offset_binary ? 8 : 0;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t u = first + i, h = synth_mix(key + u * kGolden);
        int lo = 1 + int((h & 0xffff) % 15) - 8, hi = 1 + int(((h >> 16) & 0xffff) % 15) - 8;  // [-7, 7]
        auto code = [&](int v) { return uint8_t(offset_binary ? v + 8 : v & 15); };
        bool hi_pad = (u % row_bytes) * 2 + 1 >= row_len;
        dst[i] = uint8_t(code(lo) | ((hi_pad ? pad : code(hi)) << 4));
      }
      return;
    }
    case StreamKind::int64:
      for (uint64_t i = 0; i < count; ++i) {
        int64_t v = values[first + i];
        for (int k = 0; k < 8; ++k) dst[i * 8 + uint32_t(k)] = uint8_t(uint64_t(v) >> (8 * k));
      }
      return;
  }
}

void ByteStream::read(uint64_t begin, uint64_t end, uint8_t* dst) const {
  if (begin >= end) return;
  const uint32_t ub = unit();
  uint8_t edge[kQ6KBytes];  // the largest unit
  // A leading partial unit, generated whole and cut.
  if (uint64_t skip = begin % ub) {
    units(begin / ub, 1, edge);
    uint64_t n = std::min<uint64_t>(ub - skip, end - begin);
    std::memcpy(dst, edge + skip, n);
    dst += n;
    begin += n;
  }
  uint64_t whole = (end - begin) / ub;
  if (whole) {
    units(begin / ub, whole, dst);
    dst += whole * ub;
    begin += whole * ub;
  }
  if (begin < end) {  // a trailing partial unit
    units(begin / ub, 1, edge);
    std::memcpy(dst, edge, end - begin);
  }
}

}  // namespace bs
