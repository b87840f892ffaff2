#include "rdrr/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

namespace {

constexpr float kHalfMax = 65504.0f;

int nearest(float x) { return int(std::lrintf(x)); }

// The scale search: 2*kSteps+1 candidate stretches of the range, kStepSize levels apart. Finer grids
// (21 candidates, 0.1 apart) measured the same RMSE to 0.1% at half the speed.
constexpr int kSteps = 5;
constexpr float kStepSize = 0.2f;

void put_half(uint8_t* p, float f) {
  uint16_t h = float_to_half(std::min(f, kHalfMax));
  std::memcpy(p, &h, 2);
}
float get_half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return half_to_float(h);
}

// Round to nearest (even) without a libm call, so the search loops vectorize: adding 1.5 * 2^23 pushes
// the fraction out of a float's mantissa. Valid for |v| < 2^22; callers clamp first.
inline float round_fast(float v) { return (v + 12582912.0f) - 12582912.0f; }

// One sub-block being fitted: values, importance weights and the sums that do not depend on the codes.
struct SubBlock {
  const float* x;
  const float* w;
  int n;
  float sw = 0, sx = 0, sxx = 0;  // sum w, sum w*x, sum w*x^2
  SubBlock(const float* x_, const float* w_, int n_) : x(x_), w(w_), n(n_) {
    for (int i = 0; i < n; ++i) {
      sw += w[i];
      sx += w[i] * x[i];
      sxx += w[i] * x[i] * x[i];
    }
  }
};

struct Fit {
  float s = 0, b = 0, err = INFINITY;
};

// (Compiled twice, AVX2 and baseline, picked at load: this loop is most of a q4_k_m conversion.)
// Encodes x ~ s*q + b with q clamped to [qmin, qmax] (as floats), then fits s and b by weighted least
// squares for those codes. The error follows from the sums alone: no second pass over the values.
// Q4_K can only subtract an offset (w = d*sc*q - dmin*m, m >= 0), so a positive b is refitted as 0.
__attribute__((target_clones("avx2", "default"))) Fit fit_for_scale(const SubBlock& sb, float s, float b, float qmin, float qmax, bool with_offset) {
  float inv = s != 0 ? 1.0f / s : 0.0f;
  float sq = 0, sqq = 0, sqx = 0;
#pragma omp simd reduction(+ : sq, sqq, sqx)
  for (int i = 0; i < sb.n; ++i) {
    float q = round_fast(std::min(std::max((sb.x[i] - b) * inv, qmin), qmax));
    float wq = sb.w[i] * q;
    sq += wq;
    sqq += wq * q;
    sqx += wq * sb.x[i];
  }
  Fit f;
  double det = double(sb.sw) * sqq - double(sq) * sq;
  if (with_offset && det > 0) {
    f.s = float((double(sb.sw) * sqx - double(sq) * sb.sx) / det);
    f.b = float((double(sqq) * sb.sx - double(sq) * sqx) / det);
  }
  if (!with_offset || det <= 0 || f.b > 0) {
    f.b = 0;
    f.s = sqq > 0 ? sqx / sqq : 0.0f;
  }
  double e = double(f.s) * f.s * sqq + 2.0 * f.s * f.b * sq + double(f.b) * f.b * sb.sw - 2.0 * f.s * sqx -
             2.0 * f.b * sb.sx + sb.sxx;
  f.err = float(std::max(e, 0.0));
  return f;
}

// Codes for x ~ s*q + b, clamped to [qmin, qmax].
void encode(const float* x, int n, float s, float b, int qmin, int qmax, int* q) {
  float inv = s != 0 ? 1.0f / s : 0.0f;
  for (int i = 0; i < n; ++i)
    q[i] = int(round_fast(std::min(std::max((x[i] - b) * inv, float(qmin)), float(qmax))));
}

// Searches the scale (and for asymmetric codes the offset) of one sub-block. Candidate code
// assignments come from stretching the value range over slightly more or fewer than the available
// levels; each is refitted by least squares, and the best is refined by re-encoding with its fitted
// scale until the error stops falling.
Fit search_sub_block(const float* x, const float* w, int n, int qmin, int qmax, bool with_offset) {
  SubBlock sb(x, w, n);
  float lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
  Fit best;
  if (with_offset) {
    lo = std::min(lo, 0.0f);
    if (hi <= lo) return {0.0f, lo, 0.0f};
    for (int step = -kSteps; step <= kSteps; ++step) {
      float levels = float(qmax) + kStepSize * float(step);
      Fit f = fit_for_scale(sb, (hi - lo) / levels, lo, float(qmin), float(qmax), true);
      if (f.err < best.err) best = f;
    }
  } else {
    // Symmetric codes [-32, 31]: map the value of largest magnitude near -32, the longer side.
    float amax = std::abs(lo) > std::abs(hi) ? lo : hi;
    if (amax == 0) return {0.0f, 0.0f, 0.0f};
    for (int step = -kSteps; step <= kSteps; ++step) {
      float levels = float(qmin) - kStepSize * float(step);
      Fit f = fit_for_scale(sb, amax / levels, 0.0f, float(qmin), float(qmax), false);
      if (f.err < best.err) best = f;
    }
  }
  for (int iter = 0; iter < 3 && best.s != 0; ++iter) {
    Fit f = fit_for_scale(sb, best.s, best.b, float(qmin), float(qmax), with_offset);
    if (!(f.err < best.err * 0.9999f)) break;
    best = f;
  }
  return best;
}

