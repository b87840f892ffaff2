#include "cli/csl/emulate.h"

#include <cmath>

#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs::csl {

size_t head_tile_words(const Plan& p) {
  return size_t(p.height) * size_t(p.width) * size_t(p.rows_per_pe) * size_t(p.tile_width) / 2;
}

namespace {

// Offset, in f16 elements, of (token, d) inside the packed tiles.
size_t tile_element_index(const Plan& p, int token, int d) {
  size_t py = size_t(token / p.rows_per_pe), r = size_t(token % p.rows_per_pe);
  size_t px = size_t(d / p.tile_width), j = size_t(d % p.tile_width);
  size_t tile = py * size_t(p.width) + px;
  size_t tile_elems = size_t(p.rows_per_pe) * size_t(p.tile_width);
  return tile * tile_elems + r * size_t(p.tile_width) + j;
}

// Per-PE sums of squares, then the row reduction: the total every PE sees after `share`.
float row_sumsq(const Plan& p, const std::vector<float>& hidden_padded) {
  float total = 0.0f;
  for (int px = 0; px < p.width; ++px) {
    float acc = 0.0f;
    const float* h = hidden_padded.data() + size_t(px) * size_t(p.tile_width);
    for (int d = 0; d < p.tile_width; ++d) acc = acc + h[d] * h[d];
    total = px == 0 ? acc : total + acc;
  }
  return total;
}

std::vector<float> padded(const std::vector<float>& v, size_t n) {
  std::vector<float> out(n, 0.0f);
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

// normed[d] = h * inv_rms * (offset + w), evaluated left to right as the PE program does.
std::vector<float> normalize(const Plan& p, const PlanInputs& in) {
  size_t n = size_t(p.padded_dim());
  std::vector<float> h = padded(in.hidden, n), w = padded(in.norm_weight, n);
  float total = row_sumsq(p, h);
  float scale = 1.0f / std::sqrt(total / float(p.dim) + p.norm_eps);
  float offset = p.norm_offset ? 1.0f : 0.0f;
  std::vector<float> out(n);
  for (size_t d = 0; d < n; ++d) {
    float hs = h[d] * scale;
    out[d] = hs * (offset + w[d]);
  }
  return out;
}

std::vector<float> lm_head(const Plan& p, const PlanInputs& in) {
  std::vector<float> x = normalize(p, in);
  std::vector<float> x16(x.size());
  for (size_t d = 0; d < x.size(); ++d) x16[d] = round_half(x[d]);
  const size_t tile_elems = size_t(p.rows_per_pe) * size_t(p.tile_width);
  std::vector<float> logits(size_t(p.tokens));
  for (int t = 0; t < p.tokens; ++t) {
    int py = t / p.rows_per_pe, r = t % p.rows_per_pe;
    float total = 0.0f;
    for (int px = 0; px < p.width; ++px) {
      size_t tile = size_t(py) * size_t(p.width) + size_t(px);
      size_t base = tile * tile_elems + size_t(r) * size_t(p.tile_width);
      const float* xs = x16.data() + size_t(px) * size_t(p.tile_width);
      float acc = 0.0f;
      for (int j = 0; j < p.tile_width; ++j) {
        size_t e = base + size_t(j);
        uint32_t word = in.head_tiles[e / 2];
        uint16_t bits = uint16_t(e % 2 ? word >> 16 : word & 0xffff);
        acc = acc + xs[j] * half_to_float(bits);
      }
      total = px == 0 ? acc : total + acc;
    }
    logits[size_t(t)] = total;
  }
  return logits;
}

}  // namespace

std::vector<uint32_t> pack_head_tiles(const Plan& p, const std::vector<std::vector<uint16_t>>& rows) {
  if (rows.size() != size_t(p.tokens)) fail("head rows: expected {} rows (one per selected token), got {}", p.tokens, rows.size());
  std::vector<uint32_t> words(head_tile_words(p), 0u);
  for (int t = 0; t < p.tokens; ++t) {
    if (rows[size_t(t)].size() != size_t(p.dim))
      fail("head row {}: expected {} f16 values, got {}", t, p.dim, rows[size_t(t)].size());
    for (int d = 0; d < p.dim; ++d) {
      size_t e = tile_element_index(p, t, d);
      uint32_t bits = rows[size_t(t)][size_t(d)];
      words[e / 2] |= e % 2 ? bits << 16 : bits;
    }
  }
  return words;
}

uint16_t head_tile_element(const Plan& p, const std::vector<uint32_t>& tiles, int token, int d) {
  size_t e = tile_element_index(p, token, d);
  if (e / 2 >= tiles.size()) throw Error("head_tile_element: index outside the tiles", ErrorKind::internal);
  return uint16_t(e % 2 ? tiles[e / 2] >> 16 : tiles[e / 2] & 0xffff);
}

std::vector<float> emulate(const Plan& p, const PlanInputs& in) {
  if (in.hidden.size() != size_t(p.dim)) fail("{}: expected {} f32 values, got {}", kHiddenFile, p.dim, in.hidden.size());
  if (in.norm_weight.size() != size_t(p.dim))
    fail("{}: expected {} f32 values, got {}", kNormFile, p.dim, in.norm_weight.size());
  if (p.kind == KernelKind::rmsnorm) {
    std::vector<float> out = normalize(p, in);
    out.resize(size_t(p.dim));
    return out;
  }
  if (in.head_tiles.size() != head_tile_words(p))
    fail("{}: expected {} u32 words, got {}", kHeadFile, head_tile_words(p), in.head_tiles.size());
  return lm_head(p, in);
}

}  // namespace bs::csl
