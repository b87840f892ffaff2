// The model on the GPU: bound weights, KV cache, planned activations, and the recorded forward pass.
//
// Two paths through the same layers:
//   prefill — M tokens at once (matmul kernels over [M, dim] activations);
//   decode  — one token (matvec kernels), reading its token and position from the GPU step-state
//             buffer, so a recorded step can be replayed without host patches.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels_glsl/params.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/kernel_cache.h"
#include "runtime/model/source.h"

namespace bs::model {

class PersistentDecode;

struct ModelOptions {
  int32_t max_ctx = 0;       // KV-cache length; 0 = min(config.max_seq, 4096)
  int32_t max_batch = 128;   // prefill chunk: rows per forward
  int32_t logits_rows = 1;   // rows of logits kept per forward (parity runs keep every row)
  bool profile = false;      // timestamp marks per kernel (forces barriers)
  bool kv_f32 = false;       // f32 KV cache (`--precision f32`): twice the bytes, no f16 rounding of k and v
  bool f32_prefill_matmul = false;  // prefill matmuls in f32 (`--precision f32`), not on f16-input tensor cores
  gpu::KernelSource kernels = gpu::KernelSource::glsl;  // embedded GLSL kernels, or their WGSL twins
  int32_t kv_slots = 1;      // serve --parallel: a KV cache per sequence (select_kv_slot, record_decode_batch)
  int64_t prefetch_kb = -1;  // decode's L2 read-ahead, KiB a phase (record_forward); -1: the env or the default
  int32_t kv_touch = -1;     // decode's K/V rows read into L2 on the per-phase path (record_forward); -1: the env or 1
  // Decode's chained dispatches (record_forward): 0 none, 1 gate + up -> down, 2 and o -> gate + up, 3 and down -> the
  // next q/k/v, 4 and q/k/v -> attention -> o (2-4 part the values on NVIDIA: stale L1 reads, record_forward);
  // -1: BLUESHIFT_CHAIN, else 0.
  int32_t chain = -1;
  // The position from which the decode loop replays its long-context recording (Model::long_context_from); -1: the
  // env or the measured default, 0: never.
  int32_t long_decode_from = -1;
  // `--deterministic`: decode bitwise reproducible from run to run, without the sums that float atomics add in any
  // order (the persistent kernel's folded o projection, persistent.cpp); costs the H200's q4_k_m decode
  // 5-6% (benchmarks/results/2026-11-30-h200-session35.md, T1: 1B -6.4%, 8B -4.9%).
  bool deterministic = false;
};

struct Weight {
  DType dtype;
  std::vector<int64_t> shape;
  gpu::Buffer buffer;
};

// Objects a recorded command buffer refers to; they live as long as the recording.
struct Recording {
  std::deque<gpu::BindGroup> groups;  // a deque: recorded commands keep references to its elements
  std::vector<std::unique_ptr<gpu::Buffer>> scratch;
  // Greedy decode's argmax keys (argmax.glsl; ceil(vocab / kArgmaxSliceRows) of them, kArgmaxKeyStride 64-bit words
  // apart: params.h), set by the caller: a one-row logits_only forward may then fold the argmax into its head (the
  // *_argmax matvecs), and says so in head_argmax, in which case the sampler reads these keys and no argmax_parts
  // dispatch is needed.
  gpu::Buffer* argmax_keys = nullptr;
  bool head_argmax = false;  // record_forward's last call folded the argmax into its head
  // Set by the caller: x already holds the embedding row of tokens()[0] (the decode loop's sampler wrote it:
  // Model::sampler_embed), so a one-row forward records no embed dispatch.
  bool x_embedded = false;
  // Set by the caller: the steps this recording replays are at positions Model::long_context_from() or later, so a
  // one-row forward records the long-context forms (decode attention by kv head).
  bool long_context = false;
};

// What a sampler needs to write the sampled token's embedding row into x for the next decode step (sample.comp
// SAMPLE_EMBED): its kernel, the table's binding (11) and x's (12), and the row's push constants.
struct SamplerEmbed {
  std::string kernel;
  gpu::BindGroupEntry table, x;
  kparams::EmbedParams params;
};

// Indirect mode for replayed decode steps: every dispatch reads its workgroup counts from `args`
// (triple i at byte 12*i); `nominal` holds the counts of a running step, and the gate kernel at the
// start of each step copies them, or zeros once the GPU has decided to stop.
struct IndirectTable {
  std::vector<uint32_t> nominal;  // 3 per dispatch, filled while recording the first step
  size_t cursor = 0;              // dispatch index within the step being recorded
  gpu::Buffer* args = nullptr;
  uint32_t add(uint32_t x, uint32_t y, uint32_t z);  // returns the dispatch's index
};

// record_forward's dispatch helpers, handed to the per-family layer recorders (forward_<family>.cpp).
struct LayerRecorder {
  // One dispatch: kernel, spec constants, bindings, push constants (bytes), workgroups x / y, profile label.
  std::function<void(const std::string&, std::vector<gpu::SpecConstant>, std::vector<gpu::BindGroupEntry>, const void*,
                     uint32_t, uint32_t, uint32_t, const std::string&)> dispatch;
  // y[rows, m] (+)= x[rows, k] W^T from element offset x_off (matvec for one row, matmul for more).
  std::function<void(const Weight&, gpu::Buffer&, uint64_t, gpu::Buffer&, uint32_t, bool)> matmul;
  // y = rmsnorm(x) over rows of n, (1 + w) where the model says so.
  std::function<void(gpu::Buffer&, uint64_t, const Weight&, gpu::Buffer&, uint64_t, uint32_t, uint32_t, bool)> rms;
  // Decode: y = W rmsnorm(x_) in one dispatch.
  std::function<void(const Weight&, const Weight&, gpu::Buffer&)> normed_matvec;
  template <class P>
  void run(const std::string& k, std::vector<gpu::SpecConstant> s, std::vector<gpu::BindGroupEntry> e, const P& p,
           uint32_t gx, uint32_t gy, const std::string& label) const {
    dispatch(k, std::move(s), std::move(e), &p, uint32_t(sizeof(P)), gx, gy, label);
  }
};

class Model {
 public:
  Model(gpu::Device& device, const ModelSource& source, const ModelOptions& options);

