// serve's continuous batching: one decode step over several sequences at once (Model::record_decode_batch).
//
// Each sequence owns a KV-cache slot and 16 words of step state (token, position, and the sampler's
// counters) in a buffer of the caller's. The projections and the FFN take every sequence's row together
// ([rows, k] products: by default on tensor cores up to 32 rows (matmul_rows_cm.comp), else the multi-row
// matvec, each decoding every weight once a step, the gated FFN's activation folded in; see the choice
// below); the embedding, RoPE + KV append and attention take each row's own
// position and context length from its slot state and its own cache: one dispatch for all rows (the
// *_slots kernels, caches through buffer device addresses), or one per row through binding offsets
// (devices without buffer device addresses), disjoint ranges, so the encoder puts no barriers between them.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "kernels_glsl/params.h"
#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/model/model.h"

namespace bs::model {

using gpu::BindGroupEntry;

void Model::select_kv_slot(int32_t slot) {
  if (slot < 0 || slot >= int32_t(slot_k_.size()))
    fail_kind(ErrorKind::internal, "KV slot {} of {}", slot, slot_k_.size());
  if (slot == current_kv_slot_) return;
  std::swap(kcache_, slot_k_[size_t(current_kv_slot_)]);  // put the current slot's buffers back
  std::swap(vcache_, slot_v_[size_t(current_kv_slot_)]);
  std::swap(kcache_, slot_k_[size_t(slot)]);
  std::swap(vcache_, slot_v_[size_t(slot)]);
  current_kv_slot_ = slot;
  // The persistent decode kernel's table holds slot 0's cache addresses: one-row forwards of another slot
  // take the per-phase path.
  if (slot != 0 && persistent_) stashed_persistent_ = std::move(persistent_);
  if (slot == 0 && stashed_persistent_) persistent_ = std::move(stashed_persistent_);
}

// Binding offsets must be multiples of minStorageBufferOffsetAlignment, which Vulkan caps at 256.
static bool aligned(uint64_t bytes) { return bytes % 256 == 0; }

// matmul_rows_cm.comp's shared arrays: per subgroup and matrix (gated: 2) a W tile of 16 rows x (bk / 8 + 1)
// uvec4 and 16 x 16 f32 partials (the *_xs variants: and per subgroup an X tile of the W tile's size); plus
// common.glsl's 64-float scratch.
uint64_t rows_cm_shared_bytes(uint32_t subgroups, bool gated, uint32_t bk, bool x_shared) {
  const uint64_t tile = 16 * (bk / 8 + 1) * 16;
  return uint64_t(subgroups) * ((gated ? 2 : 1) * (tile + 256 * 4) + (x_shared ? tile : 0)) + 64 * 4;
}

RowsCmPlan plan_rows_cm(const gpu::KernelCache& kernels, DType t, uint32_t m, uint32_t k, uint32_t rows,
                        bool gated, uint32_t max_shared, uint32_t subgroups, bool emulated, uint32_t bk,
                        int rows32, int x_shared) {
  const bool dtype_ok =
      t == DType::F16 || t == DType::Q8_0 || t == DType::Q4_K || (t == DType::Q6_K && k % 256 == 0);
  if (!dtype_ok || rows < 1 || rows > 32 || m == 0 || k % 64 != 0 || (gated && m % 2 != 0) ||
      (m + 15) / 16 > 65535)
    return {};
  const std::string kernel =
      weight_kernel(emulated ? "matmul_rows_emu" : "matmul_rows_cm", t) + (gated ? "_gated" : "");
  if (!kernels.has(kernel)) return {};
  // 8 subgroups (6 gated, whose tiles are twice the size) on 2048-row matrices: 128 workgroups of 256
  // invocations, 4 steps of 64 each at k = 2048, and a gated FFN of 8192 rows 512 workgroups of 192. The
  // gated and head count 6: the H100 sweep at N = 16 (74f2093) gave 3.305 ms a step against 3.530 at 4.
  static const uint32_t env_sg = env_uint("BLUESHIFT_ROWSCM_SG", 8),
                        env_gated_sg = env_uint("BLUESHIFT_ROWSCM_GATED_SG", 6);
  static const uint32_t env_bk = env_uint("BLUESHIFT_ROWSCM_BK", 0);
  // Steps of 128 halve a subgroup's chain of dependent loads (one step in flight ahead), but the whole step
  // measured slower on the H100 (3d7e932, N = 16, 128 tokens generated: 3.46 ms a step with 64 everywhere,
  // 3.58 with 128 everywhere): 64 unless asked.
  const uint32_t want_bk = bk ? bk : env_bk ? env_bk : 64;
  const bool k128 = want_bk == 128 && !gated && k % 128 == 0 && kernels.has(kernel + "_k128");
  bk = k128 ? 128 : 64;
  // 32 rows a workgroup (two B fragments per A fragment) for the head: at 16 rows its 8016 workgroups ran at
  // ~450 GB/s on the H100 (3d7e932: 495 us at N = 16, a seventh of the step), and the gated FFN's two
  // fragments a workgroup moved ~1.2x the plain kernel's bytes a second. rows32 < 0: where m >= 32768
  // (heads); BLUESHIFT_ROWSCM_R32=0|1 off or everywhere (plain, k steps of 64).
  static const int env_r32 =
      std::getenv("BLUESHIFT_ROWSCM_R32") ? int(env_uint("BLUESHIFT_ROWSCM_R32", 0)) : -1;
  const int want_r32 = rows32 >= 0 ? rows32 : env_r32;
  const bool r32 =
      !gated && !k128 && (want_r32 < 0 ? m >= 32768 : want_r32 > 0) && kernels.has(kernel + "_r32");
  // X through shared memory up to 16 rows (one A fragment): its fragment loads from global memory cost the
  // H100's N = 16 step 0.82 of 3.13 ms (2026-11-24 session 7, a variant with constant A fragments).
  static const int env_xs = int(env_uint("BLUESHIFT_ROWSCM_XS", 1));
  const std::string name = r32 ? kernel + "_r32" : k128 ? kernel + "_k128" : kernel;
  const bool xs = rows <= 16 && !k128 && (x_shared >= 0 ? x_shared : env_xs) != 0 && kernels.has(name + "_xs");
  // Two fragments a workgroup (gated, r32) take the gated default.
  uint32_t sg = std::clamp(subgroups ? subgroups : gated || r32 ? env_gated_sg : env_sg, 1u, 32u);
  sg = std::min(sg, k / bk);  // a subgroup per step at most
  while (sg > 1 && rows_cm_shared_bytes(sg, gated || r32, bk, xs) > std::max(max_shared, 16384u)) --sg;
  return {xs ? name + "_xs" : name, 32 * sg, r32 ? (m + 31) / 32 : (m + 15) / 16, bk, r32 ? 32u : 16u};
}

std::string Model::batch_unsupported(int32_t rows) const {
  const auto& c = cfg_;
  if (rows < 2) return "a batch needs at least 2 sequences";
  if (rows > int32_t(slot_k_.size()) || rows > logits_rows_ || rows > max_batch_)
    return fmt::format("{} sequences need kv_slots, logits_rows and max_batch >= {}", rows, rows);
  for (int32_t l = 0; l < c.n_layers; ++l) {
    if (c.kind(l) != LayerKind::attention) return "hybrid layers (conv / recurrent state) are not batched yet";
    if (!c.computes_kv(l)) return "KV-shared layers are not batched yet";
    if (c.head_dim_of(l) > 256) return fmt::format("head_dim {} > 256 (split attention)", c.head_dim_of(l));
  }
  for (auto [on, what] : {std::pair{c.attn_output_gate, "gated attention output (attn_output_gate)"},
                          std::pair{c.ple_dim > 0, "per-layer embeddings (ple_dim)"},
                          std::pair{c.layer_scalar, "per-layer output scalars (layer_scalar)"},
                          std::pair{c.v_norm, "a norm on v (v_norm)"}, std::pair{c.v_from_k, "v taken from k (v_from_k)"},
                          std::pair{c.moe(), "a mixture-of-experts FFN (n_experts)"},
                          std::pair{c.attn_sinks, "attention sinks (attn_sinks)"},
                          std::pair{c.attn_out_bias, "an o-projection bias (attn_out_bias)"}})
    if (on) return fmt::format("{} is not batched yet", what);
  if (attn_splits_ == 0 || !kernels_.has(std::string("attention_split_") + (opts_.kv_f32 ? "f32kv" : "f16kv")))
    return "no split decode attention at this context";
  const Weight& head = c.tied_embeddings ? *find("embed") : *find("output");
  if (row_ranges(head).size() > 1 || row_ranges(*find("embed")).size() > 1) return "the embedding or head exceeds one binding";
  for (uint64_t bytes : {uint64_t(c.dim) * 4, uint64_t(c.q_dim()) * 4, uint64_t(c.kv_dim()) * 4, uint64_t(c.vocab) * 4})
    if (!aligned(bytes)) return fmt::format("a row of {} bytes is not a multiple of 256 (binding offsets)", bytes);
  return "";
}

void Model::record_decode_batch(gpu::CommandEncoder& enc, int32_t rows, gpu::Buffer& slot_state, uint64_t stride,
                                Recording& rec, gpu::Profiler* prof) {
  using namespace kparams;
  if (auto why = batch_unsupported(rows); !why.empty()) fail_kind(ErrorKind::usage, "batched decode: {}", why);
  if (!aligned(stride)) fail_kind(ErrorKind::internal, "slot state stride {} is not a multiple of 256", stride);
  const auto& c = cfg_;
  const uint32_t M = uint32_t(rows);
  last_rows_ = rows;
  auto pass = enc.beginComputePass();
  auto dispatch = [&](const std::string& kernel, std::vector<gpu::SpecConstant> spec, std::vector<BindGroupEntry> entries,
                      const auto& params, uint32_t gx, uint32_t gy) {
    const auto& p = kernels_.get(kernel, spec);
    rec.groups.push_back(device_.createBindGroup(p, 0, entries, kernel.c_str()));
    pass.setPipeline(p);
    pass.setBindGroup(0, rec.groups.back());
    pass.setPushConstants(params);
    pass.dispatchWorkgroups(gx, gy);
    if (prof) prof->mark(enc, kernel);  // `bench --parallel N --profile`: GPU time by kernel
  };
  auto rms = [&](gpu::Buffer& x, const Weight& w, gpu::Buffer& y, uint32_t n, uint32_t nrows, bool add) {
    dispatch(add ? "rms_norm_add_f32" : "rms_norm_f32", {{0, 128}},
             {{0, &x, 0, uint64_t(nrows) * n * 4}, {1, &w.buffer}, {2, &y, 0, uint64_t(nrows) * n * 4}},
             RmsNormParams{n, nrows, c.norm_eps, c.norm_offset ? 1.0f : 0.0f}, nrows, 1);
  };
  // Y[M, m] (+)= X[M, k] W^T, five ways; the default is the first that applies.
  // 1. Tensor cores, 8 <= M <= 32 (matmul_rows_cm.comp, where the device has cooperative matrices): 16 rows of W
  //    a workgroup with k split over its subgroups, so even a 512-row matrix spreads over 32 x 8 subgroups;
  //    W decoded to f16 once a step, X in f16 (rms_norm_f32_f16, attention's _f16o variants and the gated
  //    kernel's own output write it; staged in shared memory up to 16 rows), f32 sums. Why: every scalar
  //    kernel below peaked at 4-10 of the H100's 67 f32 TFLOP/s
  //    (its FMAs fed from L1 or shared memory), 7.15 of a 7.84 ms profiled step at N = 16
  //    (2026-11-24-h100-session5-serve.md: 3.13x batch 1 at best, the bar is 6x); a step's 39.5 GFLOP
  //    at N = 16 are ~0.1 ms on tensor cores, and the 0.8 GB of weights 0.27 ms at 3 TB/s.
  // 2. The multi-row matvec (matvec_multi.glsl, lanes across k; up to 64 rows, and where 1 does not
  //    apply: fewer than 8 rows, lavapipe, a k not a multiple of 64): W decoded once a step for NB rows. In the
  //    whole step (6eec232, N = 16) its best shape was NB 8, ROWS 4, gated 2 + 2, 64 invocations, norms
  //    folded: 5.8 ms against the batched matvec's 8.2; now NB 8, ROWS 2, gated 1 (6.14 ms, session 5).
  //    BLUESHIFT_MULTI_FOLD=0 puts the norms in rms_norm dispatches, BLUESHIFT_MULTI_LONG=1 takes the
  //    batched matvec where k >= 4 m (the down projection; up to 32 sequences).
  // 3. The same with lanes across rows of W (matvec_lanes.glsl; opt-in: slowest on the H100, its W
  //    loads touch a line per lane and small matrices leave most SMs idle).
  // 4. The decode matvec with a workgroup per sequence and row group (BATCH_FIRST: a row group's
  //    sequences side by side, sharing W through the cache), up to 32 sequences: 2.45x batch 1 at N = 16.
  // 5. The prefill GEMM beyond: tiles of 64 or more rows, W streamed once a step, the tile's unused
  //    rows cost compute only (~7.5 ms a step at any N on the H100: 32 tiles walking k = 8192 for the
  //    down projection).
  // The kernels alone at N = 16 (bs_gemv_bench --multi 16, H100, 2026-11-24 evening): multi beat the batched
  // matvec on 2048x2048 (30 vs 50 us), 8192x2048 (77 vs 88) and the 128256-row head (1040 vs 1253), tied on
  // 512x2048, lost on the down projection 2048x8192 (128 vs 84).
  // BLUESHIFT_BATCH_GEMM=rowscm|multi|lanes|matvec|matmul fixes the choice everywhere (A/B runs; rowscm
  // falls back to multi where it does not apply); rowsemu is rowscm with the fragments emulated, on any
  // device (slow: serve's tests run the tensor-core path's plumbing with it on lavapipe).
  static const std::string gemm = [] {
    const char* e = std::getenv("BLUESHIFT_BATCH_GEMM");
    std::string v = e ? e : "";
    if (!v.empty() && v != "matvec" && v != "matmul" && v != "multi" && v != "lanes" && v != "rowscm" &&
        v != "rowsemu")
      fail_kind(ErrorKind::usage,
                "BLUESHIFT_BATCH_GEMM={}: expected rowscm, multi, lanes, matvec, matmul or rowsemu", v);
    return v;
  }();
  const bool rows_emulated = gemm == "rowsemu";
  // The tensor-core kernel's cost hardly depends on M (16-row fragments): on the H100 (3d7e932) a step took
  // 3.52 ms at N = 4 against the multi-row matvec's 2.24, 3.77 at N = 16 against 6.24; the two cross near
  // N = 8 (BLUESHIFT_ROWSCM_MIN_ROWS moves the cut-over).
  static const uint32_t rows_min = env_uint("BLUESHIFT_ROWSCM_MIN_ROWS", 8);
  const bool want_rowscm = gemm.empty() ? M >= rows_min && M <= 32 : gemm == "rowscm" || rows_emulated;
  const bool use_matvec = gemm.empty() ? M <= 32 : gemm == "matvec";
  const bool want_multi = gemm.empty() ? M <= 64 : gemm == "multi" || want_rowscm;
  const bool want_lanes = gemm == "lanes";
  static const bool multi_fold = env_uint("BLUESHIFT_MULTI_FOLD", 1) != 0;
  static const bool multi_long = env_switch("BLUESHIFT_MULTI_LONG");
  const bool cpu = device_.adapter().type == "cpu";
  // The multi-row matvec's shape: NB batch rows a workgroup (the next power of 2 of M, at most 8), ROWS
  // weight rows (2; the gated FFN: ROWS gate and ROWS up rows, 1), 64 invocations (the H100's best whole step
  // at N = 16 of the shapes swept, 2026-11-24-h100-session5-serve: 6.14 ms vs 6.87 at ROWS 4 / 2); BLUESHIFT_MULTI_NB,
  // _ROWS, _GATED_ROWS and _WG fix them for tuning runs. ROWS doubles where the grid would exceed 65535
  // workgroups (the 128256-row head). The workgroup halves where its reduction's shared array
  // ((NB x ROWS (x 2) + NB) x workgroup floats) would exceed the device's limit.
  static const uint32_t multi_nb_max = std::clamp(env_uint("BLUESHIFT_MULTI_NB", 8), 1u, 64u);
  static const uint32_t multi_rows = std::clamp(env_uint("BLUESHIFT_MULTI_ROWS", 2), 1u, 16u);
  static const uint32_t multi_gated_rows = std::clamp(env_uint("BLUESHIFT_MULTI_GATED_ROWS", 1), 1u, 16u);
  static const uint32_t multi_wg_env = std::clamp(env_uint("BLUESHIFT_MULTI_WG", 64), 4u, 256u);
  uint32_t multi_nb = 1;
  while (multi_nb < M && multi_nb < multi_nb_max) multi_nb *= 2;
  multi_nb = std::min(multi_nb, multi_nb_max);
  const uint32_t multi_wg = cpu ? 8 : multi_wg_env;
  auto grid_rows = [](uint32_t m, uint32_t rows) {
    while ((m + rows - 1) / rows > 65535) rows *= 2;
    return rows;
  };
  auto multi_ok = [&](const Weight& w, uint32_t) {
    const bool long_rows = multi_long && w.shape[1] >= 4 * w.shape[0] && gemm.empty() && use_matvec;
    return want_multi && !long_rows && kernels_.has(weight_kernel("matvec", w.dtype) + "_multi") &&
           (w.dtype != DType::F16 || w.shape[1] % 8 == 0);
  };
  // Y[M, m] (+)= X[M, k] W^T, X RMS-normed by `norm` first when given; with `up`, act(X W^T) * (X U^T) (the
  // gated FFN, W the gate).
  auto multi_matvec = [&](const Weight& w, const Weight* norm, const Weight* up, gpu::Buffer& x, gpu::Buffer& y,
                          bool accumulate) {
    const uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]);
    const uint32_t rows = grid_rows(m, up ? multi_gated_rows : multi_rows);
    const std::string kernel =
        weight_kernel("matvec", w.dtype) + "_multi" + (up ? (norm ? "_gated" : "_gated_xn") : norm ? "_norm" : "");
    std::vector<BindGroupEntry> e = {{0, &w.buffer}, {1, &x, 0, uint64_t(M) * k * 4}, {2, &y, 0, uint64_t(M) * m * 4}};
    if (norm) e.push_back({3, &norm->buffer});
    if (up) e.push_back({4, &up->buffer});
    uint32_t wg = multi_wg;
    const uint64_t values = (uint64_t(multi_nb) * rows * (up ? 2 : 1) + multi_nb) | 1;
    const uint64_t limit = std::max<uint64_t>(16384, device_.adapter().max_shared_memory);  // Vulkan's minimum
    while (wg > 8 && values * wg * 4 + values * 4 > limit) wg /= 2;
    std::vector<gpu::SpecConstant> spec = {{0, wg}, {1, rows}, {2, multi_nb}};
    const uint32_t gx = (m + rows - 1) / rows, gy = (M + multi_nb - 1) / multi_nb, acc = accumulate ? 1u : 0u;
    if (norm || up)
      dispatch(kernel, spec, e,
               MatvecNormParams{m, k, M, acc, c.norm_eps, c.norm_offset ? 1.0f : 0.0f, c.act == Activation::silu ? 0u : 1u, 0},
               gx, gy);
    else
      dispatch(kernel, spec, e, MatvecParams{m, k, M, acc}, gx, gy);
  };
  // The lanes variant's shape: LR lanes a slice (the subgroup size, so a slice's x loads are one
  // broadcast; 8 on a CPU device), slices splitting k up to a workgroup of BLUESHIFT_LANES_WG (256: 8
  // slices of 32), ROWS rows of W a lane (BLUESHIFT_LANES_ROWS, 2; the gated FFN BLUESHIFT_LANES_GATED_ROWS
  // of each matrix, 1), NB as above. The workgroup halves where the slices' shared sums would not fit.
  static const uint32_t lanes_rows = std::clamp(env_uint("BLUESHIFT_LANES_ROWS", 2), 1u, 8u);
  static const uint32_t lanes_gated_rows = std::clamp(env_uint("BLUESHIFT_LANES_GATED_ROWS", 1), 1u, 8u);
  static const uint32_t lanes_wg_env = std::clamp(env_uint("BLUESHIFT_LANES_WG", 256), 8u, 1024u);
  const uint32_t sg = device_.subgroupSize();
  const uint32_t lanes_lr = cpu ? 8 : sg >= 8 && sg <= 64 ? sg : 32;
  const uint32_t lanes_wg = std::max(lanes_lr, cpu ? 16 : lanes_wg_env / lanes_lr * lanes_lr);
  auto lanes_ok = [&](const Weight& w, uint32_t rows) {
    return want_lanes && kernels_.has(weight_kernel("matvec", w.dtype) + "_multi_lanes") &&
           (w.dtype != DType::F16 || w.shape[1] % 8 == 0) &&
           (uint32_t(w.shape[0]) + lanes_lr * rows - 1) / (lanes_lr * rows) <= 65535;
  };
  // Y[M, m] (+)= X[M, k] W^T; with `up`, act(X W^T) * (X U^T) (X already normalized).
  auto lanes_matvec = [&](const Weight& w, const Weight* up, gpu::Buffer& x, gpu::Buffer& y, bool accumulate) {
    const uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]), rows = up ? lanes_gated_rows : lanes_rows;
    const std::string kernel = weight_kernel("matvec", w.dtype) + "_multi_lanes" + (up ? "_gated" : "");
    std::vector<BindGroupEntry> e = {{0, &w.buffer}, {1, &x, 0, uint64_t(M) * k * 4}, {2, &y, 0, uint64_t(M) * m * 4}};
    if (up) e.push_back({4, &up->buffer});
    uint32_t wg = lanes_wg;
    const uint64_t limit = std::max<uint64_t>(16384, device_.adapter().max_shared_memory);
    while (wg > lanes_lr && uint64_t(wg - lanes_lr) * multi_nb * rows * (up ? 2 : 1) * 4 + 4 > limit) wg -= lanes_lr;
    std::vector<gpu::SpecConstant> spec = {{0, wg}, {1, rows}, {2, multi_nb}, {3, lanes_lr}};
    const uint32_t gx = (m + lanes_lr * rows - 1) / (lanes_lr * rows), gy = (M + multi_nb - 1) / multi_nb;
    const uint32_t acc = accumulate ? 1u : 0u;
    if (up)
      dispatch(kernel, spec, e, MatvecNormParams{m, k, M, acc, 0.0f, 0.0f, c.act == Activation::silu ? 0u : 1u, 0}, gx, gy);
    else
      dispatch(kernel, spec, e, MatvecParams{m, k, M, acc}, gx, gy);
  };
  auto matmul = [&](const Weight& w, gpu::Buffer& x, gpu::Buffer& y, bool accumulate) {
    if (lanes_ok(w, lanes_rows)) return lanes_matvec(w, nullptr, x, y, accumulate);
    if (multi_ok(w, multi_rows)) return multi_matvec(w, nullptr, nullptr, x, y, accumulate);
    uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]);
    std::vector<BindGroupEntry> e = {{0, &w.buffer}, {1, &x, 0, uint64_t(M) * k * 4}, {2, &y, 0, uint64_t(M) * m * 4}};
    if (use_matvec) {
      // record_forward's workgroup size: about one invocation per part of a row, 8 on a CPU device.
      uint32_t parts = w.dtype == DType::F16 ? k / 8 : w.dtype == DType::Q8_0 ? k / 16 : k / 32, wg = 32;
      while (wg < parts && wg < 256) wg *= 2;
      const uint32_t rows_per_wg = 4;
      // Grid (M, row groups): a row group's M workgroups run side by side and share W through the cache;
      // (row groups, M) where the row groups exceed a grid's y limit (Gemma's 262144-row head).
      const uint32_t groups = (m + rows_per_wg - 1) / rows_per_wg;
      const bool batch_first = groups <= 65535;
      dispatch(weight_kernel("matvec", w.dtype), {{0, cpu ? 8u : wg}, {1, rows_per_wg}, {2, batch_first ? 1u : 0u}}, e,
               MatvecParams{m, k, M, accumulate ? 1u : 0u}, batch_first ? M : groups, batch_first ? groups : M);
      return;
    }
    MatmulPlan plan = plan_prefill_matmul(kernels_, w.dtype, m, k, M, !opts_.f32_prefill_matmul);
    if (plan.f16_x) {  // the tensor-core kernels read X in f16 (record_forward's matmul does the same)
      const uint64_t n = uint64_t(M) * k;
      if (n * 2 > x16_.size())
        fail_kind(ErrorKind::internal, "batched step: a {}x{} GEMM input exceeds the f16 staging buffer", M, k);
      dispatch("to_f16", {}, {{0, &x, 0, n * 4}, {1, &x16_, 0, n * 2}}, ToF16Params{uint32_t(n)},
               std::min(uint32_t((n / 4 + 255) / 256), 65535u), uint32_t(((n / 4 + 255) / 256 + 65534) / 65535));
      e[1] = {1, &x16_, 0, n * 2};
    }
    dispatch(plan.kernel, plan.constants, e, MatvecParams{m, k, M, accumulate ? 1u : 0u}, plan.groups_x, plan.groups_y);
  };
  auto grid_x = [](uint32_t n) { return std::min((n + 255) / 256, 65535u); };
  auto grid_y = [&](uint32_t n) { return ((n + 255) / 256 + grid_x(n) - 1) / grid_x(n); };

  // The tensor-core kernels' inputs: X in f16 in two buffers of this recording, 16-row slabs (32 when
  // M > 16) because the A fragments read whole slabs; the rows past M stay zero. xh holds a normed x (q,
  // k, v, the head) or the attention output (o), hh the gated FFN's output (down).
  const bool rows_ready =
      want_rowscm && kernels_.has("rms_norm_f32_f16") && kernels_.has("to_f16") && c.dim % 2 == 0;
  const uint32_t max_shared = device_.adapter().max_shared_memory;
  auto rows_plan = [&](const Weight& w, bool gated) {
    if (!rows_ready) return RowsCmPlan{};
    return plan_rows_cm(kernels_, w.dtype, uint32_t(w.shape[0]), uint32_t(w.shape[1]), M, gated, max_shared,
                        0, rows_emulated);
  };
  const uint64_t slab = (M + 15) / 16 * 16;
  gpu::Buffer *xh = nullptr, *hh = nullptr;
  auto f16_rows = [&](gpu::Buffer*& b, int32_t width, const char* label) -> gpu::Buffer& {
    if (!b) {
      const uint64_t bytes = slab * uint64_t(width) * 2;
      rec.scratch.push_back(
          std::make_unique<gpu::Buffer>(device_.createBuffer({bytes, gpu::BufferUsage::storage, label})));
      b = rec.scratch.back().get();
      std::vector<uint8_t> zeros(bytes, 0);
      device_.queue().writeBuffer(*b, 0, zeros.data(), bytes);
    }
    return *b;
  };
  auto x_f16 = [&]() -> gpu::Buffer& {
    return f16_rows(xh, std::max(c.dim, c.max_over_layers(&ModelConfig::q_dim_of)), "batch x f16");
  };
  auto h_f16 = [&]() -> gpu::Buffer& {
    return f16_rows(hh, c.max_over_layers(&ModelConfig::ffn_dim_of), "batch ffn f16");
  };
  // xn_ (f32, for a projection left to the scalar kernels) and x_f16() = RMSNorm(x_) * (offset + norm).
  auto rms_f16 = [&](const Weight& norm) {
    const uint64_t n = uint64_t(M) * c.dim;
    dispatch("rms_norm_f32_f16", {{0, 128}},
             {{0, &x_, 0, n * 4}, {1, &norm.buffer}, {2, &xn_, 0, n * 4}, {3, &x_f16(), 0, n * 2}},
             RmsNormParams{uint32_t(c.dim), M, c.norm_eps, c.norm_offset ? 1.0f : 0.0f}, M, 1);
  };
  auto rows_matmul = [&](const Weight& w, const RowsCmPlan& plan, gpu::Buffer& x16, gpu::Buffer& y,
                         bool accumulate) {
    const uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]);
    dispatch(plan.kernel, {{0, plan.workgroup}},
             {{0, &w.buffer}, {1, &x16, 0, slab * k * 2}, {2, &y, 0, uint64_t(M) * m * 4}},
             MatvecParams{m, k, M, accumulate ? 1u : 0u}, plan.groups_x, 1);
  };
  // h_f16() = act(X W_gate^T) * (X W_up^T) in f16.
  auto rows_gated = [&](const Weight& wg, const Weight& wu, const RowsCmPlan& plan) {
    const uint32_t m = uint32_t(wg.shape[0]), k = uint32_t(wg.shape[1]);
    dispatch(plan.kernel, {{0, plan.workgroup}},
             {{0, &wg.buffer},
              {1, &x_f16(), 0, slab * k * 2},
              {2, &h_f16(), 0, uint64_t(M) * m * 2},
              {4, &wu.buffer}},
             MatvecNormParams{m, k, M, 0, 0.0f, 0.0f, c.act == Activation::silu ? 0u : 1u, 0}, plan.groups_x,
             1);
  };
  auto row_state = [&](uint32_t binding, uint32_t r) { return BindGroupEntry{binding, &slot_state, r * stride, stride}; };
  auto k_cache = [&](int32_t slot, int32_t l) -> gpu::Buffer& {
    return slot == current_kv_slot_ ? kcache_[size_t(l)] : slot_k_[size_t(slot)][size_t(l)];
  };
  auto v_cache = [&](int32_t slot, int32_t l) -> gpu::Buffer& {
    return slot == current_kv_slot_ ? vcache_[size_t(l)] : slot_v_[size_t(slot)][size_t(l)];
  };

  const std::string kvt = opts_.kv_f32 ? "f32kv" : "f16kv";
  // Split attention's partial softmax states and arrival counts, one region per row (so rows never
  // share scratch and need no barrier between them); the counts start at zero and the kernel leaves them so.
  const uint32_t heads = uint32_t(c.n_heads), max_hd = uint32_t(c.max_over_layers(&ModelConfig::head_dim_of));
  const uint64_t part_stride = (uint64_t(heads) * attn_splits_ * (max_hd + 2) * 4 + 255) & ~uint64_t(255);
  const uint64_t count_stride = (uint64_t(heads) * 4 + 255) & ~uint64_t(255);
  rec.scratch.push_back(std::make_unique<gpu::Buffer>(
      device_.createBuffer({part_stride * M, gpu::BufferUsage::storage, "batch attention partials"})));
  gpu::Buffer& parts = *rec.scratch.back();
  rec.scratch.push_back(std::make_unique<gpu::Buffer>(
      device_.createBuffer({count_stride * M, gpu::BufferUsage::storage, "batch attention arrivals"})));
  gpu::Buffer& counts = *rec.scratch.back();
  std::vector<uint32_t> zeros(count_stride * M / 4, 0);
  device_.queue().writeBuffer(counts, 0, zeros.data(), zeros.size() * 4);

  // RoPE + KV append and attention for every row in one dispatch each (the *_slots kernels, which read a
  // row's caches through the addresses in `caches`, a uvec4 per row and layer: k cache, v cache), where the
  // device has buffer device addresses; else (or BLUESHIFT_BATCH_PER_ROW=1, A/B runs) a dispatch per row.
  // The encoder orders what it sees bound; the caches are not, but each attention reads q_, which the
  // RoPE dispatch before it writes, so the barrier for q_ orders the cache rows too.
  static const bool per_row = env_switch("BLUESHIFT_BATCH_PER_ROW");
  const std::string rope_slots = opts_.kv_f32 ? "rope_kv_f32kv_slots" : "rope_kv_f32_slots";
  const bool one_dispatch = !per_row && device_.hasBufferDeviceAddress() && kernels_.has(rope_slots) &&
                            kernels_.has("attention_split_" + kvt + "_slots");
  const uint64_t table_stride = (uint64_t(M) * 16 + 255) & ~uint64_t(255);
  gpu::Buffer* caches = nullptr;
  if (one_dispatch) {
    rec.scratch.push_back(std::make_unique<gpu::Buffer>(device_.createBuffer(
        {table_stride * uint64_t(c.n_layers), gpu::BufferUsage::storage, "batch KV cache addresses"})));
    caches = rec.scratch.back().get();
    std::vector<uint32_t> table(table_stride * uint64_t(c.n_layers) / 4, 0);
    for (int32_t l = 0; l < c.n_layers; ++l)
      for (uint32_t r = 0; r < M; ++r) {
        uint32_t* e = &table[(uint64_t(l) * table_stride + uint64_t(r) * 16) / 4];
        const uint64_t ka = k_cache(int32_t(r), l).deviceAddress(), va = v_cache(int32_t(r), l).deviceAddress();
        e[0] = uint32_t(ka), e[1] = uint32_t(ka >> 32), e[2] = uint32_t(va), e[3] = uint32_t(va >> 32);
      }
    device_.queue().writeBuffer(*caches, 0, table.data(), table.size() * 4);
  }

  // Each row's token is its slot state's word 0.
  const Weight& embed = *find("embed");
  if (one_dispatch) {
    dispatch(weight_kernel("embed", embed.dtype), {{0, 64}, {1, uint32_t(stride / 4)}},
             {{0, &embed.buffer}, {1, &slot_state, 0, M * stride}, {2, &x_, 0, uint64_t(M) * c.dim * 4}},
             EmbedParams{uint32_t(c.dim), M, c.embed_scale, 0}, M, 1);
  } else {
    for (uint32_t r = 0; r < M; ++r)
      dispatch(weight_kernel("embed", embed.dtype), {{0, 64}},
               {{0, &embed.buffer}, {1, &slot_state, r * stride, 4}, {2, &x_, uint64_t(r) * c.dim * 4, uint64_t(c.dim) * 4}},
               EmbedParams{uint32_t(c.dim), 1, c.embed_scale, 0}, 1, 1);
  }

  for (int32_t l = 0; l < c.n_layers; ++l) {
    auto W = [&](const char* s) -> const Weight& { return *find(fmt::format("blk.{}.{}", l, s)); };
    const uint32_t hd = uint32_t(c.head_dim_of(l)), nkv = uint32_t(c.kv_heads_of(l));
    const uint64_t qd = uint64_t(c.q_dim_of(l)), kvd = uint64_t(c.kv_dim_of(l));
    const bool sliding = c.sliding(l);
    const Weight& wv = W(c.has_v_proj(l) ? "attn_v" : "attn_k");
    const RowsCmPlan pq = rows_plan(W("attn_q"), false), pk = rows_plan(W("attn_k"), false),
                     pv = rows_plan(wv, false);
    if (!pq.kernel.empty() || !pk.kernel.empty() || !pv.kernel.empty()) {
      rms_f16(W("attn_norm"));
      for (auto [w, plan, y] : {std::tuple{&W("attn_q"), &pq, &q_}, std::tuple{&W("attn_k"), &pk, &k_},
                                std::tuple{&wv, &pv, &v_}}) {
        if (!plan->kernel.empty())
          rows_matmul(*w, *plan, x_f16(), *y, false);
        else
          matmul(*w, xn_, *y, false);
      }
    } else if (lanes_ok(W("attn_q"), lanes_rows) && lanes_ok(W("attn_k"), lanes_rows) &&
               lanes_ok(wv, lanes_rows)) {
      rms(x_, W("attn_norm"), xn_, uint32_t(c.dim), M, false);
      lanes_matvec(W("attn_q"), nullptr, xn_, q_, false);
      lanes_matvec(W("attn_k"), nullptr, xn_, k_, false);
      lanes_matvec(wv, nullptr, xn_, v_, false);
    } else if (multi_fold && multi_ok(W("attn_q"), multi_rows) && multi_ok(W("attn_k"), multi_rows) &&
               multi_ok(wv, multi_rows)) {
      multi_matvec(W("attn_q"), &W("attn_norm"), nullptr, x_, q_, false);
      multi_matvec(W("attn_k"), &W("attn_norm"), nullptr, x_, k_, false);
      multi_matvec(wv, &W("attn_norm"), nullptr, x_, v_, false);
    } else {
      rms(x_, W("attn_norm"), xn_, uint32_t(c.dim), M, false);
      matmul(W("attn_q"), xn_, q_, false);
      matmul(W("attn_k"), xn_, k_, false);
      matmul(wv, xn_, v_, false);
    }
    if (c.qkv_bias)
      for (auto [name, buf, n] : {std::tuple{"attn_q_bias", &q_, qd}, std::tuple{"attn_k_bias", &k_, kvd},
                                  std::tuple{"attn_v_bias", &v_, kvd}})
        dispatch("add_bias_f32", {}, {{0, buf, 0, M * n * 4}, {1, &W(name).buffer}}, BiasParams{uint32_t(n), M, 0, 0},
                 uint32_t((n + 255) / 256), M);
    if (c.qk_norm) {
      rms(q_, W("attn_q_norm"), q_, hd, M * heads, false);
      rms(k_, W("attn_k_norm"), k_, hd, M * nkv, false);
    }
    std::vector<gpu::SpecConstant> rot;
    if (c.rot_dim() != c.head_dim) rot.push_back({0, uint32_t(c.rot_dim())});
    gpu::Buffer& freq = sliding ? inv_freq_local_ : inv_freq_global_;
    const uint32_t window = sliding ? uint32_t(c.sliding_window) : 0u;
    const AttentionSplitParams ap{heads, nkv, hd, attn_splits_, window, c.softmax_scale_of(l), c.attn_softcap, 0};
    // Where the o projection runs on tensor cores, attention writes its f16 input itself (the *_f16o variant):
    // one dispatch and one barrier a layer fewer than a to_f16 pass over att_.
    const RowsCmPlan po = rows_plan(W("attn_out"), false);
    const std::string attn_slots = "attention_split_" + kvt + "_slots";
    const bool att_f16 = one_dispatch && !po.kernel.empty() && kernels_.has(attn_slots + "_f16o");
    if (one_dispatch) {
      auto rot_slots = rot;
      rot_slots.push_back({1, uint32_t(stride / 4)});
      const BindGroupEntry table{5, caches, uint64_t(l) * table_stride, table_stride};
      dispatch(rope_slots, rot_slots,
               {{0, &q_, 0, M * qd * 4}, {1, &k_, 0, M * kvd * 4}, {2, &v_, 0, M * kvd * 4}, {3, &freq},
                {4, &slot_state, 0, M * stride}, table},
               RopeKvParams{M, heads, nkv, hd}, heads + 2 * nkv, M);
      const BindGroupEntry out =
          att_f16 ? BindGroupEntry{3, &x_f16(), 0, M * qd * 2} : BindGroupEntry{3, &att_, 0, M * qd * 4};
      dispatch(att_f16 ? attn_slots + "_f16o" : attn_slots, {{0, uint32_t(stride / 4)}},
               {{0, &q_, 0, M * qd * 4}, out, {4, &parts, 0, part_stride * M},
                {5, &counts, 0, count_stride * M}, {6, &slot_state, 0, M * stride}, {7, caches, table.offset, table_stride}},
               ap, heads, attn_splits_ * M);
    }
    for (uint32_t r = 0; r < (one_dispatch ? 0 : M); ++r)
      dispatch(opts_.kv_f32 ? "rope_kv_f32kv" : "rope_kv_f32", rot,
               {{0, &q_, r * qd * 4, qd * 4}, {1, &k_, r * kvd * 4, kvd * 4}, {2, &v_, r * kvd * 4, kvd * 4}, {3, &freq},
                row_state(4, r), {5, &k_cache(int32_t(r), l)}, {6, &v_cache(int32_t(r), l)}},
               RopeKvParams{1, heads, nkv, hd}, heads + 2 * nkv, 1);
    for (uint32_t r = 0; r < (one_dispatch ? 0 : M); ++r)
      dispatch("attention_split_" + kvt, {},
               {{0, &q_, r * qd * 4, qd * 4}, {1, &k_cache(int32_t(r), l)}, {2, &v_cache(int32_t(r), l)},
                {3, &att_, r * qd * 4, qd * 4}, {4, &parts, r * part_stride, part_stride},
                {5, &counts, r * count_stride, count_stride}, row_state(6, r)},
               ap, heads, attn_splits_);
    if (!po.kernel.empty()) {
      const uint64_t n = uint64_t(M) * qd;
      if (!att_f16)
        dispatch("to_f16", {}, {{0, &att_, 0, n * 4}, {1, &x_f16(), 0, n * 2}}, ToF16Params{uint32_t(n)},
                 grid_x(uint32_t(n / 4)), grid_y(uint32_t(n / 4)));
      rows_matmul(W("attn_out"), po, x_f16(), c.sandwich_norm ? tmp_ : x_, !c.sandwich_norm);
      if (c.sandwich_norm) rms(tmp_, W("attn_post_norm"), x_, uint32_t(c.dim), M, true);
    } else if (c.sandwich_norm) {
      matmul(W("attn_out"), att_, tmp_, false);
      rms(tmp_, W("attn_post_norm"), x_, uint32_t(c.dim), M, true);
    } else {
      matmul(W("attn_out"), att_, x_, true);
    }
    const Weight &wg = W("ffn_gate"), &wu = W("ffn_up");
    const bool same = wg.dtype == wu.dtype && wg.shape == wu.shape && wg.buffer.size() == wu.buffer.size();
    const RowsCmPlan pg = same ? rows_plan(wg, true) : RowsCmPlan{}, pd = rows_plan(W("ffn_down"), false);
    const bool ffn_rows =
        !pg.kernel.empty() && !pd.kernel.empty();  // the gated kernel's f16 output feeds only it
    if (ffn_rows) {
      rms_f16(W("ffn_norm"));
      rows_gated(wg, wu, pg);  // act(gate) * up in one dispatch
    } else if (same && lanes_ok(wg, lanes_gated_rows) &&
               kernels_.has(weight_kernel("matvec", wg.dtype) + "_multi_lanes_gated")) {
      rms(x_, W("ffn_norm"), xn_, uint32_t(c.dim), M, false);
      lanes_matvec(wg, &wu, xn_, gate_, false);  // act(gate) * up in one dispatch
    } else if (same && multi_ok(wg, multi_gated_rows) &&
               kernels_.has(weight_kernel("matvec", wg.dtype) + "_multi_gated_xn")) {
      if (multi_fold) {
        multi_matvec(wg, &W("ffn_norm"), &wu, x_, gate_, false);  // act(gate) * up in one dispatch
      } else {
        rms(x_, W("ffn_norm"), xn_, uint32_t(c.dim), M, false);
        multi_matvec(wg, nullptr, &wu, xn_, gate_, false);
      }
    } else {
      if (multi_fold && multi_ok(wg, multi_rows) && multi_ok(wu, multi_rows)) {
        multi_matvec(wg, &W("ffn_norm"), nullptr, x_, gate_, false);
        multi_matvec(wu, &W("ffn_norm"), nullptr, x_, up_, false);
      } else {
        rms(x_, W("ffn_norm"), xn_, uint32_t(c.dim), M, false);
        matmul(wg, xn_, gate_, false);
        matmul(wu, xn_, up_, false);
      }
      uint32_t n = M * uint32_t(c.ffn_dim_of(l));
      dispatch("gated_act_f32", {}, {{0, &gate_, 0, uint64_t(n) * 4}, {1, &up_, 0, uint64_t(n) * 4}, {2, &gate_, 0, uint64_t(n) * 4}},
               GatedActParams{n, c.act == Activation::silu ? 0u : 1u, 0, 0}, grid_x(n), grid_y(n));
    }
    auto down = [&](gpu::Buffer& y, bool accumulate) {
      if (ffn_rows)
        rows_matmul(W("ffn_down"), pd, h_f16(), y, accumulate);
      else
        matmul(W("ffn_down"), gate_, y, accumulate);
    };
    if (c.sandwich_norm) {
      down(tmp_, false);
      rms(tmp_, W("ffn_post_norm"), x_, uint32_t(c.dim), M, true);
    } else {
      down(x_, true);
    }
  }
  const Weight& head = c.tied_embeddings ? embed : *find("output");
  if (const RowsCmPlan ph = rows_plan(head, false); !ph.kernel.empty()) {
    rms_f16(*find("output_norm"));
    rows_matmul(head, ph, x_f16(), logits_, false);
  } else if (multi_fold && !lanes_ok(head, lanes_rows) && multi_ok(head, multi_rows)) {
    multi_matvec(head, find("output_norm"), nullptr, x_, logits_, false);
  } else {
    rms(x_, *find("output_norm"), xn_, uint32_t(c.dim), M, false);
    matmul(head, xn_, logits_, false);
  }
  if (c.final_softcap > 0) {
    uint32_t n = M * uint32_t(c.vocab);
    dispatch("softcap_f32", {}, {{0, &logits_, 0, uint64_t(n) * 4}}, SoftcapParams{n, c.final_softcap, 0, 0}, grid_x(n),
             grid_y(n));
  }
}

}  // namespace bs::model
