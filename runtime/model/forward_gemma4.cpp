// Gemma 4's recording beyond the shared layer loop: the per-layer inputs of its E variants (before the
// first layer) and each layer's tail (the per-layer input block, then layer_scalar).
#include <cmath>

#include "kernels_glsl/params.h"
#include "runtime/base/error.h"
#include "runtime/model/model.h"

namespace bs::model {

using gpu::BindGroupEntry;
using namespace kparams;

namespace {
// A 2-D grid of 256-wide workgroups covering n elements (as model.cpp's elementwise dispatches).
uint32_t grid_x(uint32_t n) { return std::min((n + 255) / 256, 65535u); }
uint32_t grid_y(uint32_t n) { return ((n + 255) / 256 + grid_x(n) - 1) / grid_x(n); }
}  // namespace

// ple_[l, m, :] = (rmsnorm(ple_proj x_m / sqrt(dim)) * w + ple_embed[token_m, l, :] * sqrt(P)) / sqrt(2).
// x_ holds the scaled embeddings here (called right after the embedding).
void Model::record_per_layer_inputs(const LayerRecorder& ops, uint32_t M) {
  const auto& c = cfg_;
  const uint32_t P = uint32_t(c.ple_dim), L = uint32_t(c.n_layers), LP = L * P;
  const Weight& table = *find("ple_embed");
  for (auto [r0, r1] : row_ranges(table)) {
    EmbedParams ep{LP, M, c.ple_embed_scale, r0};
    std::vector<BindGroupEntry> e = {{0, &table.buffer, range_offset(table, r0), range_bytes(table, r0, r1)},
                                     {1, &tokens_, 0, M * 4}, {2, &ple_rows_, 0, uint64_t(M) * LP * 4}};
    if (table.dtype == DType::I4) e.push_back({3, &find("ple_embed_scales")->buffer});  // DOPPLER's int4 table
    ops.dispatch(weight_kernel("embed", table.dtype), {{0, 64}}, e, &ep, sizeof ep, M, 1, "embed");
  }
  ops.matmul(*find("ple_proj"), x_, 0, ple_proj_, M, false);
  PleCombineParams pp{P, L, uint32_t(max_batch_), c.norm_eps, c.norm_offset ? 1.0f : 0.0f,
                      float(1.0 / std::sqrt(double(c.dim))), float(std::sqrt(0.5)), 0};
  ops.dispatch("ple_combine_f32", {},
               {{0, &ple_proj_, 0, uint64_t(M) * LP * 4}, {1, &find("ple_proj_norm")->buffer},
                {2, &ple_rows_, 0, uint64_t(M) * LP * 4}, {3, &ple_}},
               &pp, sizeof pp, M, L, "ple_combine");
}

// After layer l's FFN: x_ += rmsnorm(W_out (act(W_gate x_) * ple_[l])) * w_post; then x_ *= layer_scalar.
void Model::record_layer_tail(const LayerRecorder& ops, int32_t l, uint32_t M) {
  const auto& c = cfg_;
  auto W = [&](const char* s) -> const Weight& { return *find(fmt::format("blk.{}.{}", l, s)); };
  if (c.ple_dim > 0) {
    const uint32_t P = uint32_t(c.ple_dim), n = M * P;
    ops.matmul(W("ple_gate"), x_, 0, ple_gate_, M, false);
    GatedActParams gp{n, c.act == Activation::silu ? 0u : 1u, 0, 0};
    ops.dispatch("gated_act_f32", {},
                 {{0, &ple_gate_, 0, uint64_t(n) * 4}, {1, &ple_, uint64_t(l) * max_batch_ * P * 4, uint64_t(n) * 4},
                  {2, &ple_gate_, 0, uint64_t(n) * 4}},
                 &gp, sizeof gp, grid_x(n), grid_y(n), "gated_act");
    ops.matmul(W("ple_out"), ple_gate_, 0, tmp_, M, false);
    ops.rms(tmp_, 0, W("ple_post_norm"), x_, 0, uint32_t(c.dim), M, true);
  }
  if (c.layer_scalar) {
    const uint32_t n = M * uint32_t(c.dim);
    ScaleByParams sp{n, 0, 0, 0};
    ops.dispatch("scale_by_f32", {}, {{0, &x_, 0, uint64_t(n) * 4}, {1, &W("layer_scalar").buffer}}, &sp, sizeof sp,
                 grid_x(n), grid_y(n), "scale_by");
  }
}

}  // namespace bs::model