  const ModelConfig& config() const { return cfg_; }
  int32_t max_ctx() const { return max_ctx_; }
  // The position from which a decode step is faster recorded with Recording::long_context (the decode loop replays
  // that second recording there); INT32_MAX where it would record nothing different.
  int32_t long_context_from() const;
  int32_t max_batch() const { return max_batch_; }
  int32_t logits_rows() const { return logits_rows_; }

  // Records the forward of `rows` tokens: ids in tokens()[0..rows), positions state.pos + row.
  // Logits of the last min(rows, logits_rows) rows land in logits() (row-major [rows, vocab]).
  // With `indirect`, every dispatch is indirect through the table (decode-loop replay). `logits_only`
  // (the decode loop): only logits() is read afterwards, so the output norm may be folded into the head
  // and xn (last_normed) is then not written.
  // `after_layer(l)` runs once layer l is recorded (prefill: the session submits what is recorded so far, so
  // that the GPU starts while the host records the rest).
  void record_forward(gpu::CommandEncoder& enc, int32_t rows, Recording& rec, gpu::Profiler* prof = nullptr,
                      IndirectTable* indirect = nullptr, bool logits_only = false,
                      const std::function<void(int32_t)>& after_layer = {});

  // Convenience for parity and tools: runs tokens through prefill (chunked) starting at pos0 and
  // returns the logits of every row (or only the last when all_rows is false).
  std::vector<float> prefill(std::span<const int32_t> tokens, int32_t pos0, bool all_rows);
  // One token through the decode path at `pos`; returns its logits. Its head is the decode loop's (record_forward's
  // `logits_only`: the output norm folded into or fused with the head), so last_normed() is not written.
  std::vector<float> decode(int32_t token, int32_t pos);

