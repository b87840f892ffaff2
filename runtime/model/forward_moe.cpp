// Mixture-of-experts layers on the GPU (Mixtral, Qwen3-MoE, GPT-OSS): the router with ffn_norm folded in (top-k
// experts and their weights, written by moe_router on the GPU), the chosen experts' gate and up (one pass over
// the fused gate_up), activation, down, and their weighted sum added to the residual (moe_combine): 5
// dispatches per layer. Nothing about the routing reaches the host:
//   decode — k experts per token, fixed: the expert matvecs run k workgroup rows, each reading its expert
//            id from the router's output (matvec_*_expert), so the recorded step replays unchanged;
//   prefill — moe_group counts, offsets and orders the slots by expert, then grouped GEMMs
//            (matmul_*_expert) run over a fixed grid whose tiles past an expert's count exit at once,
//            so each expert's weights are read once per tile of its own tokens.
#include <vector>

#include "kernels_glsl/params.h"
#include "runtime/base/error.h"
#include "runtime/model/gpu_repack.h"
#include "runtime/model/model.h"

namespace bs::model {

using gpu::BindGroupEntry;
using gpu::BufferUsage;

void Model::bind_moe(int32_t l) const {
  const auto& c = cfg_;
  auto n = [&](const char* s) { return fmt::format("blk.{}.{}", l, s); };
  const int64_t E = c.n_experts, F = c.expert_ffn_dim, D = c.dim;
  const Weight& router = bind(n("ffn_router"), {E, D}, true);
  if (router.dtype != DType::F16)
    fail("weight {}: expected F16 [{},{}] (the router kernel reads F16), got {}", n("ffn_router"), E, D,
         dtype_name(router.dtype));
  if (c.moe_router_bias) bind(n("ffn_router_bias"), {E}, false);
  // The expert kernels bind a whole [experts, rows, cols] tensor (any expert may be chosen).
  const uint64_t limit = binding_limit(device_);
  for (auto [name, rows, cols] : {std::tuple{"ffn_gate_up_exps", 2 * F, D}, std::tuple{"ffn_down_exps", D, F}}) {
    const Weight& w = bind(n(name), {E, rows, cols}, true);
    if (limit && w.buffer.size() > limit)
      fail_kind(ErrorKind::resources, "weight {}: {} bytes exceed the device's {} byte storage binding range",
                n(name), w.buffer.size(), limit);
  }
  if (c.moe_expert_bias) {
    bind(n("ffn_gate_up_exps_bias"), {E, 2 * F}, false);
    bind(n("ffn_down_exps_bias"), {E, D}, false);
  }
}

void Model::alloc_moe() {
  const auto& c = cfg_;
  if (!c.moe()) return;
  auto buf = [&](uint64_t words, const char* label) {
    return device_.createBuffer({std::max<uint64_t>(words, 4) * 4, BufferUsage::storage, label});
  };
  const uint64_t slots = uint64_t(max_batch_) * c.n_experts_used;
  moe_ids_ = buf(slots, "moe expert ids");
  moe_wts_ = buf(slots, "moe expert weights");
  moe_gu_ = buf(slots * 2 * c.expert_ffn_dim, "moe gate | up");
  moe_h_ = buf(slots * c.expert_ffn_dim, "moe h");
  moe_y_ = buf(slots * c.dim, "moe down");
  moe_counts_ = buf(c.n_experts, "moe counts");
  moe_offsets_ = buf(c.n_experts, "moe offsets");
  moe_perm_ = buf(slots, "moe slot order");
  moe_zero_ = buf(4, "moe no bias");  // bound where a model has no biases (flags say so; never read)
  std::vector<uint32_t> zeros(size_t(slots), 0);  // expert ids stay valid before the first router runs
  device_.queue().writeBuffer(moe_ids_, 0, zeros.data(), zeros.size() * 4);
}

void Model::record_moe(int32_t l, uint32_t M, const LayerRecorder& r) {
  using namespace kparams;
  const auto& c = cfg_;
  auto W = [&](const char* s) -> const Weight& { return *find(fmt::format("blk.{}.{}", l, s)); };
  const uint32_t E = uint32_t(c.n_experts), K = uint32_t(c.n_experts_used), F = uint32_t(c.expert_ffn_dim),
                 D = uint32_t(c.dim), slots = M * K;
  const uint64_t S = slots;
  auto bias = [&](const char* s) -> const gpu::Buffer* { return c.moe_expert_bias ? &W(s).buffer : &moe_zero_; };
  const bool cpu = device_.adapter().type == "cpu";

  // ffn_norm, folded into the router: it writes xn for the experts.
  r.run("moe_router_f32", {{0, cpu ? 8u : 64u}},
        {{0, &W("ffn_router").buffer},
         {1, &x_, 0, uint64_t(M) * D * 4},
         {2, c.moe_router_bias ? &W("ffn_router_bias").buffer : &moe_zero_},
         {3, &moe_ids_, 0, S * 4},
         {4, &moe_wts_, 0, S * 4},
         {5, &W("ffn_norm").buffer},
         {6, &xn_, 0, uint64_t(M) * D * 4}},
        MoeRouterParams{D, E, K, (c.moe_norm_topk ? 1u : 0u) | (c.moe_router_bias ? 2u : 0u), c.norm_eps,
                        c.norm_offset ? 1.0f : 0.0f, 0, 0},
        M, 1, "moe_router");

  // y[slot, m] = W[expert(slot)] x[slot / x_div]: k matvec rows per token at decode, grouped GEMMs at prefill.
  const uint32_t tiles = (M + 63) / 64;
  if (M > 1)
    r.run("moe_group", {},
          {{0, &moe_ids_, 0, S * 4}, {1, &moe_counts_}, {2, &moe_offsets_}, {3, &moe_perm_, 0, S * 4}},
          MoeGroupParams{slots, E, 0, 0}, 1, 1, "moe_group");
  // W's rows row0 .. row0 + m of each expert (gate: 0, up: F of the fused gate_up; down: all).
  auto experts = [&](const Weight& w, uint32_t row0, uint32_t m, gpu::Buffer& x, uint32_t x_div, uint32_t k, gpu::Buffer& y) {
    MoeMatvecParams p{m, k, x_div, 0, tiles, uint32_t(w.shape[1]), row0, 0};
    std::vector<BindGroupEntry> e = {{0, &w.buffer}, {1, &x, 0, uint64_t(slots / x_div) * k * 4},
                                     {2, &y, 0, S * m * 4}};
    const std::string label = fmt::format("{} {}x{}x{}", M == 1 ? "matvec_expert" : "matmul_expert",
                                          weight_kernel("", w.dtype).substr(1), w.shape[0], m);
    if (M == 1) {
      e.push_back({8, &moe_ids_, 0, S * 4});
      // About one invocation per part of a row, as record_forward's matvec_wg (lavapipe: 8).
      uint32_t parts = w.dtype == DType::F16 ? k / 8 : w.dtype == DType::Q8_0 ? k / 16 : k / 32, wg = 32;
      while (wg < parts && wg < 256) wg *= 2;
      const uint32_t rows = 4;
      r.run(weight_kernel("matvec", w.dtype) + "_expert", {{0, cpu ? 8u : wg}, {1, rows}}, e, p, (m + rows - 1) / rows,
            slots, label);
    } else {
      e.push_back({9, &moe_counts_});
      e.push_back({10, &moe_offsets_});
      e.push_back({11, &moe_perm_, 0, S * 4});
      r.run(weight_kernel("matmul", w.dtype) + "_expert", {}, e, p, (m + 63) / 64, E * tiles, label);
    }
  };
  // Gate and up in one pass over the fused gate_up ([slots, 2F] out), then h [slots, F].
  experts(W("ffn_gate_up_exps"), 0, 2 * F, xn_, K, D, moe_gu_);
  r.run("moe_act_f32", {},
        {{0, &moe_gu_, 0, S * 2 * F * 4},
         {2, &moe_h_, 0, S * F * 4},
         {3, &moe_ids_, 0, S * 4},
         {4, bias("ffn_gate_up_exps_bias")}},
        MoeActParams{F, slots, c.moe_expert_bias ? 1u : 0u, c.act == Activation::silu ? 0u : 1u, c.swiglu_alpha,
                     c.swiglu_limit, 0, 0},
        (F + 255) / 256, slots, "moe_act");
  experts(W("ffn_down_exps"), 0, D, moe_h_, 1, F, moe_y_);
  r.run("moe_combine_f32", {},
        {{0, &x_, 0, uint64_t(M) * D * 4},
         {1, &moe_y_, 0, S * D * 4},
         {2, &moe_ids_, 0, S * 4},
         {3, &moe_wts_, 0, S * 4},
         {4, bias("ffn_down_exps_bias")}},
        MoeCombineParams{D, M, K, c.moe_expert_bias ? 1u : 0u}, (D + 255) / 256, M, "moe_combine");
}

}  // namespace bs::model
