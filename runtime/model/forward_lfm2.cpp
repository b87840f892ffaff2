// LFM2's short-conv layers on the GPU (Lfm2ShortConv): in_proj to B | C | x, y = C * conv(B * x) with a
// causal depthwise conv of conv_kernel taps, out_proj added to the residual; the FFN after it is the
// common one (record_forward). The conv looks back conv_kernel - 1 inputs; those live in a per-layer
// rolling state on the GPU that short_conv.comp reads and advances in place, prefill and decode alike,
// so a replayed decode step needs nothing from the host, and a forward at position 0 starts from zeros.
#include <vector>

#include "kernels_glsl/params.h"
#include "runtime/base/error.h"
#include "runtime/model/model.h"

namespace bs::model {

using gpu::BindGroupEntry;
using gpu::BufferUsage;

void Model::bind_short_conv(int32_t l) {
  const auto& c = cfg_;
  auto n = [&](const char* s) { return fmt::format("blk.{}.{}", l, s); };
  bind(n("attn_norm"), {c.dim}, false);
  bind(n("conv_in"), {3 * c.dim, c.dim}, true);
  bind(n("conv_kernel"), {c.dim, 1, c.conv_kernel}, false);
  bind(n("conv_out"), {c.dim, c.dim}, true);
  bind(n("ffn_norm"), {c.dim}, false);
  bind(n("ffn_gate"), {c.ffn_dim, c.dim}, true);
  bind(n("ffn_up"), {c.ffn_dim, c.dim}, true);
  bind(n("ffn_down"), {c.dim, c.ffn_dim}, true);

  if (!conv_bcx_)
    conv_bcx_ = device_.createBuffer({uint64_t(max_batch_) * 3 * c.dim * 4, BufferUsage::storage, "conv in (B|C|x)"});
  if (conv_state_.empty()) conv_state_.resize(size_t(c.n_layers));
  // Zeros, though a forward at position 0 never reads them: nothing reads uninitialized memory.
  std::vector<float> zeros(size_t(c.conv_kernel - 1) * c.dim, 0.0f);
  conv_state_[size_t(l)] =
      device_.createBuffer({zeros.size() * 4, BufferUsage::storage, fmt::format("conv state {}", l)});
  device_.queue().writeBuffer(conv_state_[size_t(l)], 0, zeros.data(), zeros.size() * 4);
}

void Model::record_short_conv(int32_t l, uint32_t M, bool fold_norm, const LayerRecorder& r) {
  const auto& c = cfg_;
  auto W = [&](const char* s) -> const Weight& { return *find(fmt::format("blk.{}.{}", l, s)); };
  const uint32_t dim = uint32_t(c.dim);
  // B | C | x = in_proj(operator_norm(x)) per row.
  if (fold_norm) {
    r.normed_matvec(W("attn_norm"), W("conv_in"), conv_bcx_);
  } else {
    r.rms(x_, 0, W("attn_norm"), xn_, 0, dim, M, false);
    r.matmul(W("conv_in"), xn_, 0, conv_bcx_, M, false);
  }
  // y = C * conv(B * x) into tmp_, the state advanced (state.pos == 0: a new sequence, zeros before it).
  r.run("short_conv_f32", {},
        {{0, &conv_bcx_, 0, uint64_t(M) * 3 * dim * 4}, {1, &W("conv_kernel").buffer}, {2, &conv_state_[size_t(l)]},
         {3, &state_}, {4, &tmp_, 0, uint64_t(M) * dim * 4}},
        kparams::ShortConvParams{M, dim, uint32_t(c.conv_kernel), 0}, (dim + 63) / 64, (M + 15) / 16, "short_conv");
  // x += out_proj(y)
  r.matmul(W("conv_out"), tmp_, 0, x_, M, true);
}

}  // namespace bs::model