  gpu::Buffer& tokens() { return tokens_; }  // u32 [max_batch]
  gpu::Buffer& state() { return state_; }    // u32 [16]: [0] token, [1] pos, the rest for the decode loop
  gpu::Buffer& logits() { return logits_; }  // f32 [logits_rows, vocab]
  gpu::KernelCache& kernels() { return kernels_; }
  gpu::Device& device() { return device_; }
  uint64_t weight_bytes() const { return weight_bytes_; }
  // Where loading the weights spent its time: the source's part (RDRR: waiting for shards, in the sink) and the
  // upload's (writing staging memory, waiting for the GPU); bench --json reports it.
  struct LoadBreakdown {
    SourceStats source;
    double staging_write_s = 0, gpu_wait_s = 0;
  };
  const LoadBreakdown& load_breakdown() const { return load_breakdown_; }
  // The persistent decode kernel's plan, or null where decode runs phase by phase, for the reason
  // persistent_why() gives (bench --json reports both).
  const PersistentDecode* persistent() const { return persistent_.get(); }
  const std::string& persistent_why() const { return persistent_why_; }
  // The greedy sampler's embedding write (Recording::x_embedded), where the table is one binding and the device has
  // the kernel; else nothing, and each decode step embeds its token in a dispatch of its own.
  std::optional<SamplerEmbed> sampler_embed();
  // After a forward: the last row's final hidden state before the final norm, and after it (not after decode()).
  std::vector<float> last_hidden();
  std::vector<float> last_normed();
  // Rows of a weight matrix dequantized to f32 (reads the GPU copy back).
  std::vector<float> weight_row(const std::string& name, int64_t row);
  uint64_t kv_bytes() const;  // attention layers' KV caches
  // K and V bytes one decode step at context length `ctx` reads: every attention layer reads its cache
  // (a KV-shared layer its source's) over min(ctx, window) positions on sliding layers, ctx on the others.
  double kv_read_bytes(double ctx) const;
  // The fixed-size per-sequence state of the other layers (f32), which each decode step reads and writes in
  // full: LFM2's conv state, Qwen 3.5's conv + recurrent state (layer_state_bytes in model.cpp).
  uint64_t state_bytes() const;
  const Weight* find(const std::string& name) const;

  // --- serve's continuous batching (forward_batch.cpp) ---
  // The KV-cache slot record_forward reads and writes (slot 0 unless chosen; kv_slots of them).
  void select_kv_slot(int32_t slot);
  // One decode step of `rows` sequences together: row r is sequence r, its token and position at
  // slot_state[r * stride / 4 + 0 / 1], its KV cache slot r. Projections take every row at once (batched
  // matvecs, or the prefill GEMM); RoPE, the KV append and attention run per row. Logits of every row land in logits() (logits_rows >= rows).
  // Replayable: nothing in it depends on the host after recording. Models it cannot batch are refused
  // by name (batch_unsupported() says why, empty when it can).
  void record_decode_batch(gpu::CommandEncoder& enc, int32_t rows, gpu::Buffer& slot_state, uint64_t stride, Recording& rec,
                           gpu::Profiler* prof = nullptr);
  std::string batch_unsupported(int32_t rows) const;

 private:
  friend class PersistentDecode;  // runtime/model/persistent.cpp reads the buffers it binds
  // prefill() and decode(): the tokens' forwards in chunks, the logits of every row or the last (decode's
  // `logits_only`: record_forward's).
  std::vector<float> forward_tokens(std::span<const int32_t> tokens, int32_t pos0, bool all_rows, bool logits_only);
  const Weight& bind(const std::string& name, std::vector<int64_t> shape, bool matrix) const;
  // Binding-sized row ranges of a weight too large for one binding, and a range's bytes (model.cpp).
  std::vector<std::pair<uint32_t, uint32_t>> row_ranges(const Weight& w) const;
  uint64_t range_offset(const Weight& w, uint32_t r0) const;
  uint64_t range_bytes(const Weight& w, uint32_t r0, uint32_t r1) const;
  void check_fits(const ModelSource& source) const;
  // LFM2's short-conv layers (forward_lfm2.cpp): their weights, state, and recording.
  void bind_short_conv(int32_t l);
  void record_short_conv(int32_t l, uint32_t rows, bool fold_norm, const LayerRecorder& r);