// Importance of each value within its sub-block: large values matter more to a dot product, but a
// small floor (the sub-block's RMS) keeps small values from being ignored.
void weights_for(const float* x, int n, float* w) {
  double ss = 0;
  for (int i = 0; i < n; ++i) ss += double(x[i]) * x[i];
  float rms = float(std::sqrt(ss / n));
  for (int i = 0; i < n; ++i) w[i] = rms + std::abs(x[i]);
}

// Packs 8 six-bit scales and mins into Q4_K's 12 bytes (GGML's get_scale_min_k4 order).
void pack_q4k_scales(const int* sc, const int* m, uint8_t* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    out[j + 8] = uint8_t((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
}

void unpack_q4k_scale(const uint8_t* s, int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Weighted squared error of one sub-block encoded as x ~ s*q + b, q in [qmin, qmax].
__attribute__((target_clones("avx2", "default"))) float encoded_error(const float* x, const float* w, int n, float s, float b, int qmin, int qmax) {
  float inv = s != 0 ? 1.0f / s : 0.0f, e = 0;
#pragma omp simd reduction(+ : e)
  for (int i = 0; i < n; ++i) {
    float q = round_fast(std::min(std::max((x[i] - b) * inv, float(qmin)), float(qmax)));
    float r = x[i] - (s * q + b);
    e += w[i] * r * r;
  }
  return e;
}

// The nearest multiple of the block's scale step to a sub-block's fitted scale, clamped to the code range.
int scale_code(float fitted, float step, int lo, int hi) {
  return step > 0 ? std::clamp(nearest(fitted / step), lo, hi) : 0;
}

// Shared tail of both Q4_K quantizers: sub-block scales s[j] >= 0 and offsets mn[j] >= 0
// (x ~ s*q - mn) become 6-bit multiples of the block's d and dmin, then every value is re-encoded
// against the scales actually stored. Nearest rounding of the multiples fails where one outlier sets
// the block scale: a sub-block whose fit is 0.3 steps rounds to 0 and loses every value. So with
// importance weights w, the neighbours of the nearest codes are tried against the values and the
// lowest weighted error wins (Q6_K does the same); without w (the min/max baseline), nearest rounding.
void finish_q4k(const float* x, const float* w, const float* s, const float* mn, uint8_t* out) {
  float smax = *std::max_element(s, s + 8), mmax = *std::max_element(mn, mn + 8);
  float d = smax / 63.0f, dmin = mmax / 63.0f;
  put_half(out, d);
  put_half(out + 2, dmin);
  d = get_half(out);
  dmin = get_half(out + 2);
  int sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = scale_code(s[j], d, 0, 63);
    m[j] = scale_code(mn[j], dmin, 0, 63);
    if (!w || d <= 0) continue;
    const float* xj = x + 32 * j;
    float best = INFINITY;
    int c0 = sc[j], m0 = m[j];
    for (int c = std::max(c0 - 1, 0); c <= std::min(c0 + 1, 63); ++c)
      for (int o = std::max(m0 - 1, 0); o <= std::min(m0 + 1, 63); ++o) {
        float e = encoded_error(xj, w + 32 * j, 32, d * float(c), -dmin * float(o), 0, 15);
        if (e < best) best = e, sc[j] = c, m[j] = o;
      }
  }
  pack_q4k_scales(sc, m, out + 4);
  uint8_t* qs = out + 16;
  int q[256];
  for (int j = 0; j < 8; ++j) encode(x + 32 * j, 32, d * float(sc[j]), -dmin * float(m[j]), 0, 15, q + 32 * j);
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) qs[32 * p + l] = uint8_t(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
}

}  // namespace

void quantize_block_q8_0(const float* x, uint8_t* out) {
  float amax = 0;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[i]));
  put_half(out, amax / 127.0f);
  float d = get_half(out);
  float inv = d > 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < 32; ++i) out[2 + i] = uint8_t(int8_t(std::clamp(nearest(x[i] * inv), -127, 127)));
}

