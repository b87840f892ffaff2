// Qwen 3.5 / 3.6 on the GPU: the Gated DeltaNet layers (linear attention with a recurrent state).
//   x_ -> rmsnorm -> qkv, z, a, b projections -> causal conv + SiLU over qkv (conv state carried)
//      -> gated delta rule per v head (recurrent state carried) + gated RMSNorm -> out_proj, added to x_.
// The conv and recurrent states live on the GPU, one pair per layer, updated in place by the kernels,
// which read state.pos: a forward at position 0 starts from zero state, so decode replays need no host work.
#include <cmath>

#include "kernels_glsl/params.h"
#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/model/model.h"

namespace bs::model {

using gpu::BufferUsage;

// Tokens per chunk of delta_rule_chunk.comp: the largest of 64, 32, 16, 8 whose shared arrays (the chunk's
// q and k, two CH x CH matrices, four CH vectors, the 64 + 256 reduction slots of common.glsl and block_sum.glsl) fit; 0 = none does.
uint32_t delta_chunk(int32_t k_dim, uint32_t max_shared) {
  for (uint32_t ch : {64u, 32u, 16u, 8u})
    if ((2ull * ch * uint32_t(k_dim) + 2ull * ch * ch + 4ull * ch + 64 + 256) * 4 <= max_shared) return ch;
  return 0;
}

void Model::bind_linear_attention(int32_t l) const {
  const auto& c = cfg_;
  auto n = [&](const char* s) { return fmt::format("blk.{}.{}", l, s); };
  const int64_t qkv = c.linear_qkv_dim(), out = c.linear_out_dim(), h = c.linear_v_heads;
  bind(n("linear_qkv"), {qkv, c.dim}, true);
  bind(n("linear_z"), {out, c.dim}, true);
  bind(n("linear_b"), {h, c.dim}, true);
  bind(n("linear_a"), {h, c.dim}, true);
  bind(n("linear_conv"), {qkv, 1, c.linear_conv}, false);
  bind(n("linear_a_log"), {h}, false);
  bind(n("linear_dt_bias"), {h}, false);
  bind(n("linear_norm"), {c.linear_v_dim}, false);
  bind(n("linear_out"), {c.dim, out}, true);
}

void Model::alloc_linear_attention() {
  const auto& c = cfg_;
  auto act = [&](uint64_t floats, const char* label) {
    return device_.createBuffer({std::max<uint64_t>(floats, 4) * 4, BufferUsage::storage, label});
  };
  const uint64_t B = max_batch_;
  if (c.attn_output_gate) {
    attn_qg_ = act(B * 2 * c.q_dim(), "q and gate");
    attn_gate_ = act(B * c.q_dim(), "attention gate");
  }
  const bool any = std::count(c.layer_kinds.begin(), c.layer_kinds.end(), LayerKind::linear_attention) > 0;
  if (!any) return;
  lin_qkv_ = act(B * c.linear_qkv_dim(), "linear qkv");
  lin_mix_ = act(B * c.linear_qkv_dim(), "linear qkv conv");
  lin_z_ = act(B * c.linear_out_dim(), "linear z");
  lin_a_ = act(B * c.linear_v_heads, "linear a");
  lin_b_ = act(B * c.linear_v_heads, "linear b");
  lin_o_ = act(B * c.linear_out_dim(), "linear out");
  for (int32_t l = 0; l < c.n_layers; ++l) {
    bool lin = c.kind(l) == LayerKind::linear_attention;
    uint64_t conv = lin ? uint64_t(c.linear_qkv_dim()) * (c.linear_conv - 1) : 0;
    uint64_t rec = lin ? uint64_t(c.linear_v_heads) * c.linear_k_dim * c.linear_v_dim : 0;
    // Zero-filled so a first forward that does not start at position 0 reads zeros, not garbage.
    conv_state_.push_back(act(conv, fmt::format("conv state {}", l).c_str()));
    rec_state_.push_back(act(rec, fmt::format("recurrent state {}", l).c_str()));
    std::vector<float> zeros(std::max(conv, rec), 0.0f);
    if (conv) device_.queue().writeBuffer(conv_state_.back(), 0, zeros.data(), conv * 4);
    if (rec) device_.queue().writeBuffer(rec_state_.back(), 0, zeros.data(), rec * 4);
  }
}

void Model::record_linear_attention(int32_t l, uint32_t M, bool fold_norm, const LayerRecorder& r) {
  using namespace kparams;
  const auto& c = cfg_;
  auto W = [&](const char* s) -> const Weight& { return *find(fmt::format("blk.{}.{}", l, s)); };
  const uint32_t C = uint32_t(c.linear_qkv_dim()), V = uint32_t(c.linear_out_dim()), H = uint32_t(c.linear_v_heads);
  const std::pair<const char*, gpu::Buffer*> proj[] = {
      {"linear_qkv", &lin_qkv_}, {"linear_z", &lin_z_}, {"linear_a", &lin_a_}, {"linear_b", &lin_b_}};
  if (fold_norm) {
    for (auto [name, buf] : proj) r.normed_matvec(W("attn_norm"), W(name), *buf);
  } else {
    r.rms(x_, 0, W("attn_norm"), xn_, 0, uint32_t(c.dim), M, false);
    for (auto [name, buf] : proj) r.matmul(W(name), xn_, 0, *buf, M, false);
  }
  r.run("conv_silu_f32", {},
        {{0, &lin_qkv_, 0, uint64_t(M) * C * 4}, {1, &W("linear_conv").buffer}, {2, &conv_state_[l]}, {3, &state_},
         {4, &lin_mix_, 0, uint64_t(M) * C * 4}},
        ConvSiluParams{C, M, uint32_t(c.linear_conv), 0}, (C + 63) / 64, 1, "conv_silu");
  // Decode: one step (delta_rule.comp). Prefill: the chunked form, CH tokens per triangular solve, CH as large
  // as shared memory holds (q and k of the chunk, two CH x CH matrices). BLUESHIFT_NO_CHUNKED_DELTA=1 runs
  // prefill through the step kernel instead (A/B runs).
  static const bool no_chunked = env_switch("BLUESHIFT_NO_CHUNKED_DELTA");
  const uint32_t chunk = M > 1 && !no_chunked ? delta_chunk(c.linear_k_dim, device_.adapter().max_shared_memory) : 0;
  std::vector<gpu::SpecConstant> spec = {{0, uint32_t(c.linear_v_dim)}, {1, uint32_t(c.linear_k_dim)}};
  if (chunk) spec.push_back({2, chunk});
  r.run(chunk ? "delta_rule_chunk_f32" : "delta_rule_f32", spec,
        {{0, &lin_mix_, 0, uint64_t(M) * C * 4}, {1, &lin_z_, 0, uint64_t(M) * V * 4}, {2, &lin_a_, 0, uint64_t(M) * H * 4},
         {3, &lin_b_, 0, uint64_t(M) * H * 4}, {4, &W("linear_a_log").buffer}, {5, &W("linear_dt_bias").buffer},
         {6, &W("linear_norm").buffer}, {7, &rec_state_[l]}, {8, &state_}, {9, &lin_o_, 0, uint64_t(M) * V * 4}},
        DeltaRuleParams{M, uint32_t(c.linear_k_heads), H, 0, c.norm_eps, float(1.0 / std::sqrt(double(c.linear_k_dim))), 0, 0},
        H, 1, "delta_rule");
  r.matmul(W("linear_out"), lin_o_, 0, x_, M, true);
}

}  // namespace bs::model