  // --- Qwen 3.5 / 3.6 (forward_qwen35.cpp) ---
  void bind_linear_attention(int32_t l) const;  // a Gated DeltaNet layer's weights
  void alloc_linear_attention();                // its activations and per-layer conv / recurrent state
  // x_ += the layer's DeltaNet branch for `rows` tokens at state.pos (fold_norm: decode's normed matvecs).
  void record_linear_attention(int32_t l, uint32_t rows, bool fold_norm, const LayerRecorder& r);

  // --- Mixture of experts (forward_moe.cpp) ---
  void bind_moe(int32_t l) const;  // a MoE layer's router and experts
  void alloc_moe();                // routing buffers and the experts' activations
  // x_ += the layer's routed experts for `rows` tokens (ffn_norm, router, experts, weighted sum).
  void record_moe(int32_t l, uint32_t rows, const LayerRecorder& r);

  // --- Gemma 4 (forward_gemma4.cpp) ---
  void record_per_layer_inputs(const LayerRecorder& r, uint32_t rows);
  void record_layer_tail(const LayerRecorder& r, int32_t l, uint32_t rows);

  gpu::Device& device_;
  gpu::KernelCache kernels_;
  ModelConfig cfg_;
  ModelOptions opts_;
  int32_t max_ctx_, max_batch_, logits_rows_;
  std::map<std::string, Weight> weights_;
  uint64_t weight_bytes_ = 0;
  LoadBreakdown load_breakdown_;
  // Activations, planned once for max_batch rows.
  gpu::Buffer tokens_, state_, x_, xn_, q_, k_, v_, att_, tmp_, gate_, up_, scores_, logits_;
  gpu::Buffer prefetch_sink_;  // decode's L2 prefetches write one value a workgroup here (record_forward)
  gpu::Buffer kv_touch_sink_;  // decode's K/V touches (kv_touch.comp) would write here: they never do
  // Decode's chained dispatches' counters (chain.glsl): a slot of kChainSlotBytes for each of a layer's
  // kChainPoints chained boundaries (record_forward's ChainPoint), zeroed before each step's layers.
  static constexpr uint32_t kChainSlotBytes = 256, kChainPoints = 5;
  gpu::Buffer chain_;
  gpu::Buffer inv_freq_global_, inv_freq_local_;
  // The f16 copy of a prefill GEMM's input that the tensor-core kernels read: [max_batch, widest k].
  gpu::Buffer x16_;
  gpu::Buffer splitk_ws_;  // split-k GEMMs' partial sums (kSplitKSlots x kSplitKPlaneFloats; empty: no split-k plans)
  // Decode's plain Q4_K matvecs on integer dot products (BLUESHIFT_Q4K_DOT=int|intmx: matvec_q4k_i8 / _i8mx;
  // empty: the float decode) and their input, x quantized by quantize_x_q8 (one row of the widest Q4_K k).
  std::string q4k_matvec_;
  // Decode's head: the output norm in a dispatch of its own before the matvec (BLUESHIFT_HEAD_NORM_APART, default on;
  // off: folded into the matvec), and where it is apart, a Q6_K head on integer dot products (matvec_q6k_wide_i8,
  // BLUESHIFT_HEAD_I8; record_forward), x quantized into xq_ too (as wide as the widest of those).
  bool head_norm_apart_ = true, head_i8_ = false;
  gpu::Buffer xq_;
  // Gemma 4: v's weightless norm (a weight of ones); per-layer inputs: the embedding rows [rows, L*P],
  // the projection of the embedding [rows, L*P], the combined inputs [L, max_batch, P] (layer-major, so
  // a layer's rows are contiguous) and the gate [rows, P].
  Weight ones_{DType::F32, {}, {}};
  gpu::Buffer ple_rows_, ple_proj_, ple_, ple_gate_;
  // Split-context decode attention: `attn_splits_` chunks per head, their partial softmax states, and a
  // per-head arrival count (zero between dispatches). 0 splits: the model's head_dim is too large.
  uint32_t attn_splits_ = 0;
  gpu::Buffer attn_part_, attn_count_;
  // Layer l's decode attention has the long-context recording's form (attention by kv head; long_context_from).
  bool long_attention_layer(int32_t l, int32_t from) const;
  std::vector<gpu::Buffer> kcache_, vcache_;  // one-token placeholders for layers without a cache of their own
  // kv_slots > 1: the other slots' caches (slot_k_[current_kv_slot_] is empty: its buffers are in kcache_).
  std::vector<std::vector<gpu::Buffer>> slot_k_, slot_v_;
  int32_t current_kv_slot_ = 0;
  std::shared_ptr<PersistentDecode> stashed_persistent_;  // off while another slot is selected (it binds slot 0)
  // LFM2: in_proj's output [max_batch, 3 * dim] (B | C | x); per short-conv layer, conv_state_ is its
  // rolling state [conv_kernel - 1, dim].
  gpu::Buffer conv_bcx_;
  // Qwen 3.5: the gated attention's q_proj output [B, heads, 2, head_dim] and gate [B, q_dim]; the DeltaNet
  // layers' projections, conv output and branch output; per layer, the conv state [qkv_dim, conv - 1] and
  // the recurrent state [v_heads, k_dim, v_dim] (f32, updated in place by decode steps).
  gpu::Buffer attn_qg_, attn_gate_;
  gpu::Buffer lin_qkv_, lin_mix_, lin_z_, lin_a_, lin_b_, lin_o_;
  // Per layer (empty or a placeholder for layers without one).
  std::vector<gpu::Buffer> conv_state_, rec_state_;
  // MoE: per slot (token t, choice s: t * k + s) its expert and weight, the experts' gate | up [slots, 2F], h
  // [slots, F] and down outputs [slots, dim]; at prefill the slots grouped by expert (counts, offsets [E], perm [slots]).
  gpu::Buffer moe_ids_, moe_wts_, moe_gu_, moe_h_, moe_y_, moe_counts_, moe_offsets_, moe_perm_, moe_zero_;
  int32_t last_rows_ = 0;  // rows of the most recent forward
  std::shared_ptr<PersistentDecode> persistent_;  // every layer of a decode step in one dispatch; null: per phase
  std::string persistent_why_;                    // why persistent_ is null
};

// Tokens per chunk of the chunked delta-rule kernel for a q/k head width and a shared-memory size (0: none fits).
uint32_t delta_chunk(int32_t k_dim, uint32_t max_shared);

// The kernel variant of `op` (matvec, matmul, embed) for a weight dtype.
std::string weight_kernel(const char* op, DType t);

// The prefill GEMM (more than one row) Y[tokens, m] (+)= X[tokens, k] W[m, k]^T: the tensor-core kernel
// matmul_cm_* where the kernel set has it, the device runs it (KernelCache::has) and k is a multiple of
// its 32-wide step (in a tile chosen by the grid size); else the scalar tiled matmul_*.
// BLUESHIFT_NO_COOPMAT=1 forces the scalar kernel and BLUESHIFT_MATMUL_TILE=64x64|64x128|128x128|64x64k64|256x128k16 fixes
// the tensor-core tile, for A/B and tuning runs.
struct MatmulPlan {
  std::string kernel;
  std::vector<gpu::SpecConstant> constants;
  uint32_t groups_x = 0, groups_y = 0;  // the dispatch
  bool f16_x = false;  // the kernel reads X as f16 (the tensor-core kernels: to_f16 converts it first)
  // > 1: split-k (matmul_cm.comp CM_SPLITK): the kernel writes `parts` planes of partial sums, [parts, tokens, m]
  // f32, to its binding 2 instead of Y, and splitk_reduce adds them into Y (kSplitKPlaneFloats bounds the planes).
  uint32_t parts = 1;
};
// The most floats a split-k plan's planes take: parts x (tokens x m) <= 132 multiprocessors' worth of 128 x 128
// tiles, since parts is chosen to fill the GPU once (plan_prefill_matmul).
constexpr uint64_t kSplitKPlaneFloats = 132ull * 128 * 128;
// The split-k workspace's regions of kSplitKPlaneFloats each: q, k and v's GEMMs each write their own.
constexpr uint64_t kSplitKSlots = 3;
// The tensor-core tiles variants.cmake declares (tokens x rows of W, k step), smallest first but for the last.
struct CoopmatTile {
  const char* suffix;  // of the kernel name, e.g. "_128x128"
  uint32_t bm, bn, bk;
  bool single = false;  // one shared buffer (CM_SINGLE)
  std::string label() const {
    return bk == 32 && !single ? fmt::format("{}x{}", bm, bn) : fmt::format("{}x{}{}k{}", bm, bn, single ? "s" : "", bk);
  }
};
std::span<const CoopmatTile> coopmat_tiles();

// The prefill submitted in parts while the rest records: a record_forward after_layer hook that, after layers 0,
// 3, 15 and 63 (not after the last: the head follows at once), splits `enc` and submits what it holds, so the GPU
// starts on layer 0 while the host records on. Each part is 4 times the last, so the GPU's queue stays ahead (a
// layer's GPU time was 5-15 times its recording on the H100), and every submit costs the GPU a drain (~20 us),
// so no more parts than that. Recording had taken 1.9 ms of the 1B q4_k_m's 12.0 ms TTFT and 3.6 of the 8B's
// 55.5, with the GPU idle (2026-11-28-h100-session12.md, R1-R2). The parts go to `parts`, which must outlive
// their execution. BLUESHIFT_PREFILL_SPLIT=0: no parts (one command buffer).
std::function<void(int32_t)> prefill_in_parts(gpu::CommandEncoder& enc, gpu::Queue& queue, int32_t n_layers,
                                              std::vector<gpu::CommandBuffer>& parts);
// f16_inputs = false: the f32 kernel (matmul.comp) even where tensor cores (f16 inputs) are available.
// split_k: the caller can run a split-k plan (parts > 1; a workspace of kSplitKPlaneFloats and splitk_reduce).
MatmulPlan plan_prefill_matmul(const gpu::KernelCache& kernels, DType t, uint32_t m, uint32_t k, uint32_t tokens,
                               bool f16_inputs = true, bool split_k = false);

// serve's batched decode on tensor cores (forward_batch.cpp): Y[rows, m] (+)= X[rows, k] W[m, k]^T for
// 1 <= rows <= 32, X in f16 (16 rows bound, 32 when rows > 16), or with `gated` the FFN act(X W^T) * (X U^T)
// as f16 (matmul_rows_cm_*[_gated]). `kernel` is empty where the device lacks cooperative matrices or the
// shape does not fit (k % 64, Q6_K k % 256, gated m even). The workgroup is 32 x subgroups, which split k:
// `subgroups` (0: 8, gated 6; BLUESHIFT_ROWSCM_SG / _GATED_SG) as far as k's steps and the device's shared
// memory allow. The k step is 64, or 128 (the *_k128 variants, plain only) with `bk` = 128 or
// BLUESHIFT_ROWSCM_BK=128. Plain products of 32768 rows or more (heads) take 32 rows a workgroup (the *_r32
// variants; grid groups_x = (m + 31) / 32); `rows32` 0 / 1 (or BLUESHIFT_ROWSCM_R32) turns that off / on
// everywhere.
// Up to 16 rows, the *_xs variants (X staged in shared memory beside the W tile; k steps of 64 only) unless
// `x_shared` is 0 (or BLUESHIFT_ROWSCM_XS=0).
// `emulated`: the same kernel with the fragments emulated (matmul_rows_emu_*, any device; slow: for tests of
// the path on lavapipe).
struct RowsCmPlan {
  std::string kernel;
  uint32_t workgroup = 0, groups_x = 0, bk = 0, rows_per_group = 0;
};
RowsCmPlan plan_rows_cm(const gpu::KernelCache& kernels, DType t, uint32_t m, uint32_t k, uint32_t rows,
                        bool gated, uint32_t max_shared, uint32_t subgroups = 0, bool emulated = false,
                        uint32_t bk = 0, int rows32 = -1, int x_shared = -1);
// The shared memory matmul_rows_cm asks at a number of subgroups and k step (x_shared: the *_xs variants).
uint64_t rows_cm_shared_bytes(uint32_t subgroups, bool gated, uint32_t bk = 64, bool x_shared = false);

}  // namespace bs::model