void quantize_block_q4_k(const float* x, uint8_t* out) {
  float s[8], mn[8], w[256];
  for (int j = 0; j < 8; ++j) {
    weights_for(x + 32 * j, 32, w + 32 * j);
    Fit f = search_sub_block(x + 32 * j, w + 32 * j, 32, 0, 15, true);
    s[j] = std::max(f.s, 0.0f);
    mn[j] = -f.b;
  }
  finish_q4k(x, w, s, mn, out);
}

void quantize_block_q4_k_minmax(const float* x, uint8_t* out) {
  float s[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    float lo = std::min(0.0f, *std::min_element(x + 32 * j, x + 32 * j + 32));
    float hi = *std::max_element(x + 32 * j, x + 32 * j + 32);
    s[j] = (hi - lo) / 15.0f;
    mn[j] = -lo;
  }
  finish_q4k(x, nullptr, s, mn, out);
}

void quantize_block_q6_k(const float* x, uint8_t* out) {
  float s[16], w[256];
  for (int j = 0; j < 16; ++j) {
    weights_for(x + 16 * j, 16, w + 16 * j);
    s[j] = search_sub_block(x + 16 * j, w + 16 * j, 16, -32, 31, false).s;
  }
  float amax = 0;
  for (float v : s) amax = std::max(amax, std::abs(v));
  uint8_t* ql = out;
  uint8_t* qh = out + 128;
  int8_t* scales = reinterpret_cast<int8_t*>(out + 192);
  put_half(out + 208, amax / 127.0f);
  float d = get_half(out + 208);
  int q[256];
  for (int j = 0; j < 16; ++j) {
    int sc = scale_code(s[j], d, -127, 127);
    if (d > 0) {  // the neighbour search of finish_q4k
      float best = INFINITY;
      int c0 = sc;
      for (int c = std::max(c0 - 1, -127); c <= std::min(c0 + 1, 127); ++c) {
        float e = encoded_error(x + 16 * j, w + 16 * j, 16, d * float(c), 0.0f, -32, 31);
        if (e < best) best = e, sc = c;
      }
    }
    scales[j] = int8_t(sc);
    encode(x + 16 * j, 16, d * float(sc), 0.0f, -32, 31, q + 16 * j);
  }
  for (int h = 0; h < 2; ++h) {
    const int* qq = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      int q1 = qq[l] + 32, q2 = qq[l + 32] + 32, q3 = qq[l + 64] + 32, q4 = qq[l + 96] + 32;
      ql[64 * h + l] = uint8_t((q1 & 15) | ((q3 & 15) << 4));
      ql[64 * h + l + 32] = uint8_t((q2 & 15) | ((q4 & 15) << 4));
      qh[32 * h + l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

// MXFP4 (OCP microscaling FP4): the e2m1 values, by code (bit 3 the sign).
constexpr float kE2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};

// The nearest e2m1 code to v (already divided by the block scale), ties to the even code as the OCP spec rounds.
static int e2m1_code(float v) {
  const float a = std::abs(v);
  int best = 0;
  for (int c = 1; c < 8; ++c)
    if (std::abs(a - kE2m1[c]) < std::abs(a - kE2m1[best]) ||
        (std::abs(a - kE2m1[c]) == std::abs(a - kE2m1[best]) && c % 2 == 0))
      best = c;
  return best | (v < 0 && best ? 8 : 0);
}

// 32 values -> e (E8M0) and 16 bytes of codes. The OCP spec's shared exponent floor(log2(amax)) - 2 (the
// largest e2m1 is 1.5 * 2^2) clips values above 6 * 2^e; one exponent higher does not: the lower squared
// error of the two wins.
void quantize_block_mxfp4(const float* x, uint8_t* out) {
  float amax = 0;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[i]));
  int e0 = amax > 0 ? int(std::floor(std::log2(amax))) - 2 : -127;
  double best_err = -1;
  for (int e : {e0, e0 + 1}) {
    const int biased = std::clamp(e + 127, 0, 254);
    const float s = std::ldexp(1.0f, biased - 127);
    uint8_t q[32];
    double err = 0;
    for (int i = 0; i < 32; ++i) {
      q[i] = uint8_t(e2m1_code(x[i] / s));
      const double d = double(kE2m1[q[i]]) * s - x[i];
      err += d * d;
    }
    if (best_err >= 0 && err >= best_err) continue;
    best_err = err;
    out[0] = uint8_t(biased);
    for (int j = 0; j < 16; ++j) out[1 + j] = uint8_t(q[j] | (q[j + 16] << 4));
  }
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  const auto& tr = traits(t);
  if (n % tr.block_elems) fail("quantize_row: {} values are not whole {} blocks", n, tr.name);
  switch (t) {
    case DType::F32: std::memcpy(out, src, size_t(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = float_to_half(src[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = float_to_bf16(src[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    case DType::Q8_0: for (int64_t b = 0; b < n / 32; ++b) quantize_block_q8_0(src + 32 * b, out + 34 * b); return;
    case DType::Q4_K: for (int64_t b = 0; b < n / 256; ++b) quantize_block_q4_k(src + 256 * b, out + 144 * b); return;
    case DType::Q6_K: for (int64_t b = 0; b < n / 256; ++b) quantize_block_q6_k(src + 256 * b, out + 210 * b); return;
    case DType::MXFP4: for (int64_t b = 0; b < n / 32; ++b) quantize_block_mxfp4(src + 32 * b, out + 17 * b); return;
    default: fail("quantize_row: dtype {} is not a weight type", tr.name);
  }
}

void dequantize_row(DType t, const void* src, float* y, int64_t n) {
  const auto* in = static_cast<const uint8_t*>(src);
  const auto& tr = traits(t);
  if (n % tr.block_elems) fail("dequantize_row: {} values are not whole {} blocks", n, tr.name);
  switch (t) {
    case DType::F32: std::memcpy(y, in, size_t(n) * 4); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) y[i] = get_half(in + 2 * i);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, in + 2 * i, 2);
        y[i] = bf16_to_float(b);
      }
      return;
    case DType::Q8_0:
      // 32 weights: f16 d, int8 q[32]; w = d * q.
      for (int64_t b = 0; b < n / 32; ++b, in += 34, y += 32) {
        float d = get_half(in);
        for (int i = 0; i < 32; ++i) y[i] = d * float(int8_t(in[2 + i]));
      }
      return;
    case DType::Q4_K:
      // 256 weights: f16 d, dmin; 12 B of 6-bit (scale, min) for 8 sub-blocks of 32; 128 B of nibbles,
      // where byte l of each 32-byte group holds sub-block 2p (low nibble) and 2p+1 (high nibble).
      for (int64_t b = 0; b < n / 256; ++b, in += 144, y += 256) {
        float d = get_half(in), dmin = get_half(in + 2);
        for (int j = 0; j < 8; ++j) {
          int sc, m;
          unpack_q4k_scale(in + 4, j, &sc, &m);
          const uint8_t* qs = in + 16 + 32 * (j / 2);
          for (int l = 0; l < 32; ++l) {
            int q = (j % 2) ? qs[l] >> 4 : qs[l] & 15;
            y[32 * j + l] = d * float(sc) * float(q) - dmin * float(m);
          }
        }
      }
      return;
    case DType::Q6_K:
      // 256 weights: ql[128] low 4 bits, qh[64] high 2 bits, int8 scales[16] (one per 16), f16 d;
      // w = d * scale * (q - 32). Each half of 128 weights uses 64 B of ql and 32 B of qh.
      for (int64_t b = 0; b < n / 256; ++b, in += 210, y += 256) {
        float d = get_half(in + 208);
        const auto* scales = reinterpret_cast<const int8_t*>(in + 192);
        for (int i = 0; i < 256; ++i) {
          int h = i / 128, r = i % 128, quarter = r / 32, l = r % 32;
          uint8_t lo_byte = in[64 * h + l + 32 * (quarter & 1)];
          int lo = quarter < 2 ? lo_byte & 15 : lo_byte >> 4;
          int hi = (in[128 + 32 * h + l] >> (2 * quarter)) & 3;
          y[i] = d * float(scales[i / 16]) * float((lo | (hi << 4)) - 32);
        }
      }
      return;
    case DType::MXFP4:
      // 32 weights: E8M0 e, then weight j in the low nibble of byte j, j + 16 in the high one.
      for (int64_t b = 0; b < n / 32; ++b, in += 17, y += 32) {
        const float s = std::ldexp(1.0f, int(in[0]) - 127);
        for (int j = 0; j < 16; ++j) y[j] = kE2m1[in[1 + j] & 15] * s, y[j + 16] = kE2m1[in[1 + j] >> 4] * s;
      }
      return;
    default: fail("dequantize_row: dtype {} is not a weight type", tr.name);
  }
}

DType storable_dtype(DType requested, int64_t k, std::string* reason) {
  reason->clear();
  DType t = requested;
  if ((t == DType::Q4_K || t == DType::Q6_K) && k % 256) {
    *reason = fmt::format("row length {} is not a multiple of 256", k);
    t = DType::Q8_0;
  }
  if (t == DType::MXFP4 && k % 32) {
    *reason = fmt::format("row length {} is not a multiple of 32", k);
    t = DType::F16;
  }
  if (t == DType::Q8_0 && k % 32) {
    *reason = fmt::format("row length {} is not a multiple of {}", k, requested == DType::Q8_0 ? 32 : 256);
    t = DType::F16;
  }
  return t;
}

}  // namespace bs
