#include "runtime/model/model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include "kernels_glsl/params.h"
#include "rdrr/quant.h"
#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/gpu/uploader.h"
#include "runtime/model/gpu_repack.h"
#include "runtime/model/persistent.h"
#include "runtime/model/reference.h"
#include "runtime/model/repack.h"

namespace bs::model {

using gpu::BindGroupEntry;
using gpu::BufferUsage;

// One table: weight dtype -> kernel-name suffix; an unsupported combination is an explicit error.
std::string weight_kernel(const char* op, DType t) {
  switch (t) {
    case DType::F16: return std::string(op) + "_f16";
    case DType::Q8_0: return std::string(op) + "_q8_0";
    case DType::Q4_K: return std::string(op) + "_q4k";
    case DType::Q6_K: return std::string(op) + "_q6k";
    case DType::MXFP4: return std::string(op) + "_mxfp4";  // MoE experts (GPT-OSS); matvec / matmul only
    case DType::I4: return std::string(op) + "_i4";  // embed only: DOPPLER's int4 per-layer-embedding table
    default: fail("no {} kernel for weights of dtype {}", op, dtype_name(t));
  }
}

std::span<const CoopmatTile> coopmat_tiles() {
  static constexpr CoopmatTile kTiles[] = {{"", 64, 64, 32},
                                           {"_64x128", 64, 128, 32},
                                           {"_128x128", 128, 128, 32},
                                           {"_64x64k64", 64, 64, 64},
                                           {"_256x128k16", 256, 128, 16},
                                           {"_128x128sk64", 128, 128, 64, true}};
  return kTiles;
}

MatmulPlan plan_prefill_matmul(const gpu::KernelCache& kernels, DType t, uint32_t m, uint32_t k, uint32_t tokens,
                               bool f16_inputs, bool split_k) {
  std::string cm = weight_kernel("matmul_cm", t);
  if (!f16_inputs || env_switch("BLUESHIFT_NO_COOPMAT") || k % 32 != 0 || !kernels.has(cm))
    return {weight_kernel("matmul", t), {}, (m + 63) / 64, (tokens + 63) / 64};  // matmul.comp: 64 x 64 tiles
  // A larger tile reuses each staged weight and X value more often, but a grid smaller than the GPU
  // leaves multiprocessors idle (an H100 has 132). Measured at 512 tokens with X in f16
  // (benchmarks/results/2026-11-24-h100-gemm.md, run G3): 256x128k16 wins once it makes 128 workgroups
  // (the 1B's 8192x2048 and the 8B's 14336x4096: 158 vs 172 and 574 vs 638 us with 128x128); 128x128
  // at 128 of its own (4096x4096: 157 vs 217 us with 64x64); 64x64 down to 256 of its own (2048x2048,
  // 2048x8192: 61 vs 66 and 215 vs 245 us with 64x64k64); below that 64x64k64 (512x2048: 36 vs 46 us,
  // 1024x4096: 65 vs 86 us), whose fewer, longer k steps and 8 subgroups suit the few workgroups.
  // 64x128 no longer wins anywhere; it stays for BLUESHIFT_MATMUL_TILE. Q6_K where 128x128 is chosen:
  // its single-buffered k-64 form (the 8B's down projection: 685 vs 761 us, session 5 P5).
  const auto tiles = coopmat_tiles();
  auto groups = [&](const CoopmatTile& c) { return ((m + c.bn - 1) / c.bn) * ((tokens + c.bm - 1) / c.bm); };
  auto usable = [&](const CoopmatTile& c) { return k % c.bk == 0 && kernels.has(cm + c.suffix); };
  // Q4_K, F16 and Q8_0 wherever 128x128 would make 128 workgroups, in place of 128x128 and of 256x128k16: the
  // single-buffered k-64 tile. Q4_K's k steps then cover whole 64-weight groups, so its W loads go by chunk pairs
  // (matmul_cm.comp CM_PAIRS: one header and one code load per 32 weights; H100, 2026-11-24-h100-session7.md S9:
  // the 8B's TTFT 83.5 -> 73.3 ms). F16 and Q8_0 take it with their next step's lines touched into L1
  // (CM_PREFETCH, variants.cmake; 2026-11-25-h100-session8.md R3-R4: F16 14336x4096 650 -> 544 us, 4096x14336
  // 607 -> 462; Q8_0 789 -> 682, 685 -> 594), which made Q4_K and Q6_K slower (Q6_K's X-only touches are 2-5%
  // faster through KHR: session 9, T1). Q6_K only where 128x128 would be chosen (neutral in place of 256x128k16).
  // BLUESHIFT_MATMUL_SK64=0 never, =1 only in place of 128x128 (A/B runs; Q6_K: BLUESHIFT_MATMUL_Q6K_SK64=0|1).
  const uint32_t sk64_where = t == DType::Q6_K ? env_uint("BLUESHIFT_MATMUL_Q6K_SK64", 1) ? 1 : 0
                                               : env_uint("BLUESHIFT_MATMUL_SK64", 2);
  const bool sk64 = usable(tiles[5]) && sk64_where > 0;
  const CoopmatTile* tile = &tiles[0];
  if (sk64 && sk64_where > 1 && groups(tiles[2]) >= 128) tile = &tiles[5];
  else if (usable(tiles[4]) && groups(tiles[4]) >= 128) tile = &tiles[4];
  else if (groups(tiles[2]) >= 128)
    tile = sk64 ? &tiles[5] : &tiles[2];
  else if (groups(tiles[0]) >= 256) tile = &tiles[0];
  else if (usable(tiles[3])) tile = &tiles[3];
  // Split-k where even the 64-wide tiles were chosen because 128x128 leaves most multiprocessors idle (the 1B's
  // 2048-row projections at 512 tokens: 64 workgroups of 128x128 on 132 SMs; the 8B's k and v: 32): the k-64 tile
  // with its k steps split into `parts` so that parts x workgroups fills the GPU once, each part at least 4 steps.
  // It needs the multiprocessor count (VK_NV_shader_sm_builtins). BLUESHIFT_MATMUL_SPLITK=0: never (A/B runs).
  const uint32_t sms = kernels.device().adapter().sm_count;
  const std::string split = cm + tiles[5].suffix + "_split";
  if (split_k && tile->bn < 128 && sms >= 2 * groups(tiles[5]) && k % 64 == 0 && kernels.has(split) &&
      env_uint("BLUESHIFT_MATMUL_SPLITK", 1) != 0 && !std::getenv("BLUESHIFT_MATMUL_TILE")) {
    const uint32_t parts = std::min({8u, sms / groups(tiles[5]), k / 64 / 4});
    if (parts >= 2 && uint64_t(parts) * tokens * m <= kSplitKPlaneFloats)
      return {split, {}, (m + 127) / 128, (tokens + 127) / 128 * parts, true, parts};
  }
  if (const char* e = std::getenv("BLUESHIFT_MATMUL_TILE")) {
    tile = nullptr;
    for (const auto& c : tiles)
      if (c.label() == e && k % c.bk == 0) tile = &c;
    if (!tile)
      fail_kind(ErrorKind::usage,
                "BLUESHIFT_MATMUL_TILE={}: expected 64x64, 64x128, 128x128, 64x64k64, 256x128k16 or 128x128sk64 (k {} a multiple of "
                "its k step)",
                e, k);
  }
  return {cm + tile->suffix, {}, (m + tile->bn - 1) / tile->bn, (tokens + tile->bm - 1) / tile->bm, true};
}

std::function<void(int32_t)> prefill_in_parts(gpu::CommandEncoder& enc, gpu::Queue& queue, int32_t n_layers,
                                              std::vector<gpu::CommandBuffer>& parts) {
  static const bool split = env_uint("BLUESHIFT_PREFILL_SPLIT", 1) != 0;
  return [&enc, &queue, &parts, n_layers](int32_t l) {
    const bool power_of_4 = ((l + 1) & l) == 0 && ((l + 1) & 0x55555555) != 0;  // l + 1 = 1, 4, 16, 64
    if (!split || !power_of_4 || l + 1 == n_layers) return;
    parts.push_back(enc.split());
    queue.submit(parts.back());
  };
}

// rope_kv's workgroups per row: its items (q pairs, k pairs and unrotated k dims, v values) at about two per
// invocation of its 128-wide workgroups.
static uint32_t rope_kv_groups(const ModelConfig& c, int32_t hd, uint32_t store_heads) {
  const uint32_t half_rot = uint32_t(c.rot_dim() != c.head_dim ? c.rot_dim() : hd) / 2;  // as the kernel's ROT_DIM
  const uint32_t items = uint32_t(c.n_heads) * half_rot + store_heads * (uint32_t(hd) - half_rot + uint32_t(hd));
  return std::max(1u, (items + 255) / 256);
}

// A 2-D grid of 256-wide workgroups covering n elements (elementwise kernels fold y into the index).
static uint32_t grid_x(uint32_t n) { return std::min((n + 255) / 256, 65535u); }
static uint32_t grid_y(uint32_t n) { return ((n + 255) / 256 + grid_x(n) - 1) / grid_x(n); }

static std::string shape_str(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

Model::Model(gpu::Device& device, const ModelSource& source, const ModelOptions& options)
    : device_(device), kernels_(device, options.kernels), cfg_(source.config), opts_(options) {
  max_ctx_ = options.max_ctx > 0 ? options.max_ctx : std::min(cfg_.max_seq > 0 ? cfg_.max_seq : 4096, 4096);
  max_batch_ = std::max(1, std::min(options.max_batch, max_ctx_));
  logits_rows_ = std::max(1, std::min(options.logits_rows, max_batch_));
  check_fits(source);
  for (int32_t l = 0; l < cfg_.n_layers; ++l)
    if (cfg_.head_dim_of(l) % 4 != 0 || cfg_.head_dim_of(l) > 512)
      fail("{}: layer {}: head_dim {} is not supported (the attention kernel needs a multiple of 4, at most 512)",
           source.dir.string(), l, cfg_.head_dim_of(l));
  // One RoPE table per attention type (rope_inv_freq): its layers must share a head_dim.
  for (int32_t l = 0; l < cfg_.n_layers; ++l)
    if (cfg_.head_dim_of(l) != cfg_.head_dim_of_type(!cfg_.sliding(l)))
      fail("{}: layer {}: head_dim {} differs from other {} layers' {}", source.dir.string(), l, cfg_.head_dim_of(l),
           cfg_.sliding(l) ? "sliding" : "full", cfg_.head_dim_of_type(!cfg_.sliding(l)));

  {
    gpu::Uploader up(device_);
    // DOPPLER's W4A16 and "col" Q4_K are converted on the GPU as they arrive (gpu_repack.h), on the host
    // where the GPU cannot (the WGSL kernel set; a "col" tensor past one binding) or when
    // BLUESHIFT_HOST_REPACK=1 asks (A/B runs of load time; both give the same bytes).
    GpuRepacker repacker(device_, kernels_, up);
    static const bool host_repack = env_switch("BLUESHIFT_HOST_REPACK");
    std::vector<std::byte> converted;
    std::map<std::string, uint64_t> arriving;  // tensors streamed in pieces: bytes still to come
    // A tensor's weight and its GPU buffer of `on_gpu` bytes, rounded up to 16: kernels read whole words (and Q4_K
    // and Q6_K blocks as uvec4). Q6_K blocks are padded to 224 bytes on the way up (dtype.h, kQ6KGpuBlockBytes).
    auto add_weight = [&](const TensorView& t, uint64_t on_gpu) -> Weight& {
      if (weights_.count(t.name)) fail("{}: tensor {} appears twice", source.dir.string(), t.name);
      const uint64_t bytes = (std::max<uint64_t>(on_gpu, 16) + 15) & ~uint64_t(15);
      Weight w{t.dtype, t.shape, device_.createBuffer({bytes, BufferUsage::storage, t.name})};
      return weights_.emplace(t.name, std::move(w)).first->second;
    };
    source.for_each_tensor([&](const TensorView& t) {
      if (t.whole) {  // a piece of a tensor that runs as stored (repack none, no padding): written where it goes
        auto left = arriving.find(t.name);
        if (left == arriving.end()) {
          add_weight(t, t.whole);
          left = arriving.emplace(t.name, t.whole).first;
        }
        if (t.repack != Repack::none || t.at + t.data.size() > t.whole || t.data.size() > left->second)
          fail_kind(ErrorKind::internal, "tensor {}: a piece of {} bytes at {} of {} ({} left)", t.name, t.data.size(), t.at,
                    t.whole, left->second);
        up.write(weights_.at(t.name).buffer, t.at, t.data.data(), t.data.size());
        if ((left->second -= t.data.size()) == 0) {
          weight_bytes_ += t.whole;
          arriving.erase(left);
        }
        return;
      }
      const uint64_t size = runnable_bytes(t), on_gpu = t.repack == Repack::none ? gpu_bytes(t.dtype, size) : size;
      Weight& w = add_weight(t, on_gpu);
      if (t.repack != Repack::none && !host_repack && repacker.can(t)) {
        repacker.repack(t, w.buffer);
      } else if (auto data = host_runnable(t, converted); on_gpu != data.size()) {
        // Q6_K, padded straight into the staging memory (one pass over the bytes). A kernel doing it on the GPU
        // loaded the 8B q4_k_m 0.1-0.25 s slower (a scratch buffer per tensor; session 13, S4).
        const uint64_t sb = traits(t.dtype).block_bytes;
        up.write_with(w.buffer, 0, on_gpu, kQ6KGpuBlockBytes, [&](char* out, uint64_t at, uint64_t n) {
          q6k_pad_blocks(data.data() + at / kQ6KGpuBlockBytes * sb, n / kQ6KGpuBlockBytes * sb,
                         reinterpret_cast<std::byte*>(out));
        });
      } else {
        up.write(w.buffer, 0, data.data(), data.size());
      }
      weight_bytes_ += size;  // as stored: the bytes a decode step must read at least (bench's floor)
    }, true);
    up.flush();
    if (!arriving.empty())
      fail("{}: tensor {} arrived incomplete ({} bytes missing)", source.dir.string(), arriving.begin()->first,
           arriving.begin()->second);
    load_breakdown_ = {*source.stats, up.fill_seconds(), up.wait_seconds()};
    if (env_switch("BLUESHIFT_LOAD_STATS"))  // the sink's share of the shard reader's load-stats line, split
      std::fprintf(stderr, "upload-stats: %.2f GB through %s staging memory: writing it %.2f s, waiting for the GPU %.2f s\n",
                   double(up.bytes()) / 1e9, up.staging_cached() ? "cached" : "uncached (write-combined)",
                   up.fill_seconds(), up.wait_seconds());
  }

  // Bind every weight the forward pass reads up front, so a missing or misshapen one fails here with
  // expected vs actual, not in the middle of recording.
  const auto& c = cfg_;
  bind("embed", {c.vocab, c.dim}, true);
  bind("output_norm", {c.dim}, false);
  if (!c.tied_embeddings) bind("output", {c.vocab, c.dim}, true);
  if (c.ple_dim > 0) {
    // Gemma 4 E: the per-layer embedding table may also be DOPPLER's int4 one, with its row scales.
    const int64_t lp = int64_t(c.n_layers) * c.ple_dim;
    const Weight* t = find("ple_embed");
    if (t && t->dtype == DType::I4) {
      if (t->shape != std::vector<int64_t>{c.ple_vocab, lp})
        fail("weight ple_embed: expected I4 {}, got {}", shape_str({c.ple_vocab, lp}), shape_str(t->shape));
      bind("ple_embed_scales", {c.ple_vocab}, false);
    } else {
      bind("ple_embed", {c.ple_vocab, lp}, true);
    }
    bind("ple_proj", {lp, c.dim}, true);
    bind("ple_proj_norm", {c.ple_dim}, false);
  }
  for (int32_t l = 0; l < c.n_layers; ++l) {
    if (c.kind(l) == LayerKind::short_conv) {
      bind_short_conv(l);
      continue;
    }
    auto n = [&](const char* s) { return fmt::format("blk.{}.{}", l, s); };
    const int32_t qd = c.q_dim_of(l), kvd = c.kv_dim_of(l), ffn = c.ffn_dim_of(l);
    bind(n("attn_norm"), {c.dim}, false);
    if (c.kind(l) == LayerKind::linear_attention) {  // Qwen 3.5's Gated DeltaNet (forward_qwen35.cpp)
      bind_linear_attention(l);
      bind(n("ffn_norm"), {c.dim}, false);
      for (const char* s : {"ffn_gate", "ffn_up"}) bind(n(s), {c.ffn_dim, c.dim}, true);
      bind(n("ffn_down"), {c.dim, c.ffn_dim}, true);
      continue;
    }
    bind(n("attn_q"), {c.attn_output_gate ? 2 * qd : qd, c.dim}, true);
    if (c.computes_kv(l)) bind(n("attn_k"), {kvd, c.dim}, true);
    if (c.computes_kv(l) && c.has_v_proj(l)) bind(n("attn_v"), {kvd, c.dim}, true);
    bind(n("attn_out"), {c.dim, qd}, true);
    bind(n("ffn_norm"), {c.dim}, false);
    if (c.moe()) {
      bind_moe(l);  // forward_moe.cpp
    } else {
      bind(n("ffn_gate"), {ffn, c.dim}, true);
      bind(n("ffn_up"), {ffn, c.dim}, true);
      bind(n("ffn_down"), {c.dim, ffn}, true);
    }
    if (c.attn_out_bias) bind(n("attn_out_bias"), {c.dim}, false);
    if (c.attn_sinks) bind(n("attn_sinks"), {c.n_heads}, false);
    if (c.layer_scalar) bind(n("layer_scalar"), {1}, false);
    if (c.ple_dim > 0) {
      bind(n("ple_gate"), {c.ple_dim, c.dim}, true);
      bind(n("ple_out"), {c.dim, c.ple_dim}, true);
      bind(n("ple_post_norm"), {c.dim}, false);
    }
    if (c.qkv_bias) {
      bind(n("attn_q_bias"), {c.q_dim()}, false);
      bind(n("attn_k_bias"), {c.kv_dim()}, false);
      bind(n("attn_v_bias"), {c.kv_dim()}, false);
    }
    if (c.qk_norm) {
      bind(n("attn_q_norm"), {c.head_dim_of(l)}, false);
      if (c.computes_kv(l)) bind(n("attn_k_norm"), {c.head_dim_of(l)}, false);
    }
    if (c.sandwich_norm) {
      bind(n("attn_post_norm"), {c.dim}, false);
      bind(n("ffn_post_norm"), {c.dim}, false);
    }
  }

  auto act = [&](uint64_t floats, const char* label) {
    return device_.createBuffer({std::max<uint64_t>(floats, 1) * 4, BufferUsage::storage, label});
  };
  uint64_t B = max_batch_;
  // Sized for the widest layer (Gemma 4's layers differ in head_dim, KV heads and FFN width).
  const int32_t max_q = c.max_over_layers(&ModelConfig::q_dim_of), max_kv = c.max_over_layers(&ModelConfig::kv_dim_of),
                max_ffn = c.max_over_layers(&ModelConfig::ffn_dim_of), max_hd = c.max_over_layers(&ModelConfig::head_dim_of);
  int32_t split_hd = 0;  // the widest head split decode attention takes (head_dim <= 256)
  for (int32_t l = 0; l < c.n_layers; ++l)
    if (c.head_dim_of(l) <= 256) split_hd = std::max(split_hd, c.head_dim_of(l));
  tokens_ = act(B, "tokens");
  state_ = act(16, "step state");
  x_ = act(B * c.dim, "x");
  xn_ = act(B * std::max(c.dim, max_q), "xn");
  q_ = act(B * max_q, "q");
  k_ = act(B * max_kv, "k");
  v_ = act(B * max_kv, "v");
  att_ = act(B * max_q, "attn out");
  tmp_ = act(B * c.dim, "branch out");
  gate_ = act(B * max_ffn, "gate");
  up_ = act(B * max_ffn, "up");
  // The tensor-core GEMMs' f16 input: as wide as the widest matrix's rows (its k).
  if (B > 1 && !opts_.f32_prefill_matmul && kernels_.has("matmul_cm_f16")) {
    uint64_t max_k = 0;
    for (const auto& [name, w] : weights_)
      if (w.shape.size() == 2) max_k = std::max<uint64_t>(max_k, uint64_t(w.shape[1]));
    x16_ = act((B * max_k + 1) / 2, "gemm input f16");
    // Split-k GEMMs' partial sums (plan_prefill_matmul), where the device says how many multiprocessors it has:
    // kSplitKSlots regions, so q, k and v each write their own and run side by side (record_forward).
    if (device_.adapter().sm_count > 0 && kernels_.has("matmul_cm_f16_128x128sk64_split"))
      splitk_ws_ = act(kSplitKPlaneFloats * kSplitKSlots, "split-k planes");
  }
  uint64_t xq_k = 0;  // the widest x quantize_x_q8 writes
  if (std::string k = q4k_dot_kernel(kernels_, "matvec_q4k"); k != "matvec_q4k") {
    uint64_t max_k = 0;
    for (const auto& [name, w] : weights_)
      if (w.dtype == DType::Q4_K && w.shape.size() == 2) max_k = std::max<uint64_t>(max_k, uint64_t(w.shape[1]));
    if (max_k) {
      q4k_matvec_ = k;
      xq_k = max_k;
    }
  }
  head_norm_apart_ = env_uint("BLUESHIFT_HEAD_NORM_APART", 1) != 0;
  const Weight* head_w = c.tied_embeddings ? find("embed") : find("output");
  if (head_norm_apart_ && head_w && head_w->dtype == DType::Q6_K && c.dim % 256 == 0 &&
      kernels_.has("matvec_q6k_wide_i8") && kernels_.has("rms_norm_q8x") && env_uint("BLUESHIFT_HEAD_I8", 1) != 0) {
    head_i8_ = true;
    xq_k = std::max<uint64_t>(xq_k, uint64_t(c.dim));
  }
  if (xq_k) xq_ = device_.createBuffer({(xq_k + 255) / 256 * 640, BufferUsage::storage, "x q8"});
  if (c.v_norm) {
    // v's norm has no weight: the rms kernel's (offset + w) with w = 1 - offset.
    std::vector<float> ones(size_t(max_hd), 1.0f - (c.norm_offset ? 1.0f : 0.0f));
    ones_.buffer = act(ones.size(), "ones");
    device_.queue().writeBuffer(ones_.buffer, 0, ones.data(), ones.size() * 4);
  }
  if (c.ple_dim > 0) {
    const uint64_t lp = uint64_t(c.n_layers) * c.ple_dim;
    ple_rows_ = act(B * lp, "per-layer embedding rows");
    ple_proj_ = act(B * lp, "per-layer projection");
    ple_ = act(B * lp, "per-layer inputs");
    ple_gate_ = act(B * c.ple_dim, "per-layer gate");
  }
  // scores_ (attention.comp's scratch, [rows, heads, max_ctx]) is allocated when a recording first
  // needs it: the tiled prefill and split decode kernels keep their scores on chip, and at a long
  // context with 512-row prefill chunks it would be the largest activation (268 MiB for a 1B at 4096).
  // Split attention (attention_split.comp): chunks of at most 128 positions, at most 256 splits, so
  // contexts beyond 32768 take the one-workgroup-per-head kernel.
  if (split_hd > 0 && max_ctx_ <= 256 * 128) {
    // Splits of 64 positions while they fit the 256 (one score pass a workgroup): on the H200 at 640 positions, 10
    // splits against 5 took the 8B f16 from 192.0 to 193.1 tok/s and the 1B f16 from 858.3 to 866.5
    // (2026-11-28-h200-session20.md, E4). BLUESHIFT_ATTN_CHUNK=64..128 sets the positions a split (A/B runs).
    const int64_t chunk = std::clamp<int64_t>(env_uint("BLUESHIFT_ATTN_CHUNK", 64), 64, 128);
    attn_splits_ = uint32_t(std::clamp<int64_t>((max_ctx_ + chunk - 1) / chunk, (max_ctx_ + 127) / 128, 256));
    attn_part_ = act(uint64_t(c.n_heads) * attn_splits_ * (split_hd + 2), "attention partials");
    attn_count_ = act(c.n_heads, "attention arrivals");
    std::vector<uint32_t> zeros(c.n_heads, 0);
    device_.queue().writeBuffer(attn_count_, 0, zeros.data(), zeros.size() * 4);
  }
  logits_ = act(uint64_t(logits_rows_) * c.vocab, "logits");
  // Zeroed by a fill before each step's layers (record_forward).
  chain_ = device_.createBuffer(
      {uint64_t(c.n_layers) * kChainPoints * kChainSlotBytes, BufferUsage::storage, "chain counters"});
  alloc_linear_attention();
  alloc_moe();
  for (int32_t l = 0; l < c.n_layers; ++l) {
    // Layers without a cache of their own (Gemma 4's KV-shared ones read an earlier layer's; the hybrids'
    // conv and DeltaNet layers keep a fixed-size state) get a token-sized placeholder.
    uint64_t bytes = uint64_t(c.owns_kv_cache(l) ? max_ctx_ : 1) * c.kv_dim_of(l) * (opts_.kv_f32 ? 4 : 2);
    kcache_.push_back(device_.createBuffer({bytes, BufferUsage::storage, fmt::format("k cache {}", l)}));
    vcache_.push_back(device_.createBuffer({bytes, BufferUsage::storage, fmt::format("v cache {}", l)}));
  }
  // serve --parallel: one more cache per sequence slot (select_kv_slot swaps them into kcache_ / vcache_).
  slot_k_.resize(size_t(std::max(1, opts_.kv_slots)));
  slot_v_.resize(slot_k_.size());
  for (size_t s = 1; s < slot_k_.size(); ++s)
    for (int32_t l = 0; l < c.n_layers; ++l) {
      uint64_t bytes = uint64_t(c.owns_kv_cache(l) ? max_ctx_ : 1) * c.kv_dim_of(l) * (opts_.kv_f32 ? 4 : 2);
      slot_k_[s].push_back(device_.createBuffer({bytes, BufferUsage::storage, fmt::format("k cache {} slot {}", l, s)}));
      slot_v_[s].push_back(device_.createBuffer({bytes, BufferUsage::storage, fmt::format("v cache {} slot {}", l, s)}));
    }
  // Computed in double (HF's formulas), stored as f32 for the rope kernel.
  auto gd = rope_inv_freq(c, c.rope.theta, true, max_ctx_);
  auto ld = rope_inv_freq(c, c.rope.local_theta > 0 ? c.rope.local_theta : c.rope.theta, false, max_ctx_);
  std::vector<float> g(gd.begin(), gd.end()), lo(ld.begin(), ld.end());
  inv_freq_global_ = act(g.size(), "inv_freq global");
  inv_freq_local_ = act(lo.size(), "inv_freq local");
  device_.queue().writeBuffer(inv_freq_global_, 0, g.data(), g.size() * 4);
  device_.queue().writeBuffer(inv_freq_local_, 0, lo.data(), lo.size() * 4);
  uint32_t zero[16] = {};
  device_.queue().writeBuffer(state_, 0, zero, sizeof zero);
  persistent_ = PersistentDecode::create(*this, &persistent_why_);
}

// The per-sequence state of the non-attention layers, f32: LFM2's short convs keep their last
// conv_kernel - 1 inputs; Qwen 3.5's Gated DeltaNet layers a conv state over the qkv projection and a
// recurrent state [v_heads, k_dim, v_dim].
static uint64_t layer_state_bytes(const ModelConfig& c) {
  uint64_t floats = 0;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    if (c.kind(l) == LayerKind::short_conv) floats += uint64_t(c.conv_kernel - 1) * c.dim;
    if (c.kind(l) == LayerKind::linear_attention)
      floats += uint64_t(c.linear_qkv_dim()) * uint64_t(c.linear_conv - 1) +
                uint64_t(c.linear_v_heads) * c.linear_k_dim * c.linear_v_dim;
  }
  return floats * 4;
}

// Attention layers with a cache of their own only: the others read an earlier layer's (KV-shared) or
// keep a fixed-size state instead (layer_state_bytes).
uint64_t Model::kv_bytes() const {
  uint64_t b = 0;
  for (int32_t l = 0; l < cfg_.n_layers; ++l)
    if (cfg_.owns_kv_cache(l)) b += uint64_t(2) * max_ctx_ * cfg_.kv_dim_of(l) * (opts_.kv_f32 ? 4 : 2);
  return b;
}

double Model::kv_read_bytes(double ctx) const {
  double b = 0;
  for (int32_t l = 0; l < cfg_.n_layers; ++l) {
    if (cfg_.kind(l) != LayerKind::attention) continue;
    const double positions = cfg_.sliding(l) && cfg_.sliding_window > 0 ? std::min(ctx, double(cfg_.sliding_window)) : ctx;
    b += 2.0 * cfg_.kv_dim_of(cfg_.kv_source(l)) * (opts_.kv_f32 ? 4 : 2) * positions;
  }
  return b;
}

uint64_t Model::state_bytes() const { return layer_state_bytes(cfg_); }

void Model::check_fits(const ModelSource& source) const {
  const auto& c = cfg_;
  uint64_t kv = kv_bytes() * uint64_t(std::max(1, opts_.kv_slots));
  const int32_t max_q = c.max_over_layers(&ModelConfig::q_dim_of), max_kv = c.max_over_layers(&ModelConfig::kv_dim_of),
                max_ffn = c.max_over_layers(&ModelConfig::ffn_dim_of);
  uint64_t acts = uint64_t(max_batch_) * (3 * c.dim + 3 * uint64_t(max_q) + 2 * max_kv + 2 * max_ffn +
                                         uint64_t(c.n_heads) * max_ctx_ + 3 * uint64_t(c.n_layers) * c.ple_dim) * 4 +
                  uint64_t(logits_rows_) * c.vocab * 4;
  uint64_t need = source.weight_bytes + kv + acts + state_bytes();
  uint64_t have = device_.adapter().device_local_bytes;
  if (have && need > have)
    fail_kind(ErrorKind::resources,
              "{} needs about {:.2f} GiB of GPU memory (weights {:.2f} + KV cache {:.2f} for {} tokens + activations "
              "{:.2f}); {} has {:.2f} GiB. Try a smaller --ctx or a smaller quantization.",
              source.dir.string(), need / 1073741824.0, source.weight_bytes / 1073741824.0, kv / 1073741824.0,
              max_ctx_, acts / 1073741824.0, device_.adapter().name, have / 1073741824.0);
}

// Row ranges of W that each fit one binding: [0, m) unless W is larger than the device's binding
// range (lavapipe: 128 MiB; Gemma's 262144 x 640 F16 table is 335 MB). Range starts are multiples of 64
// rows at byte offsets that are multiples of 256 (every device's storage offset alignment), so logits
// columns r0 .. and W rows r0 .. may both be bound there. BLUESHIFT_MAX_BINDING=N lowers the limit
// (tests split small tables that way).
std::vector<std::pair<uint32_t, uint32_t>> Model::row_ranges(const Weight& w) const {
  const uint32_t m = uint32_t(w.shape[0]);
  const uint64_t rb = gpu_row_bytes(w.dtype, uint64_t(w.shape.back()));
  const uint64_t limit = binding_limit(device_);
  if (limit == 0 || uint64_t(m) * rb <= limit) return {{0, m}};
  uint64_t step = std::lcm(uint64_t(256) / std::gcd(rb, uint64_t(256)), uint64_t(64));
  uint64_t per = (limit - 16) / rb / step * step;  // 16: the last range rounds up to whole uvec4s
  if (per == 0) fail("weight rows of {} bytes do not fit the device's {} byte binding range", rb, limit);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint64_t r = 0; r < m; r += per) out.push_back({uint32_t(r), uint32_t(std::min<uint64_t>(m, r + per))});
  return out;
}

uint64_t Model::range_offset(const Weight& w, uint32_t r0) const {
  return uint64_t(r0) * gpu_row_bytes(w.dtype, uint64_t(w.shape.back()));
}

// Bytes of rows [r0, r1), rounded up to 16 (kernels read words and Q4_K as uvec4; buffers are sized
// in multiples of 16, so the rounding stays inside).
uint64_t Model::range_bytes(const Weight& w, uint32_t r0, uint32_t r1) const {
  uint64_t b = uint64_t(r1 - r0) * gpu_row_bytes(w.dtype, uint64_t(w.shape.back()));
  return std::min((b + 15) & ~uint64_t(15), w.buffer.size() - range_offset(w, r0));
}

const Weight* Model::find(const std::string& name) const {
  auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : &it->second;
}


const Weight& Model::bind(const std::string& name, std::vector<int64_t> shape, bool matrix) const {
  const Weight* w = find(name);
  if (!w) fail("weight {}: expected {} {}, but the model has no such tensor", name, matrix ? "a matrix" : "F32", shape_str(shape));
  // Matrices in the dtypes weight_kernel has kernels for (Q4_K rows may be padded to whole blocks;
  // source_rdrr's runnable_form turns DOPPLER's other forms into these), vectors in F32.
  bool dtype_ok = matrix ? (w->dtype == DType::F16 || w->dtype == DType::Q8_0 || w->dtype == DType::Q4_K ||
                            w->dtype == DType::Q6_K || w->dtype == DType::MXFP4)
                         : w->dtype == DType::F32;
  if (!dtype_ok || w->shape != shape)
    fail("weight {}: expected {} {}, got {} {}", name, matrix ? "F16|Q8_0|Q4_K|Q6_K" : "F32", shape_str(shape),
         dtype_name(w->dtype), shape_str(w->shape));
  return *w;
}

uint32_t IndirectTable::add(uint32_t x, uint32_t y, uint32_t z) {
  size_t i = cursor++;
  if (i * 3 >= nominal.size()) {
    nominal.insert(nominal.end(), {x, y, z});
  } else if (nominal[i * 3] != x || nominal[i * 3 + 1] != y || nominal[i * 3 + 2] != z) {
    fail_kind(ErrorKind::internal, "decode step {} differs from the first one recorded", i);
  }
  return uint32_t(i);
}

// Decode attention by kv head, a kv head's 2-4 query heads in one workgroup (or persistent item), each K and V piece
// loaded once for them: it loses at short contexts, where the plain form's n_heads x splits workgroups (items) fill the
// GPU, and wins at long ones. A kernel that switched form by position cost the plain form 2-4% at 512 + 128 where it
// was not taken (benchmarks/results/2026-12-01-h200-session41.md, W16-W17; in the persistent kernel 1-3.5%: session
// 40, W11), so the decode loop records the step twice and replays the long-context recording from here. On the H200
// (W18), the long recording against the short at 2,048 + 128 and 4,096 + 128:
//   per-phase (attention_split_f16kv_gqa), f16: 1B (head_dim 64) +6.4%, +16.5%; 8B (128) +0.1%, +3.7%;
//   persistent (ATTN_GQA), q4_k_m: 1B -3.3%, +2.3%; 8B -1.4%, +4.0%; at 3,072 + 128 (W19) 1B +3.3%, 8B -1.9%;
//   at 8,192 + 128 (W19) 1B q4_k_m +20.1%, 1B f16 +24.7%.
// So from 32 x head_dim positions on the per-phase path (2,048 at head_dim 64, 4,096 at 128), and in the persistent
// kernel from 3,072 at head_dim 64 or less, else 4,096: past each model's last measured loss.
// ModelOptions::long_decode_from, else BLUESHIFT_LONG_DECODE_FROM=N, moves the position; 0 never replays it (A/B runs).
int32_t Model::long_context_from() const {
  const ModelConfig& c = cfg_;
  const int64_t from_env =
      std::getenv("BLUESHIFT_LONG_DECODE_FROM") ? int64_t(env_uint("BLUESHIFT_LONG_DECODE_FROM", 0)) : -1;
  const int64_t set = opts_.long_decode_from >= 0 ? opts_.long_decode_from : from_env;
  if (set == 0) return INT32_MAX;
  const int32_t from = set > 0           ? int32_t(std::min<int64_t>(set, INT32_MAX))
                       : !persistent_    ? 32 * c.head_dim
                       : c.head_dim <= 64 ? 3072
                                         : 4096;
  if (persistent_) return persistent_->has_long() ? from : INT32_MAX;
  for (int32_t l = 0; l < c.n_layers; ++l)
    if (long_attention_layer(l, from)) return from;
  return INT32_MAX;
}

bool Model::long_attention_layer(int32_t l, int32_t from) const {
  const ModelConfig& c = cfg_;
  const int32_t nkv = c.kv_heads_of(l), hd = c.head_dim_of(l);
  const std::string kvt = opts_.kv_f32 ? "f32kv" : "f16kv";
  return c.kind(l) == LayerKind::attention && attn_splits_ > 0 && !c.attn_sinks && hd <= 256 && nkv > 0 &&
         c.n_heads % nkv == 0 && c.n_heads / nkv >= 2 && c.n_heads / nkv <= 4 &&
         (!c.sliding(l) || c.sliding_window >= from) && kernels_.has("attention_split_" + kvt + "_gqa");
}

void Model::record_forward(gpu::CommandEncoder& enc, int32_t rows, Recording& rec, gpu::Profiler* prof,
                           IndirectTable* indirect, bool logits_only, const std::function<void(int32_t)>& after_layer) {
  using namespace kparams;
  const auto& c = cfg_;
  if (rows < 1 || rows > max_batch_) fail_kind(ErrorKind::internal, "record_forward: {} rows (max {})", rows, max_batch_);
  uint32_t M = uint32_t(rows);
  last_rows_ = rows;
  rec.head_argmax = false;
  auto pass = enc.beginComputePass();
  const uint32_t wg = 128;
  // Matvec workgroup size: about one invocation per part of a row (a part is what one invocation reads
  // per step: 8 f16 values, 16 Q8_0 codes, 32 K-quant codes; see matvec_*.comp), within [32, 256], so
  // no invocation idles on short rows. lavapipe runs a workgroup as coroutines over its subgroups: small
  // workgroups are much faster there. BLUESHIFT_MATVEC_WG=N fixes the size (for tuning runs).
  static const uint32_t wg_override = env_uint("BLUESHIFT_MATVEC_WG", 0);
  // Rows per matvec workgroup: BLUESHIFT_MATVEC_ROWS (plain and norm-folded) and BLUESHIFT_GATED_ROWS
  // (gate + up) fix them for tuning runs; the default is 4, 2 for F16 gate + up (gated_matvec) and for the plain
  // F16 matvecs of decode (the o and down projections; H200, 2026-11-28-h200-session18.md: 1B f16 815 -> 827 tok/s
  // in both rounds, the 8B even).
  static const uint32_t plain_rows = std::max(1u, env_uint("BLUESHIFT_MATVEC_ROWS", 4));
  const bool cpu = device_.adapter().type == "cpu";
  auto matvec_wg = [&](DType t, uint32_t k) -> uint32_t {
    if (wg_override) return wg_override;
    if (cpu) return 8;
    uint32_t parts = t == DType::F16 ? k / 8 : t == DType::Q8_0 ? k / 16 : k / 32, wg = 32;
    while (wg < parts && wg < 256) wg *= 2;
    return wg;
  };
  // The matvec epilogue sums a workgroup's rows in one transposed butterfly (matvec.glsl MV_TREDUCE, spec constant 3)
  // where the hidden size is at most 3072, else with a subgroupAdd per value. On the H200 the butterfly took the 1B
  // f16 from 854 to 897 tok/s (2026-11-28-h200-session18.md, C6) and the 3B f16 from 341.5 to 348.5 (read-ahead on,
  // 2026-11-28-h200-session20.md, E2), and cost the 8B f16 1.3% (188.0 against 190.5 in both rounds,
  // 2026-11-28-h200-session19.md, D6), with the same registers either way. BLUESHIFT_MATVEC_TREDUCE=0|1 sets it for
  // every model (A/B runs).
  static const uint32_t treduce_env = env_uint("BLUESHIFT_MATVEC_TREDUCE", 2);
  const bool mv_treduce = treduce_env == 2 ? c.dim <= 3072 : treduce_env != 0;
  // The F16 matvecs' load order (matvec_f16.comp MV_W_FIRST, spec constant 6). Decode's gated FFN takes its first step
  // peeled, that step's weights loaded before its x (2): on the H200 (2026-12-02-h200-session47.md, W49-W50) the 1B
  // f16 went from 892.9 to 904.6 tok/s, the 3B f16 from 362.7 to 368.2 and the 8B f16 from 194.6 to 197.2, ids the same.
  // The peel on q/k/v too gained on the 1B and 8B (915.6, 199.0) and lost on the 3B (364.0); on o and down it gained
  // only on the 3B (374.2): left off until a rule stands behind them. Weights first in every step (1) lost: W47, all of
  // them, 1B -0.6%, 8B -3.6%; W49, the gated one in the chained decode, 8B -3.5%; W48, q/k/v, -0.2%.
  // BLUESHIFT_MV_WFIRST=MASK (A/B runs): the matvecs that take it, 1 q/k/v with the rope, 2 the plain and norm-folded
  // ones (o, down), 4 the gated FFN (the default), 8 the head; BLUESHIFT_MV_WFIRST_MODE: 2 (the default) or 1.
  static const uint32_t mv_wfirst = env_uint("BLUESHIFT_MV_WFIRST", 4);
  static const uint32_t mv_wfirst_mode = env_uint("BLUESHIFT_MV_WFIRST_MODE", 2);
  auto mv_spec = [&](uint32_t wg_size, uint32_t rows, uint32_t wfirst_bit = 0) {
    std::vector<gpu::SpecConstant> spec = {{0, wg_size}, {1, rows}};
    if (!mv_treduce) spec.push_back({3, 0u});
    if (mv_wfirst & wfirst_bit) spec.push_back({6, mv_wfirst_mode});
    return spec;
  };

  // Profile labels: the op, then (weight kernels) its dtype and shape, e.g. "matvec q4k 14336x4096";
  // `bench` sums by the first word and also reports each label.
  auto shape_label = [&](const char* op, const Weight& w) {
    return prof ? fmt::format("{} {} {}x{}", op, weight_kernel("", w.dtype).substr(1), w.shape[0], w.shape[1]) : std::string(op);
  };
  // The input an f16 copy exists of (buffer, element offset, elements) and where that copy is (x16_, or
  // gate_'s bytes for the gated GEMM's h): q, k and v read one normed x, so it is converted once for the
  // three. Any other dispatch may rewrite that input: each dispatch forgets it.
  struct {
    const gpu::Buffer* buffer = nullptr;
    uint64_t offset = 0, n = 0;
    gpu::Buffer* copy = nullptr;  // nullptr: x16_
  } x16_holds;
  // The norms and the gated activation before a tensor-core GEMM write its f16 input alone (rms_norm_f16,
  // gated_act_f16), not the f32 values nothing reads (H100, GPU time of a 512-token prefill: 1B q4_k_m 9.89 ->
  // 9.80 ms, 8B q4_k_m 51.7 -> 50.9; session 12, R4). f32_stale holds the buffers so left, which no dispatch may
  // read until one writes them. BLUESHIFT_F16_ONLY=0 writes both (A/B runs).
  static const bool f16_only = env_uint("BLUESHIFT_F16_ONLY", 1) != 0;
  std::vector<const gpu::Buffer*> f32_stale;
  auto mark_stale = [&](const gpu::Buffer& b) {
    if (!std::ranges::count(f32_stale, &b)) f32_stale.push_back(&b);
  };
  // Split-k reductions held back (matmul_in's `deferred`) until the caller records them (flush_reductions).
  struct Reduction {
    uint64_t ws_offset, planes;
    gpu::Buffer* y;
    SplitKParams params;
  };
  // Split-k reductions held back for the dispatch that reads their output next, which sums the planes in as it reads
  // them (take_planes): a residual's for the norm after it (matmul_residual; rms_norm.comp RMS_PLANES), q's, k's and
  // v's for rope_kv (rope_kv.comp QKV_PLANES). Any other dispatch that binds such an output or the split-k workspace
  // first records the reductions before itself (flush_pending), so no reader ever sees an output without its planes
  // and no GEMM overwrites planes still wanted.
  std::vector<Reduction> pending_planes;
  std::function<void()> flush_pending;
  bool chain_next = false;  // the next dispatch waits in its shader (link, below)
  auto dispatch_raw = [&](const std::string& kernel, std::vector<gpu::SpecConstant> spec,
                          std::vector<BindGroupEntry> entries, const void* params, uint32_t params_size, uint32_t gx,
                          uint32_t gy, const std::string& label) {
    x16_holds.buffer = nullptr;
    if (!pending_planes.empty())
      for (const auto& e : entries)
        if (e.buffer == &splitk_ws_ ||
            std::ranges::any_of(pending_planes, [&](const Reduction& r) { return r.y == e.buffer; })) {
          flush_pending();
          break;
        }
    const auto& p = kernels_.get(kernel, spec);
    // A binding the kernel may also write (a GEMM's Y, read only to accumulate) counts as a write.
    for (const auto& e : entries)
      for (const auto& b : p.bindings())
        if (b.set == 0 && b.binding == e.binding && std::ranges::count(f32_stale, e.buffer)) {
          if (b.reads && !b.writes)
            fail_kind(ErrorKind::internal, "record_forward: {} would read {}, whose f32 values were not written",
                      kernel, e.buffer->label());
          std::erase(f32_stale, e.buffer);
        }
    rec.groups.push_back(device_.createBindGroup(p, 0, entries, label.c_str()));
    pass.setPipeline(p);
    pass.setBindGroup(0, rec.groups.back());
    pass.setPushConstants(params, params_size);
    if (chain_next) pass.chainNext();  // a chain link's: no barrier before this dispatch
    chain_next = false;
    if (indirect) pass.dispatchWorkgroupsIndirect(*indirect->args, uint64_t(indirect->add(gx, gy, 1)) * 12);
    else pass.dispatchWorkgroups(gx, gy);
    if (prof) prof->mark(enc, label);
  };
  auto dispatch = [&](const std::string& kernel, std::vector<gpu::SpecConstant> spec, std::vector<BindGroupEntry> entries,
                      const auto& params, uint32_t gx, uint32_t gy, const std::string& label) {
    dispatch_raw(kernel, std::move(spec), std::move(entries), &params, uint32_t(sizeof(params)), gx, gy, label);
  };
  auto rms = [&](gpu::Buffer& x, uint64_t x_off, const Weight& w, gpu::Buffer& y, uint64_t y_off, uint32_t n,
                 uint32_t nrows, bool add) {
    dispatch(add ? "rms_norm_add_f32" : "rms_norm_f32", {{0, wg}},
             {{0, &x, x_off * 4, uint64_t(nrows) * n * 4}, {1, &w.buffer}, {2, &y, y_off * 4, uint64_t(nrows) * n * 4}},
             RmsNormParams{n, nrows, c.norm_eps, c.norm_offset ? 1.0f : 0.0f}, nrows, 1, "rms_norm");
  };
  std::vector<Reduction> deferred_reductions;
  auto reduce = [&](const Reduction& r) {
    dispatch("splitk_reduce", {}, {{0, &splitk_ws_, r.ws_offset, r.planes * 4}, {1, r.y, 0, uint64_t(r.params.n) * 4}},
             r.params, grid_x(r.params.n), grid_y(r.params.n), "splitk_reduce");
  };
  // Decode on the per-phase path: chained dispatches (chain.glsl). Gate + up -> down of a layer are recorded
  // with no barrier between them where both are F16: down's workgroups launch while gate + up's last ones drain, and
  // wait in the shader until gate + up's workgroups have counted themselves done on a counter of chain_ (a slot of
  // kChainSlotBytes for each of a layer's kChainPoints boundaries, zeroed by a fill before the layers). Off by default:
  // W43's A/B form took the 1B f16 from 880.6 to 892.2 tok/s and the 8B f16 from 194.6 to 199.7
  // (2026-12-01-h200-session45.md), but the form that landed loses on the H200 (2026-12-02-h200-session46.md, W45-W46:
  // 1B 883 -> 857, 8B 194.9 -> 189.0-189.7, in session 45's tree as in this one), ids the same.
  // BLUESHIFT_CHAIN: 0 records the barriers and the plain kernels (the default), 1 chains gate + up -> down; 2, 3 and 4
  // chain more of a
  // layer's boundaries (the layer loop says which), but on the H200 they part the greedy ids at token 1-3
  // (2026-12-02-h200-session46.md, W45): a consumer's plain loads hit L1 lines of its input that an earlier dispatch
  // of the chain loaded on the same SM, and memoryBarrierBuffer does not drop them (gate + up -> down alone is safe:
  // nothing loads h between the barrier before gate + up and down). So the env takes them only with
  // BLUESHIFT_CHAIN_UNSAFE=1 (A/B runs); ModelOptions::chain sets any mode over the env (the tests, on lavapipe, which
  // runs each dispatch to its end).
  static const uint32_t chain_from_env = [] {
    const uint32_t mode = env_uint("BLUESHIFT_CHAIN", 0);
    if (mode < 2 || env_switch("BLUESHIFT_CHAIN_UNSAFE")) return mode;
    fmt::print(stderr, "blueshift: BLUESHIFT_CHAIN={} parts the decode's values on NVIDIA (stale L1 reads); 1 taken "
                       "(BLUESHIFT_CHAIN_UNSAFE=1 forces it)\n", mode);
    return 1u;
  }();
  const uint32_t chain_mode = opts_.chain >= 0 ? uint32_t(opts_.chain) : chain_from_env;
  const bool chaining =
      M == 1 && chain_mode != 0 && kernels_.has("matvec_f16_chain") && kernels_.has("matvec_f16_gated_chain");
  // A layer's counter slots: o -> gate + up, gate + up -> down, down -> the next layer's q, k and v, q, k and v ->
  // attention, attention -> o.
  enum ChainPoint : uint32_t {
    kChainAfterO = 0,
    kChainAfterGateUp = 1,
    kChainAfterDown = 2,
    kChainAfterQkv = 3,
    kChainAfterAttention = 4
  };
  auto chain_slot = [&](int32_t l, ChainPoint point) { return (uint64_t(l) * kChainPoints + point) * kChainSlotBytes; };
  // A dispatch's links: it waits (and gets no barrier before it) until `producers` workgroups have counted themselves
  // done at slot `wait_at`, and counts its own at slot `signal_at`.
  struct ChainLink {
    std::optional<uint64_t> wait_at;
    uint32_t producers = 0;
    std::optional<uint64_t> signal_at;
  };
  auto link = [&](const ChainLink& ch, std::vector<BindGroupEntry>& e, std::vector<gpu::SpecConstant>& spec) {
    const uint64_t any = ch.wait_at ? *ch.wait_at : ch.signal_at.value_or(0);  // the shader declares both bindings
    e.push_back({11, &chain_, ch.wait_at.value_or(any), kChainSlotBytes, true});
    e.push_back({12, &chain_, ch.signal_at.value_or(any), kChainSlotBytes, true});
    if (ch.wait_at) spec.push_back({4, ch.producers}), chain_next = true;
    if (ch.signal_at) spec.push_back({5, 1u});
  };
  // y[M, m] (+)= x[M, k] W^T: matvec kernels for one row (decode), tiled matmul kernels for more (prefill). A
  // split-k plan writes its planes into workspace region `slot` (< kSplitKSlots); with `defer` its splitk_reduce
  // waits in deferred_reductions, so GEMMs of disjoint regions and outputs follow one another with no barrier. With
  // chain links (decode, F16 W: the _chain variant, above), returns the matvec's workgroups.
  auto matmul_in = [&](const Weight& w, gpu::Buffer& x, uint64_t x_off, gpu::Buffer& y, uint32_t nrows, bool accumulate,
                       uint32_t slot, bool defer, std::optional<ChainLink> chain = std::nullopt) -> uint32_t {
    uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]);
    if (chain && (nrows != 1 || w.dtype != DType::F16))
      fail_kind(ErrorKind::internal, "record_forward: a chained matvec of {} rows of {}", nrows, dtype_name(w.dtype));
    std::vector<BindGroupEntry> e = {{0, &w.buffer}, {1, &x, x_off * 4, uint64_t(nrows) * k * 4},
                                     {2, &y, 0, uint64_t(nrows) * m * 4}};
    MatvecParams mp{m, k, nrows, accumulate ? 1u : 0u};
    if (nrows == 1 && w.dtype == DType::Q4_K && !q4k_matvec_.empty()) {
      // x quantized (two int8 levels per 16 values, kernels_glsl/int_dot.glsl), then the integer-dot matvec.
      const uint64_t xq_bytes = (k + 255) / 256 * 640;
      dispatch("quantize_x_q8", {}, {{0, &x, x_off * 4, uint64_t(k) * 4}, {1, &xq_, 0, xq_bytes}}, MatvecParams{0, k, 1, 0},
               ((k + 255) / 256 * 16 + 63) / 64, 1, "quantize_x");
      e[1] = {1, &xq_, 0, xq_bytes};
      dispatch(q4k_matvec_, mv_spec(matvec_wg(w.dtype, k), plain_rows), e, mp, (m + plain_rows - 1) / plain_rows, 1,
               shape_label("matvec", w));
    } else if (nrows == 1) {
      const uint32_t rows_per_wg = std::max(1u, env_uint("BLUESHIFT_MATVEC_ROWS", w.dtype == DType::F16 ? 2 : 4));
      auto spec = mv_spec(matvec_wg(w.dtype, k), rows_per_wg, 2);
      if (chain) link(*chain, e, spec);
      const uint32_t groups = (m + rows_per_wg - 1) / rows_per_wg;
      dispatch(weight_kernel("matvec", w.dtype) + (chain ? "_chain" : ""), spec, e, mp, groups, 1,
               shape_label("matvec", w));
      return groups;
    } else {
      MatmulPlan plan = plan_prefill_matmul(kernels_, w.dtype, m, k, nrows, !opts_.f32_prefill_matmul,
                                            splitk_ws_.size() > 0);
      const uint64_t n = uint64_t(nrows) * k;
      gpu::Buffer* copy = nullptr;  // where X's f16 copy is (x16_ unless the gated GEMM wrote it)
      if (plan.f16_x) {
        if (n * 2 > x16_.size())
          fail_kind(ErrorKind::internal, "record_forward: a {}x{} GEMM input exceeds the f16 staging buffer", nrows, k);
        const bool held = x16_holds.buffer == &x && x16_holds.offset == x_off && x16_holds.n == n;
        copy = held && x16_holds.copy ? x16_holds.copy : &x16_;
        if (!held)
          dispatch("to_f16", {}, {{0, &x, x_off * 4, n * 4}, {1, &x16_, 0, n * 2}}, ToF16Params{uint32_t(n)},
                   grid_x(uint32_t(n / 4)), grid_y(uint32_t(n / 4)), "to_f16");
        e[1] = {1, copy, 0, n * 2};
      }
      const uint64_t planes = uint64_t(plan.parts) * nrows * m, ws_offset = slot * kSplitKPlaneFloats * 4;
      if (plan.parts > 1 && slot >= kSplitKSlots)
        fail_kind(ErrorKind::internal, "record_forward: split-k workspace region {} of {}", slot, kSplitKSlots);
      if (plan.parts > 1) e[2] = {2, &splitk_ws_, ws_offset, planes * 4};  // the parts' planes, then summed into y
      dispatch(plan.kernel, plan.constants, e, mp, plan.groups_x, plan.groups_y, shape_label("matmul", w));
      if (plan.parts > 1) {
        const uint32_t ny = nrows * m;
        const Reduction r{ws_offset, planes, &y, SplitKParams{ny, plan.parts, mp.accumulate, 0}};
        if (defer) deferred_reductions.push_back(r);
        else reduce(r);
      }
      if (plan.f16_x) x16_holds = {&x, x_off, n, copy == &x16_ ? nullptr : copy};
    }
    return 0u;
  };
  auto matmul = [&](const Weight& w, gpu::Buffer& x, uint64_t x_off, gpu::Buffer& y, uint32_t nrows, bool accumulate) {
    matmul_in(w, x, x_off, y, nrows, accumulate, 0, false);
  };
  // The held-back reductions: one barrier before the first (their planes were just written), none between them.
  auto flush_reductions = [&] {
    for (const Reduction& r : deferred_reductions) reduce(r);
    deferred_reductions.clear();
  };
  flush_pending = [&] {
    const std::vector<Reduction> rs = std::move(pending_planes);
    pending_planes.clear();  // before the reduces, which bind the workspace
    for (const Reduction& r : rs) reduce(r);
  };
  // The held-back reduction into y (accumulating or not, as asked), taken by the dispatch that sums its planes in.
  auto take_planes = [&](const gpu::Buffer* y, bool accumulate) -> std::optional<Reduction> {
    auto it = std::ranges::find_if(pending_planes, [&](const Reduction& r) { return r.y == y; });
    if (it == pending_planes.end() || (it->params.accumulate != 0) != accumulate) return std::nullopt;
    const Reduction r = *it;
    pending_planes.erase(it);
    return r;
  };
  // The reductions matmul_in held back, handed to their readers (take_planes) instead of flush_reductions.
  auto hold_for_readers = [&] {
    pending_planes.insert(pending_planes.end(), deferred_reductions.begin(), deferred_reductions.end());
    deferred_reductions.clear();
  };
  // y += x W^T into the residual y, its split-k reduction (if the plan splits) held back for the norm after it
  // (norm_for_gemm). Where the planes variant of that norm is missing or BLUESHIFT_RESIDUAL_PLANES=0 (A/B runs),
  // matmul's own reduction.
  static const bool residual_fold = env_uint("BLUESHIFT_RESIDUAL_PLANES", 1) != 0;
  auto matmul_residual = [&](const Weight& w, gpu::Buffer& x, gpu::Buffer& y) {
    const bool fold = residual_fold && M > 1 && kernels_.has("rms_norm_f16_planes") && deferred_reductions.empty();
    matmul_in(w, x, 0, y, M, true, 0, fold);  // binds the workspace: anything pending is recorded first
    hold_for_readers();
  };

  // Prefill: where a tensor-core GEMM (f16 input) consumes it, the hidden-size RMSNorm and the gated
  // activation also write their output in f16 into x16_ (packHalf2x16, as to_f16 rounds), so the GEMM's
  // conversion pass disappears. BLUESHIFT_NO_F16_PRODUCERS=1 keeps the separate to_f16 (A/B runs).
  static const bool no_f16_producers = env_switch("BLUESHIFT_NO_F16_PRODUCERS");
  auto feeds_f16_gemm = [&](const Weight& w, uint32_t n) {
    return M > 1 && !no_f16_producers && n % 2 == 0 && uint64_t(M) * n * 2 <= x16_.size() &&
           kernels_.has("rms_norm_f32_f16") &&
           plan_prefill_matmul(kernels_, w.dtype, uint32_t(w.shape[0]), uint32_t(w.shape[1]), M,
                               !opts_.f32_prefill_matmul)
               .f16_x;
  };
  auto norm_for_gemm = [&](const Weight& norm, const Weight& consumer) {
    if (!feeds_f16_gemm(consumer, uint32_t(c.dim)))
      return rms(x_, 0, norm, xn_, 0, uint32_t(c.dim), M, false);
    const uint64_t n = uint64_t(M) * c.dim;
    const RmsNormParams rp{uint32_t(c.dim), M, c.norm_eps, c.norm_offset ? 1.0f : 0.0f};
    const bool only = f16_only && kernels_.has("rms_norm_f16");  // the f16 copy alone, xn_ left stale
    std::vector<BindGroupEntry> e = {{0, &x_, 0, n * 4}, {1, &norm.buffer}, {3, &x16_, 0, n * 2}};
    if (!only) e.push_back({2, &xn_, 0, n * 4});
    const std::string kernel = only ? "rms_norm_f16" : "rms_norm_f32_f16";
    std::optional<Reduction> r;
    if (kernels_.has(kernel + "_planes")) r = take_planes(&x_, true);  // summed in by this dispatch
    if (r && r->params.n != n)
      fail_kind(ErrorKind::internal, "record_forward: residual planes of {} values for {}", r->params.n, n);
    if (r) {
      e.push_back({4, &splitk_ws_, r->ws_offset, r->planes * 4});
      dispatch(kernel + "_planes", {{0, wg}}, e,
               RmsPlanesParams{rp.n, rp.rows, rp.eps, rp.offset, r->params.parts, 0, 0, 0}, M, 1, "rms_norm");
    } else {
      dispatch(kernel, {{0, wg}}, e, rp, M, 1, "rms_norm");
    }
    if (only) mark_stale(xn_);
    x16_holds = {&xn_, 0, n};
  };

  // Prefill: gate and up in one tensor-core GEMM whose epilogue writes h = act(gate) * up in f16 (matmul_cm.comp
  // CM_GATED), into gate_'s bytes, for the down projection: no gated_act pass, gate and up never reach memory.
  // Where the plain GEMMs would take the k-64 128x128 tile (the same tile, so the same sums: h is bit-identical) and
  // the down projection reads f16. By default for F16 weights only: on the H100 (2026-11-25-h100-session10.md, A2-A4)
  // TTFT 1B f16 11.4 -> 9.6-10.1 ms and 8B f16 55.0 -> 47.7, but 8B q4_k_m 53.3-54.8 -> 54.9-56.7 (its Q4_K GEMM
  // alone: 24.5 ms against 24.7 + 1.2 of gated_act, yet slower in the unprofiled forward) and 1B q4_k_m even.
  // BLUESHIFT_GATED_GEMM=1: every dtype; =0: never (the two GEMMs and gated_act).
  static const uint32_t gated_gemm_env = env_uint("BLUESHIFT_GATED_GEMM", 2);
  auto gated_gemm = [&](const Weight& g, const Weight& u, const Weight& down) {
    const uint32_t m = uint32_t(g.shape[0]), k = uint32_t(g.shape[1]);
    const std::string cm = weight_kernel("matmul_cm", g.dtype) + "_128x128sk64";
    const bool wanted = gated_gemm_env == 1 || (gated_gemm_env > 1 && g.dtype == DType::F16);
    if (!wanted || M <= 1 || u.dtype != g.dtype || u.shape != g.shape || m % 16 != 0 ||
        !kernels_.has(cm + "_gated") || !feeds_f16_gemm(down, m) ||
        plan_prefill_matmul(kernels_, g.dtype, m, k, M, !opts_.f32_prefill_matmul).kernel != cm)
      return false;
    if (x16_holds.buffer != &xn_ || x16_holds.offset != 0 || x16_holds.n != uint64_t(M) * k || x16_holds.copy)
      return false;  // the norm wrote no f16 copy of its output
    const uint64_t n = uint64_t(M) * m;
    dispatch(cm + "_gated", {},
             {{0, &g.buffer}, {1, &x16_, 0, uint64_t(M) * k * 2}, {2, &gate_, 0, n * 2}, {4, &u.buffer}},
             GatedMatmulParams{m, k, M, c.act == Activation::silu ? 0u : 1u}, (M + 127) / 128, (m + 63) / 64,
             shape_label("matmul_gated", g));
    x16_holds = {&gate_, 0, n, &gate_};
    return true;
  };

  // A matvec's rows per workgroup for m rows: `rows` (0: plain_rows), doubled while the grid would pass its x limit.
  auto matvec_rows = [&](uint32_t m, uint32_t rows) {
    uint32_t r = rows ? rows : plain_rows;
    while ((m + r - 1) / r > 65535u) r *= 2;
    return r;
  };
  // Decode: y = W rmsnorm(x_) in one dispatch per projection (matvec.glsl, MV_NORM): the norm's
  // dispatch and the barrier after it disappear. Prefill keeps rms_norm then the tiled matmul.
  auto normed_matvec = [&](const Weight& norm, const Weight& w, gpu::Buffer& y, uint32_t rows = 0,
                           uint32_t inv = 0) {
    uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]);
    const uint32_t rows_per_wg = matvec_rows(m, rows);
    dispatch(weight_kernel("matvec", w.dtype) + "_norm",
             mv_spec(inv ? inv : matvec_wg(w.dtype, k), rows_per_wg, 2),
             {{0, &w.buffer}, {1, &x_, 0, uint64_t(k) * 4}, {2, &y, 0, uint64_t(m) * 4}, {3, &norm.buffer}},
             MatvecNormParams{m, k, 1, 0, c.norm_eps, c.norm_offset ? 1.0f : 0.0f, 0, 0},
             (m + rows_per_wg - 1) / rows_per_wg, 1, shape_label("matvec", w));
  };
  // ... and the gated FFN, h = act(W_gate xn) * (W_up xn), in one dispatch (MV_GATED): gate and up
  // never reach memory; no activation dispatch, one barrier fewer per layer.
  // With chain links, the _chain variant (above). Returns its workgroups.
  auto gated_matvec = [&](const Weight& norm, const Weight& wg_, const Weight& wu, gpu::Buffer& y,
                          std::optional<ChainLink> chain = std::nullopt) {
    uint32_t m = uint32_t(wg_.shape[0]), k = uint32_t(wg_.shape[1]);
    // F16 rows 2 a workgroup (H200, 2026-11-28-h200-session17.md R4: 1B f16 decode 789.6 -> 812.8 tok/s, 8B f16
    // 177.3 -> 181.4; 8 rows lost: 737 / 170); other dtypes keep 4 (not measured at 2).
    const uint32_t rows_per_wg = std::max(1u, env_uint("BLUESHIFT_GATED_ROWS", wg_.dtype == DType::F16 ? 2 : 4));
    std::vector<BindGroupEntry> e = {
        {0, &wg_.buffer}, {1, &x_, 0, uint64_t(k) * 4}, {2, &y, 0, uint64_t(m) * 4}, {3, &norm.buffer}, {4, &wu.buffer}};
    auto spec = mv_spec(matvec_wg(wg_.dtype, k), rows_per_wg, 4);
    if (chain) link(*chain, e, spec);
    const uint32_t groups = (m + rows_per_wg - 1) / rows_per_wg;
    dispatch(weight_kernel("matvec", wg_.dtype) + "_gated" + (chain ? "_chain" : ""), spec, e,
             MatvecNormParams{m, k, 1, 0, c.norm_eps, c.norm_offset ? 1.0f : 0.0f, c.act == Activation::silu ? 0u : 1u, 0},
             groups, 1, shape_label("matvec_gated", wg_));
    return groups;
  };

  // The same helpers for the per-family layer recorders (forward_<family>.cpp).
  LayerRecorder recorder{dispatch_raw, matmul, rms, normed_matvec};

  // The fused decode kernels, where the kernel set has them (the WGSL set mirrors only the basic ones).
  // The KV cache's element type names the attention kernels (kv_type.glsl): f16, or f32 (--precision f32).
  const std::string kvt = opts_.kv_f32 ? "f32kv" : "f16kv";
  bool split_attention = M == 1 && attn_splits_ > 0 && kernels_.has("attention_split_" + kvt);
  // BLUESHIFT_NO_TILED_ATTENTION=1: prefill on attention.comp (A/B runs).
  static const bool no_tiled = env_switch("BLUESHIFT_NO_TILED_ATTENTION");
  // Prefill attention on tensor cores in one pass (flash attention, attention_fa.comp) where the device and
  // head_dim allow; BLUESHIFT_FA_ATTENTION=0 leaves it to attention_tiled.comp (A/B runs). On the H100 the 8B's
  // attention takes 1.8 ms against 7.1 (benchmarks/results/2026-11-25-h100-session9.md, A1).
  static const bool fa_attention = env_uint("BLUESHIFT_FA_ATTENTION", 1) != 0;
  bool tiled_attention = M > 1 && !no_tiled && !opts_.kv_f32 && kernels_.has("attention_tiled_f16kv") &&
                         device_.adapter().max_shared_memory >= 28 * 1024;
  bool fold_norm = M == 1;
  for (int32_t l = 0; l < c.n_layers && fold_norm; ++l)
    for (const char* s : {"attn_q", "attn_k", "attn_v", "ffn_gate", "ffn_up", "conv_in", "linear_qkv", "linear_z",
                          "linear_a", "linear_b"})
      if (const Weight* w = find(fmt::format("blk.{}.{}", l, s)))  // absent: not this layer's kind (or Gemma 4's k / v)
        fold_norm = fold_norm && kernels_.has(weight_kernel("matvec", w->dtype) + "_norm");
  // RoPE and the KV append folded into the q/k/v projections (matvec_*_q/_k/_v), where no q/k norm or
  // bias sits between the projection and the rotation, and every layer is a plain attention layer.
  bool fold_rope = fold_norm && !c.qk_norm && !c.qkv_bias && c.head_dim % 4 == 0 && c.rot_dim() == c.head_dim &&
                   !c.attn_output_gate && c.layer_kinds.empty() && c.layer_head_dims.empty() && !c.v_norm &&
                   c.kv_shared_layers == 0 && !c.v_from_k && !opts_.kv_f32;
  for (int32_t l = 0; l < c.n_layers && fold_rope; ++l)
    for (auto [s, v] : {std::pair{"attn_q", "_q"}, std::pair{"attn_k", "_k"}, std::pair{"attn_v", "_v"}})
      if (const Weight* w = find(fmt::format("blk.{}.{}", l, s)))
        fold_rope = fold_rope && kernels_.has(weight_kernel("matvec", w->dtype) + v);
  // BLUESHIFT_NO_ROPE_FOLD=1: the separate rope_kv dispatch (A/B runs).
  static const bool no_rope_fold = env_switch("BLUESHIFT_NO_ROPE_FOLD");
  fold_rope = fold_rope && !no_rope_fold;
  // Gate and up in one dispatch needs them of one dtype (and shape) in every layer.
  bool fold_gated = fold_norm;
  for (int32_t l = 0; l < c.n_layers && fold_gated; ++l) {
    const Weight* g = find(fmt::format("blk.{}.ffn_gate", l));
    const Weight* u = find(fmt::format("blk.{}.ffn_up", l));
    if (!g || !u) {  // MoE layers: their experts take another path (forward_moe.cpp)
      fold_gated = false;
      break;
    }
    fold_gated = g->dtype == u->dtype && g->shape == u->shape && g->buffer.size() == u->buffer.size() &&
                 kernels_.has(weight_kernel("matvec", g->dtype) + "_gated");
  }

  // Embedding (Gemma scales it by sqrt(dim), rounded as HF rounds it), a dispatch per binding-sized
  // row range of the table (embed.comp writes only the tokens in its range).
  // 256 invocations a row where the tokens are few (decode: the row's loads in one or two trips, embed.comp), 64 for
  // a prompt's rows.
  const Weight& embed = *find("embed");
  const uint32_t embed_wg = M <= 16 && !cpu ? 256 : 64;
  // BLUESHIFT_DECODE_SKIP=MASK (timing breakdowns only: the logits are wrong): decode leaves out the embedding's
  // dispatch (bit 0) or the head's output norm (bit 1), to time what a dispatch costs in the loop.
  static const uint32_t decode_skip = env_uint("BLUESHIFT_DECODE_SKIP", 0);
  const uint32_t skip = M == 1 ? decode_skip : 0;
  const bool embedded = M == 1 && rec.x_embedded;  // the sampler of the step before wrote the row (sampler_embed)
  for (auto [r0, r1] : skip & 1u || embedded ? decltype(row_ranges(embed)){} : row_ranges(embed))
    dispatch(weight_kernel("embed", embed.dtype), {{0, embed_wg}},
             {{0, &embed.buffer, range_offset(embed, r0), range_bytes(embed, r0, r1)}, {1, &tokens_, 0, M * 4},
              {2, &x_, 0, uint64_t(M) * c.dim * 4}},
             EmbedParams{uint32_t(c.dim), M, c.embed_scale, r0}, M, 1, "embed");

  // Decode: every layer in one dispatch with grid barriers between its phases (persistent.cpp), where
  // the model and device allow; the loop below then records nothing.
  const bool persistent = M == 1 && persistent_;

  // Decode on the per-phase path: after each phase, a read of the first bytes of the next phase's weights
  // (stream_read, no barrier before it), so the phase's tail, where the GPU drains, keeps memory busy and the next
  // phase's first wave finds its weights in L2. On the H200 (2026-11-28-h200-session19.md, D2-D5) the 8B f16 went
  // from 180.4 to 185.1 tok/s at 4 MiB a phase and the SM count's workgroups, and to 186.5 at 8 MiB and twice the
  // workgroups; every size lost on the 1B f16 (-1% at 1 MiB, -22% at 16 MiB), whose phases are a quarter of the size,
  // and the 3B f16 (an 18 MiB o projection) gained 3.6% at 4 and at 8 MiB (329.0 -> 341.0, 2026-11-28-h200-session20.md,
  // E1). So GPUs read 8 MiB ahead where the o projection's weights are 16 MiB or more. ModelOptions::prefetch_kb, else
  // BLUESHIFT_PREFETCH_KB, sets the bytes (0: none); BLUESHIFT_PREFETCH_WG the workgroups (default: twice the SM
  // count); BLUESHIFT_PREFETCH_PHASES which phases (a bit each: 1 o, 2 gate + up, 4 down, 8 the next layer's q, k,
  // v; D3 found each adds its own share).
  static const int64_t prefetch_env =
      std::getenv("BLUESHIFT_PREFETCH_KB") ? int64_t(env_uint("BLUESHIFT_PREFETCH_KB", 0)) : -1;
  const int64_t prefetch_kb = opts_.prefetch_kb >= 0 ? opts_.prefetch_kb : prefetch_env;
  const Weight* first_o = find("blk.0.attn_out");
  const uint64_t prefetch_default = !cpu && first_o && first_o->buffer.size() >= (16u << 20) ? 8u << 20 : 0;
  const uint64_t prefetch_bytes = prefetch_kb >= 0 ? uint64_t(prefetch_kb) * 1024 : prefetch_default;
  const uint32_t prefetch_wg = env_uint("BLUESHIFT_PREFETCH_WG", std::max(1u, 2 * device_.adapter().sm_count));
  const bool prefetching = M == 1 && !persistent && prefetch_bytes > 0 && kernels_.has("stream_read") &&
                           c.layer_kinds.empty() && !c.moe() && !c.sandwich_norm;
  // Each read of a layer's phase writes its own slot of the sink (a value a workgroup), so none waits for another, not
  // even across the layers of a step recorded with no barrier (chained dispatches, below).
  constexpr uint32_t sink_slots = 3, sink_phases = 4;  // a phase reads at most 3 weights (q, k, v)
  const uint64_t slot_bytes = (uint64_t(prefetch_wg) * 4 + 255) & ~uint64_t(255);  // binding offsets: 256-aligned
  const uint64_t sink_bytes = uint64_t(c.n_layers) * sink_phases * sink_slots * slot_bytes;
  if (prefetching && (!prefetch_sink_ || prefetch_sink_.size() < sink_bytes))
    prefetch_sink_ = device_.createBuffer({sink_bytes, BufferUsage::storage, "prefetch sink"});
  static const uint32_t prefetch_phases = env_uint("BLUESHIFT_PREFETCH_PHASES", 15);
  // Layer l's weights `names` (those it has), read ahead for phase bit `phase`; they share the bytes by size. The
  // weights are looked up only when the phase reads ahead.
  auto prefetch = [&](uint32_t phase, int32_t l, std::initializer_list<const char*> names) {
    if (!prefetching || !(prefetch_phases & phase) || l >= c.n_layers) return;
    std::vector<const Weight*> ws;
    uint64_t total = 0;
    for (const char* name : names)
      if (const Weight* w = find(fmt::format("blk.{}.{}", l, name))) ws.push_back(w), total += w->buffer.size();
    for (uint32_t slot = 0; slot < ws.size() && slot < sink_slots; ++slot) {
      const Weight& w = *ws[slot];
      const uint64_t bytes = std::min(w.buffer.size(), prefetch_bytes * w.buffer.size() / total) / 16 * 16;
      if (bytes == 0) continue;
      const uint64_t at = ((uint64_t(l) * sink_phases + uint32_t(std::countr_zero(phase))) * sink_slots + slot) * slot_bytes;
      dispatch("stream_read", {}, {{0, &w.buffer, 0, bytes}, {1, &prefetch_sink_, at, slot_bytes}},
               StreamParams{uint32_t(bytes / 16), 1}, prefetch_wg, 1, "prefetch");
    }
  };
  // Decode on the per-phase path: the layer's cached K and V rows [lo, pos) read into L2 (kv_touch.comp) beside its
  // q, k and v matvecs, where the GPU drains, so that attention's chain of K and V reads finds them there. The persistent
  // kernel does the same in a barrier's wait (TOUCH). On the H200 (2026-11-30-h200-session40.md, W8) the 1B f16 went
  // from 876 to 879 tok/s at 512 + 128 and from 597 to 613 at 4,096 + 128, the 8B f16 from 193.8 to 194.6 and from
  // 157.2 to 159.0; before the q, k and v dispatches it lost (873, 193.1). BLUESHIFT_KV_TOUCH: 1 after the q, k and v
  // dispatches (the default), 2 before them (beside the layer before's last phase), 0 none (A/B runs);
  // ModelOptions::kv_touch sets it over the env. BLUESHIFT_KV_TOUCH_WG: the workgroups (default: twice the SM count);
  // BLUESHIFT_KV_TOUCH_LANE: the words a lane at most (default 8).
  static const uint32_t kv_touch_env = env_uint("BLUESHIFT_KV_TOUCH", 1);
  const uint32_t kv_touch_mode = opts_.kv_touch >= 0 ? uint32_t(opts_.kv_touch) : kv_touch_env;
  static const uint32_t kv_touch_lane = std::clamp(env_uint("BLUESHIFT_KV_TOUCH_LANE", 8), 1u, 32u);
  const uint32_t kv_touch_wg = std::max(1u, env_uint("BLUESHIFT_KV_TOUCH_WG", 2 * device_.adapter().sm_count));
  const bool kv_touching = M == 1 && !persistent && kv_touch_mode != 0 && device_.hasBufferDeviceAddress() &&
                           kernels_.has("kv_touch");
  // A slice of the sink a layer, as the prefetches' (above).
  const uint64_t touch_slice = (uint64_t(kv_touch_wg) * 4 + 255) & ~uint64_t(255);
  if (kv_touching && (!kv_touch_sink_ || kv_touch_sink_.size() < uint64_t(c.n_layers) * touch_slice))
    kv_touch_sink_ = device_.createBuffer({uint64_t(c.n_layers) * touch_slice, BufferUsage::storage, "kv touch sink"});
  // Layer l's touches, where `mode` is the one chosen.
  auto kv_touch = [&](int32_t l, uint32_t mode) {
    if (!kv_touching || mode != kv_touch_mode || c.kind(l) != LayerKind::attention) return;
    const int32_t src = c.kv_source(l);
    const uint64_t ka = kcache_[size_t(src)].deviceAddress(), va = vcache_[size_t(src)].deviceAddress();
    const uint32_t row = uint32_t(c.kv_dim_of(l)) * (opts_.kv_f32 ? 4u : 2u);
    const uint32_t window = c.sliding(l) ? uint32_t(c.sliding_window) : 0u;
    dispatch("kv_touch", {{0, kv_touch_lane}}, {{0, &state_}, {1, &kv_touch_sink_, uint64_t(l) * touch_slice, touch_slice}},
             KvTouchParams{uint32_t(ka), uint32_t(ka >> 32), uint32_t(va), uint32_t(va >> 32), row, window, 32, 0},
             kv_touch_wg, 1, "kv_touch");
  };
  if (persistent)
    dispatch(persistent_->kernel(), persistent_->spec(rec.long_context), persistent_->entries(),
             persistent_->params(rec.long_context),
             persistent_->grid(), 1, persistent_->kernel());  // the variant's name: profiles tell them apart
  if (c.ple_dim > 0 && !persistent) record_per_layer_inputs(recorder, M);

  // The long-context recording's position (its per-phase attention by kv head), once for every layer below.
  const int32_t long_from = rec.long_context && !persistent ? long_context_from() : INT32_MAX;
  if (chaining && !persistent) enc.fillBuffer(chain_, 0, chain_.size(), 0);  // this step's chain counters
  // Layer l's chained dispatches (chaining, above): gate + up -> down where both are F16; with BLUESHIFT_CHAIN=2,
  // o -> gate + up too where o is F16 and nothing sits between them (chain_o, below); with 3, layer l - 1's down ->
  // l's q, k and v (the three wait on one count) where they are F16 and fold the rope and KV append, and nothing is
  // recorded between a layer's down and the next one's projections; with 4, q, k and v -> split attention -> o too
  // (attention waits for the three's workgroups, and o for each head's merge: attention_split.comp ATTN_CHAIN).
  auto chain_ffn_at = [&](int32_t l) {
    const Weight *g = find(fmt::format("blk.{}.ffn_gate", l)), *d = find(fmt::format("blk.{}.ffn_down", l));
    return chaining && !c.moe() && fold_gated && !c.sandwich_norm && g && d && g->dtype == DType::F16 &&
           d->dtype == DType::F16;
  };
  auto qkv_f16 = [&](int32_t l) {  // layer l's q, k and v are F16 (the _q/_k/_v_chain variants)
    return std::ranges::all_of(std::array{"attn_q", "attn_k", "attn_v"}, [&](const char* s) {
      return find(fmt::format("blk.{}.{}", l, s))->dtype == DType::F16;
    });
  };
  auto chain_qkv_at = [&](int32_t l) {
    return chaining && chain_mode >= 3 && fold_rope && l > 0 && l < c.n_layers && chain_ffn_at(l - 1) &&
           c.ple_dim == 0 && !c.layer_scalar && !after_layer && kernels_.has("matvec_f16_q_chain") && qkv_f16(l);
  };
  uint32_t down_groups = 0;  // the last down projection's workgroups where it signals the next q, k and v
  // BLUESHIFT_ATTN_PROBE=MASK (timing breakdowns only, wrong logits): attention_split.comp's PROBE bits.
  static const uint32_t attn_probe = env_uint("BLUESHIFT_ATTN_PROBE", 0) & 15u;
  for (int32_t l = 0; l < (persistent ? 0 : c.n_layers); ++l) {
    auto W = [&](const char* s) -> const Weight& { return *find(fmt::format("blk.{}.{}", l, s)); };
    const bool chain_ffn = chain_ffn_at(l), chain_qkv = chain_qkv_at(l);
    const Weight* o_w = find(fmt::format("blk.{}.attn_out", l));
    const bool chain_o = chain_ffn && chain_mode >= 2 && c.kind(l) == LayerKind::attention && o_w &&
                         o_w->dtype == DType::F16 && !c.attn_out_bias;
    const bool chain_attn = chain_o && chain_mode >= 4 && fold_rope && split_attention && c.head_dim_of(l) <= 256 &&
                            !c.attn_sinks && attn_probe == 0 && !(rec.long_context && long_attention_layer(l, long_from)) &&
                            kernels_.has("attention_split_f16kv_chain") && qkv_f16(l);
    uint32_t qkv_groups = 0;  // the q, k and v projections' workgroups where they signal attention
    uint32_t o_groups = 0;  // the o projection's workgroups where it signals
    bool sliding = c.sliding(l);
    kv_touch(l, 2);
    if (c.kind(l) == LayerKind::short_conv) {
      record_short_conv(l, M, fold_norm, recorder);
    } else if (c.kind(l) == LayerKind::linear_attention) {
      record_linear_attention(l, M, fold_norm, recorder);
    } else {
      // Gemma 4: this layer's shape, and the layer whose KV cache it reads (itself unless KV-shared).
      const int32_t hd = c.head_dim_of(l), nkv = c.kv_heads_of(l), src = c.kv_source(l);
      const bool own_kv = c.computes_kv(l);
      const char* v_weight = c.has_v_proj(l) ? "attn_v" : "attn_k";

      auto& freq = sliding ? inv_freq_local_ : inv_freq_global_;
      // Qwen 3.5's gated attention: q_proj writes q and gate per head into attn_qg_, split below.
      gpu::Buffer& q_out = c.attn_output_gate ? attn_qg_ : q_;
      if (fold_rope) {
        // q rotated into q_; k rotated and v as they are, as f16, into the caches at state.pos.
        const Weight& norm = W("attn_norm");
        for (auto [name, suffix] :
             {std::pair{"attn_q", "_q"}, std::pair{"attn_k", "_k"}, std::pair{"attn_v", "_v"}}) {
          const Weight& w = W(name);
          uint32_t m = uint32_t(w.shape[0]), k = uint32_t(w.shape[1]);
          std::vector<BindGroupEntry> e = {
              {0, &w.buffer}, {1, &x_, 0, uint64_t(k) * 4}, {3, &norm.buffer}, {6, &state_}};
          if (suffix[1] != 'v') e.push_back({5, &freq});
          if (suffix[1] == 'q')
            e.push_back({2, &q_, 0, uint64_t(m) * 4});
          else
            e.push_back({7, suffix[1] == 'k' ? &kcache_[l] : &vcache_[l]});
          const uint32_t rope_rows =
              4;  // matvec.glsl's MV_ROPE row permutation takes two pairs per workgroup
          std::vector<gpu::SpecConstant> spec = mv_spec(matvec_wg(w.dtype, k), rope_rows, 1);
          ChainLink ch;
          if (chain_qkv) ch.wait_at = chain_slot(l - 1, kChainAfterDown), ch.producers = down_groups;
          if (chain_attn) ch.signal_at = chain_slot(l, kChainAfterQkv), qkv_groups += (m + rope_rows - 1) / rope_rows;
          if (chain_qkv || chain_attn) link(ch, e, spec);
          dispatch(
              weight_kernel("matvec", w.dtype) + suffix + (chain_qkv || chain_attn ? "_chain" : ""), spec, e,
              MatvecRopeParams{m, k, 1, 0, c.norm_eps, c.norm_offset ? 1.0f : 0.0f, uint32_t(c.head_dim), 0},
              (m + rope_rows - 1) / rope_rows, 1, shape_label("matvec", w));
        }
      } else if (fold_norm) {
        normed_matvec(W("attn_norm"), W("attn_q"), q_out);
        if (own_kv) {
          normed_matvec(W("attn_norm"), W("attn_k"), k_);
          normed_matvec(W("attn_norm"), W(v_weight), v_);
        }
      } else {
        // q, k and v in regions 0-2 of the split-k workspace, their reductions after all three: one barrier
        // where there were five (GEMM, reduce, GEMM, ... each waiting on the last), and the small k and v GEMMs
        // fill the GPU beside q's. BLUESHIFT_QKV_TOGETHER=0: each reduced at once, in region 0 (A/B runs).
        static const bool together = env_uint("BLUESHIFT_QKV_TOGETHER", 1) != 0;
        norm_for_gemm(W("attn_norm"), W("attn_q"));
        matmul_in(W("attn_q"), xn_, 0, q_out, M, false, 0, together);
        if (own_kv) {
          matmul_in(W("attn_k"), xn_, 0, k_, M, false, together ? 1 : 0, together);
          matmul_in(W(v_weight), xn_, 0, v_, M, false, together ? 2 : 0, together);
        }
        // rope_kv sums them in (BLUESHIFT_QKV_PLANES=0: the reduces here, A/B runs); anything that reads q, k or v
        // before it records them first (a bias, Qwen's q / k norms, the attention gate).
        static const bool qkv_fold = env_uint("BLUESHIFT_QKV_PLANES", 1) != 0;
        if (together && qkv_fold && kernels_.has("rope_kv_f32_planes")) hold_for_readers();
        flush_reductions();
      }
      kv_touch(l, 1);
      if (c.attn_output_gate) {
        uint32_t n = M * uint32_t(c.q_dim());
        dispatch("attn_gate_split_f32", {},
                 {{0, &attn_qg_, 0, uint64_t(n) * 8},
                  {1, &q_, 0, uint64_t(n) * 4},
                  {2, &attn_gate_, 0, uint64_t(n) * 4}},
                 AttnGateParams{n, uint32_t(c.head_dim), 0, 0}, grid_x(n), grid_y(n), "attn_gate");
      }
      if (c.qkv_bias) {
        for (auto [name, buf, n] :
             {std::tuple{"attn_q_bias", &q_, c.q_dim()}, std::tuple{"attn_k_bias", &k_, c.kv_dim()},
              std::tuple{"attn_v_bias", &v_, c.kv_dim()}})
          dispatch("add_bias_f32", {}, {{0, buf, 0, uint64_t(M) * n * 4}, {1, &W(name).buffer}},
                   BiasParams{uint32_t(n), M, 0, 0}, (n + 255) / 256, M, "bias");
      }
      if (c.qk_norm) {
        rms(q_, 0, W("attn_q_norm"), q_, 0, hd, M * c.n_heads, false);
        if (own_kv) rms(k_, 0, W("attn_k_norm"), k_, 0, hd, M * nkv, false);
      }
      if (c.v_norm && own_kv) rms(v_, 0, ones_, v_, 0, hd, M * nkv, false);
      const uint32_t qd = uint32_t(c.q_dim_of(l)), kvd = uint32_t(c.kv_dim_of(l));
      if (!fold_rope) {
        // A KV-shared layer rotates q only (no k/v jobs). Partial rotary (Qwen 3.5) through rope_kv's
        // ROT_DIM; full rotary keeps the plain pipeline (and the WGSL twin).
        const uint32_t store_heads = own_kv ? uint32_t(nkv) : 0u;
        std::vector<gpu::SpecConstant> rot;
        if (c.rot_dim() != c.head_dim) rot.push_back({0, uint32_t(c.rot_dim())});
        std::vector<BindGroupEntry> e = {{0, &q_, 0, uint64_t(M) * qd * 4},
                                         {1, &k_, 0, uint64_t(M) * kvd * 4},
                                         {2, &v_, 0, uint64_t(M) * kvd * 4},
                                         {3, &freq},
                                         {4, &state_},
                                         {5, &kcache_[src]},
                                         {6, &vcache_[src]}};
        const RopeKvParams rp{M, uint32_t(c.n_heads), store_heads, uint32_t(hd)};
        std::optional<Reduction> pq, pk, pv;
        if (!opts_.kv_f32 && kernels_.has("rope_kv_f32_planes")) {
          if (c.rot_dim() == c.head_dim) pq = take_planes(&q_, false);  // else q's unrotated dims need the reduce
          if (own_kv) pk = take_planes(&k_, false), pv = take_planes(&v_, false);
        }
        if (pq || pk || pv) {
          auto parts = [](const std::optional<Reduction>& r) { return r ? r->params.parts : 0u; };
          auto off = [](const std::optional<Reduction>& r) { return r ? uint32_t(r->ws_offset / 4) : 0u; };
          e.push_back({7, &splitk_ws_});
          dispatch("rope_kv_f32_planes", rot, e,
                   RopeKvPlanesParams{rp.rows, rp.n_heads, rp.n_kv_heads, rp.head_dim, parts(pq), parts(pk),
                                      parts(pv), 0, off(pq), off(pk), off(pv), 0},
                   rope_kv_groups(c, hd, store_heads), M, "rope_kv");
        } else {
          dispatch(opts_.kv_f32 ? "rope_kv_f32kv" : "rope_kv_f32", rot, e, rp, rope_kv_groups(c, hd, store_heads), M,
                   "rope_kv");
        }
      }
      // Per layer: split decode attention up to head_dim 256, tiled prefill up to 128, else attention.comp
      // (up to 512: Gemma 4's full layers).
      const float scale = c.softmax_scale_of(l);
      const uint32_t window = sliding ? uint32_t(c.sliding_window) : 0u;
      // GPT-OSS's attention sinks: the _sinks variants, the per-head logits at binding 7.
      const std::string sinks = c.attn_sinks ? "_sinks" : "";
      auto with_sinks = [&](std::vector<BindGroupEntry> e) {
        if (c.attn_sinks) e.push_back({7, &W("attn_sinks").buffer});
        return e;
      };
      if (split_attention && hd <= 256) {
        std::vector<gpu::SpecConstant> attn_spec;
        if (attn_probe) attn_spec.push_back({1, attn_probe});
        // The long-context recording's form: workgroups by kv head, its 2-4 query heads together (the _gqa variant;
        // long_context_from says where), on layers whose window reaches that far.
        const bool gqa = rec.long_context && attn_probe == 0 && long_attention_layer(l, long_from);
        std::vector<BindGroupEntry> e = with_sinks({{0, &q_, 0, uint64_t(qd) * 4},
                                                    {1, &kcache_[src]},
                                                    {2, &vcache_[src]},
                                                    {3, &att_, 0, uint64_t(qd) * 4},
                                                    {4, &attn_part_},
                                                    {5, &attn_count_},
                                                    {6, &state_}});
        if (chain_attn)
          link(ChainLink{chain_slot(l, kChainAfterQkv), qkv_groups, chain_slot(l, kChainAfterAttention)}, e, attn_spec);
        dispatch("attention_split_" + kvt + sinks + (gqa ? "_gqa" : "") + (chain_attn ? "_chain" : ""), attn_spec, e,
                 AttentionSplitParams{uint32_t(c.n_heads), uint32_t(nkv), uint32_t(hd), attn_splits_, window,
                                      scale, c.attn_softcap, 0},
                 gqa ? uint32_t(nkv) : uint32_t(c.n_heads), attn_splits_, "attention");
      } else if (tiled_attention && (hd == 64 || hd == 128) && !c.attn_sinks && fa_attention &&
                 kernels_.has(fmt::format("attention_fa_f16kv_hd{}", hd))) {
        // Prefill on tensor cores: 16 query rows per subgroup, 64 per workgroup, K/V staged once per block.
        // (Blocks of 64 keys for head_dim 64 were slower on the H100: the 1B's attention 0.62 -> 0.73 ms in the
        // profile, TTFT +0.1 ms; session 12, R4.) Where the o projection reads f16, the output goes there in f16
        // alone (the _f16o variant) and att_'s f32 values are left unwritten (BLUESHIFT_FA_F16_OUT=0: f32 and a
        // to_f16 pass, A/B runs).
        static const bool fa_f16_out = env_uint("BLUESHIFT_FA_F16_OUT", 1) != 0;
        const std::string fa = fmt::format("attention_fa_f16kv_hd{}", hd);
        const uint64_t n = uint64_t(M) * qd;
        const bool f16_out = fa_f16_out && f16_only && !c.attn_output_gate && kernels_.has(fa + "_f16o") &&
                             feeds_f16_gemm(W("attn_out"), qd);
        const AttentionParams ap{M, uint32_t(c.n_heads), uint32_t(nkv), uint32_t(hd), uint32_t(max_ctx_), window, scale,
                                 c.attn_softcap};
        if (f16_out) {
          dispatch(fa + "_f16o", {},
                   {{0, &q_, 0, n * 4}, {1, &kcache_[src]}, {2, &vcache_[src]}, {3, &x16_, 0, n * 2}, {5, &state_}}, ap,
                   c.n_heads, (M + 63) / 64, "attention");
          x16_holds = {&att_, 0, n};
          mark_stale(att_);
        } else {
          dispatch(fa, {}, {{0, &q_, 0, n * 4}, {1, &kcache_[src]}, {2, &vcache_[src]}, {3, &att_, 0, n * 4}, {5, &state_}},
                   ap, c.n_heads, (M + 63) / 64, "attention");
        }
      } else if (tiled_attention && hd <= 128) {
        // Prefill: 16 query rows per workgroup share each K/V tile (attention_tiled.comp).
        dispatch("attention_tiled_f16kv" + sinks, {},
                 with_sinks({{0, &q_, 0, uint64_t(M) * qd * 4},
                  {1, &kcache_[src]},
                  {2, &vcache_[src]},
                  {3, &att_, 0, uint64_t(M) * qd * 4},
                  {5, &state_}}),
                 AttentionParams{M, uint32_t(c.n_heads), uint32_t(nkv), uint32_t(hd), uint32_t(max_ctx_),
                                 window, scale, c.attn_softcap},
                 c.n_heads, (M + 15) / 16, "attention");
      } else {
        if (!scores_)
          scores_ = device_.createBuffer({uint64_t(max_batch_) * c.n_heads * uint64_t(max_ctx_) * 4,
                                          BufferUsage::storage, "attention scores"});
        dispatch("attention_" + kvt + sinks, {},
                 with_sinks({{0, &q_, 0, uint64_t(M) * qd * 4},
                  {1, &kcache_[src]},
                  {2, &vcache_[src]},
                  {3, &att_, 0, uint64_t(M) * qd * 4},
                  {4, &scores_},
                  {5, &state_}}),
                 AttentionParams{M, uint32_t(c.n_heads), uint32_t(nkv), uint32_t(hd), uint32_t(max_ctx_),
                                 window, scale, c.attn_softcap},
                 c.n_heads, M, "attention");
      }
      prefetch(1, l, {"attn_out"});
      if (c.attn_output_gate) {
        uint32_t n = M * uint32_t(c.q_dim());
        dispatch("attn_gate_apply_f32", {},
                 {{0, &att_, 0, uint64_t(n) * 4}, {1, &attn_gate_, 0, uint64_t(n) * 4}},
                 AttnGateParams{n, uint32_t(c.head_dim), 0, 0}, grid_x(n), grid_y(n), "attn_gate");
      }
      if (c.sandwich_norm) {
        matmul(W("attn_out"), att_, 0, tmp_, M, false);
        rms(tmp_, 0, W("attn_post_norm"), x_, 0, c.dim, M, true);
      } else if (chain_o) {
        ChainLink ch{std::nullopt, 0, chain_slot(l, kChainAfterO)};
        if (chain_attn) ch.wait_at = chain_slot(l, kChainAfterAttention), ch.producers = uint32_t(c.n_heads);
        o_groups = matmul_in(W("attn_out"), att_, 0, x_, M, true, 0, false, ch);
        prefetch(2, l, {"ffn_gate", "ffn_up"});
      } else {
        matmul_residual(W("attn_out"), att_, x_);
        prefetch(2, l, {"ffn_gate", "ffn_up"});
      }
      if (c.attn_out_bias)  // GPT-OSS: o_proj's bias, added to the residual it was just added into
        dispatch("add_bias_f32", {}, {{0, &x_, 0, uint64_t(M) * c.dim * 4}, {1, &W("attn_out_bias").buffer}},
                 BiasParams{uint32_t(c.dim), M, 0, 0}, (uint32_t(c.dim) + 255) / 256, M, "bias");
    }  // attention layer

    if (c.moe()) {
      record_moe(l, M, recorder);  // forward_moe.cpp: router, experts, weighted sum into x_
    } else if (chain_ffn) {
      std::optional<uint64_t> o_slot;
      if (o_groups) o_slot = chain_slot(l, kChainAfterO);
      const uint32_t producers = gated_matvec(W("ffn_norm"), W("ffn_gate"), W("ffn_up"), gate_,
                                              ChainLink{o_slot, o_groups, chain_slot(l, kChainAfterGateUp)});
      prefetch(4, l, {"ffn_down"});
      std::optional<uint64_t> down_slot;
      if (chain_qkv_at(l + 1)) down_slot = chain_slot(l, kChainAfterDown);
      down_groups = matmul_in(W("ffn_down"), gate_, 0, x_, M, true, 0, false,
                              ChainLink{chain_slot(l, kChainAfterGateUp), producers, down_slot});
      prefetch(8, l + 1, {"attn_q", "attn_k", "attn_v"});
    } else if (fold_gated) {
      gated_matvec(W("ffn_norm"), W("ffn_gate"), W("ffn_up"), gate_);
      prefetch(4, l, {"ffn_down"});
    } else {
      bool h_written = false;  // by the gated GEMM, in f16
      if (fold_norm) {
        normed_matvec(W("ffn_norm"), W("ffn_gate"), gate_);
        normed_matvec(W("ffn_norm"), W("ffn_up"), up_);
      } else {
        norm_for_gemm(W("ffn_norm"), W("ffn_gate"));
        h_written = gated_gemm(W("ffn_gate"), W("ffn_up"), W("ffn_down"));
        if (!h_written) {
          matmul(W("ffn_gate"), xn_, 0, gate_, M, false);
          matmul(W("ffn_up"), xn_, 0, up_, M, false);
        }
      }
      uint32_t n = M * uint32_t(c.ffn_dim_of(l));
      const GatedActParams act{n, c.act == Activation::silu ? 0u : 1u, 0, 0};
      if (h_written) {
      } else if (feeds_f16_gemm(W("ffn_down"), uint32_t(c.ffn_dim_of(l))) && kernels_.has("gated_act_f32_f16")) {
        const bool only = f16_only && kernels_.has("gated_act_f16");  // h in f16 alone, gate_ left stale
        std::vector<BindGroupEntry> e = {{0, &gate_, 0, uint64_t(n) * 4}, {1, &up_, 0, uint64_t(n) * 4},
                                         {3, &x16_, 0, uint64_t(n) * 2}};
        if (!only) e.push_back({2, &gate_, 0, uint64_t(n) * 4});
        dispatch(only ? "gated_act_f16" : "gated_act_f32_f16", {}, e, act, grid_x(n / 2), grid_y(n / 2), "gated_act");
        x16_holds = {&gate_, 0, n};
        if (only) mark_stale(gate_);
      } else {
        dispatch(
            "gated_act_f32", {},
            {{0, &gate_, 0, uint64_t(n) * 4}, {1, &up_, 0, uint64_t(n) * 4}, {2, &gate_, 0, uint64_t(n) * 4}},
            act, grid_x(n), grid_y(n), "gated_act");
      }
    }
    if (c.moe() || chain_ffn) {
    } else if (c.sandwich_norm) {
      matmul(W("ffn_down"), gate_, 0, tmp_, M, false);
      rms(tmp_, 0, W("ffn_post_norm"), x_, 0, c.dim, M, true);
    } else {
      matmul_residual(W("ffn_down"), gate_, x_);
      prefetch(8, l + 1, {"attn_q", "attn_k", "attn_v"});
    }
    if (c.ple_dim > 0 || c.layer_scalar) record_layer_tail(recorder, l, M);
    if (after_layer) after_layer(l);
  }

  // Head: the last L rows only.
  uint32_t L = std::min<uint32_t>(M, uint32_t(logits_rows_));
  uint64_t first = uint64_t(M - L) * c.dim;
  const Weight& head = c.tied_embeddings ? embed : *find("output");
  const bool fold_head = logits_only && fold_norm && kernels_.has(weight_kernel("matvec", head.dtype) + "_norm");
  auto head_ranges = row_ranges(head);
  if (head_ranges.size() > 1) {
    // A head larger than one binding: per logits row, a matvec per row range of W, each writing its
    // columns of the row through binding offsets.
    const Weight& on = *find("output_norm");
    if (!fold_head) rms(x_, first, on, xn_, 0, c.dim, L, false);
    const uint32_t k = uint32_t(c.dim), rows_per_wg = plain_rows;
    for (uint32_t l = 0; l < L; ++l)
      for (auto [r0, r1] : head_ranges) {
        uint32_t m = r1 - r0;
        std::vector<BindGroupEntry> e = {{0, &head.buffer, range_offset(head, r0), range_bytes(head, r0, r1)},
                                         {1, fold_head ? &x_ : &xn_, uint64_t(l) * k * 4, uint64_t(k) * 4},
                                         {2, &logits_, (uint64_t(l) * c.vocab + r0) * 4, uint64_t(m) * 4}};
        if (fold_head) {
          e.push_back({3, &on.buffer});
          dispatch(weight_kernel("matvec", head.dtype) + "_norm", mv_spec(matvec_wg(head.dtype, k), rows_per_wg, 8), e,
                   MatvecNormParams{m, k, 1, 0, c.norm_eps, c.norm_offset ? 1.0f : 0.0f, 0, 0},
                   (m + rows_per_wg - 1) / rows_per_wg, 1, shape_label("matvec", head));
        } else {
          dispatch(weight_kernel("matvec", head.dtype), mv_spec(matvec_wg(head.dtype, k), rows_per_wg, 8), e,
                   MatvecParams{m, k, 1, 0}, (m + rows_per_wg - 1) / rows_per_wg, 1, shape_label("matvec", head));
        }
      }
  } else if (fold_head) {
    // Decode's head. Its shape: on the H100 the 128256-row Q6_K heads streamed fastest at 32 invocations and 2
    // rows a workgroup alone (isolated sweep, 2026-11-24-h100-session5.md P13), not the layers' 64-128 and 4; in
    // the model, with the norm folded in (each workgroup normalizing x), 4 rows took 0.119 ms against 0.127 on the
    // 1B and 0.223 against 0.230 on the 8B (2026-11-28-h100-session13.md, S3), while the 1B's F16 head stayed
    // faster at 2 (0.217-0.221 against 0.226-0.229, S4). BLUESHIFT_HEAD_ROWS / BLUESHIFT_HEAD_WG fix them (0: the
    // layers').
    // The norm goes in a one-row rms_norm dispatch of its own before a plain matvec: every workgroup reading x and
    // the norm's weights (16 KB a workgroup from L2 on the 1B, 32 on the 8B) had cost more than the extra dispatch.
    // H100 decode (2026-11-28-h100-session14.md, S3): 1B q4_k_m 944 -> 952 tok/s (head 0.119 -> 0.102 ms), 1B f16
    // 669 -> 674 (0.195 -> 0.177), 8B q4_k_m even (264). More rows a workgroup than these lost (8: 0.112 ms, 16:
    // 0.163 on the 1B). BLUESHIFT_HEAD_NORM_APART=0 folds the norm into the matvec again.
    // On the H200 (2026-11-28-h200-session17.md, R3) the Q6_K heads streamed fastest at 2 rows as well, isolated
    // (128256x2048: 91.9 us against 96.0 at 4; 128256x4096: 171.8 against 180.0) and in the model (1B q4_k_m head
    // 0.098 -> 0.095 ms, decode 943.5 -> 946.6 tok/s; 8B 0.185 -> 0.179 ms, 260.1 -> 260.5): 2 rows for every dtype.
    // Then a Q6_K head got matvec_q6k_wide, parts of 64 weights in 16-byte loads (session 29, P1-P2), which streams
    // fastest at 4 rows: isolated 81.7 us (128256x2048) and 150.0 (x4096) on the H200, against 94.5 and 170+ at 2; in
    // the model the 1B q4_k_m head 0.093 -> 0.090 ms (decode 1163.4 -> 1166.1 tok/s), the 8B's 0.178 -> 0.167 (322.9
    // -> 324.3), where the same kernel at 2 rows lost (0.100, 0.188). So Q6_K heads take it at 4 rows, the others 2.
    // Since session 33 (R4) a Q6_K head takes x normed straight into quantize_x_q8's form (two int8 levels,
    // int_dot.glsl; rms_norm_q8x) and matvec_q6k_wide_i8, where the device has integer dot products: the float form
    // was bound by its math (the loads alone took 62.5 us of its 81.9 on the 1B's head, isolated), and the int8 one
    // took 67.8 us (1B) and 125.4 (8B) against 81.9 and 151.8. BLUESHIFT_HEAD_I8=0 keeps the float form.
    static const uint32_t head_wg = env_uint("BLUESHIFT_HEAD_WG", 32);
    const bool apart = head_norm_apart_;
    const bool wide = apart && head.dtype == DType::Q6_K && kernels_.has("matvec_q6k_wide");  // the plain matvec's
    const bool i8 = wide && head_i8_;
    const uint32_t head_rows = env_uint("BLUESHIFT_HEAD_ROWS", wide ? 4 : 2);
    if (apart) {
      const uint32_t m = uint32_t(head.shape[0]), k = uint32_t(head.shape[1]);
      const uint32_t rows = matvec_rows(m, cpu ? 0 : head_rows), inv = cpu || wg_override ? matvec_wg(head.dtype, k) : head_wg;
      BindGroupEntry x_in = {1, &xn_, 0, uint64_t(k) * 4};
      if (i8) {
        // The norm straight into the int8 form (rms_norm_q8x): no f32 row between them. The persistent kernel ends
        // with it where it can (PersistentDecode::head_norm; on the H200 1B q4_k_m 1,281 -> 1,287 tok/s: session 33,
        // R8).
        const Weight& on = *find("output_norm");
        const uint64_t xq_bytes = uint64_t(k) / 256 * 640;
        if (!(skip & 2u) && !(persistent && persistent_->head_norm()))
          dispatch("rms_norm_q8x", {{0, wg}},
                   {{0, &x_, first * 4, uint64_t(k) * 4}, {1, &on.buffer}, {2, &xq_, 0, xq_bytes}},
                   RmsNormParams{k, 1, c.norm_eps, c.norm_offset ? 1.0f : 0.0f}, 1, 1, "rms_norm");
        x_in = {1, &xq_, 0, xq_bytes};
      } else if (!(skip & 2u)) {
        rms(x_, first, *find("output_norm"), xn_, 0, c.dim, 1, false);
      }
      // Greedy decode (Recording::argmax_keys): the argmax folded into the head (matvec.glsl MV_ARGMAX), where a
      // workgroup's rows lie in one slice of keys.
      std::string kernel = i8 ? "matvec_q6k_wide_i8" : wide ? "matvec_q6k_wide" : weight_kernel("matvec", head.dtype);
      std::vector<BindGroupEntry> e = {{0, &head.buffer}, x_in, {2, &logits_, 0, uint64_t(m) * 4}};
      // BLUESHIFT_HEAD_ARGMAX=0 keeps the argmax_parts dispatch (A/B runs).
      static const bool head_argmax = env_uint("BLUESHIFT_HEAD_ARGMAX", 1) != 0;
      const bool fold_argmax = head_argmax && rec.argmax_keys && M == 1 && kArgmaxSliceRows % rows == 0;
      if (fold_argmax && kernels_.has(kernel + "_argmax")) {
        kernel += "_argmax";
        e.push_back({10, rec.argmax_keys});
        rec.head_argmax = true;
      }
      dispatch(kernel, {{0, inv}, {1, rows}}, e, MatvecParams{m, k, 1, 0}, (m + rows - 1) / rows, 1,
               shape_label("matvec", head));
    } else {
      normed_matvec(*find("output_norm"), head, logits_, cpu ? 0 : head_rows, cpu || wg_override ? 0 : head_wg);
    }
  } else {
    rms(x_, first, *find("output_norm"), xn_, 0, c.dim, L, false);
    matmul(head, xn_, 0, logits_, L, false);
  }
  if (c.final_softcap > 0) {
    uint32_t n = L * uint32_t(c.vocab);
    dispatch("softcap_f32", {}, {{0, &logits_, 0, uint64_t(n) * 4}}, SoftcapParams{n, c.final_softcap, 0, 0},
             grid_x(n), grid_y(n), "softcap");
  }
  if (!pending_planes.empty()) flush_pending();  // outputs no dispatch read after their GEMMs: whole after the forward
}

std::optional<SamplerEmbed> Model::sampler_embed() {
  // BLUESHIFT_SAMPLER_EMBED=0 keeps the embed dispatch in every decode step (A/B runs).
  static const bool on = env_uint("BLUESHIFT_SAMPLER_EMBED", 1) != 0;
  const Weight& embed = *find("embed");
  const auto ranges = row_ranges(embed);
  const std::string kernel = "sample_parts_" + weight_kernel("embed", embed.dtype);
  if (!on || ranges.size() != 1 || !kernels_.has(kernel)) return std::nullopt;
  const auto [r0, r1] = ranges.front();
  return SamplerEmbed{kernel,
                      {11, &embed.buffer, range_offset(embed, r0), range_bytes(embed, r0, r1)},
                      {12, &x_, 0, uint64_t(cfg_.dim) * 4},
                      kparams::EmbedParams{uint32_t(cfg_.dim), 1, cfg_.embed_scale, r0}};
}

std::vector<float> Model::prefill(std::span<const int32_t> tokens, int32_t pos0, bool all_rows) {
  return forward_tokens(tokens, pos0, all_rows, false);
}

std::vector<float> Model::forward_tokens(std::span<const int32_t> tokens, int32_t pos0, bool all_rows,
                                         bool logits_only) {
  if (tokens.empty()) fail("prefill: no tokens");
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= cfg_.vocab)
      fail_kind(ErrorKind::usage, "token {} (at index {}) is outside the vocabulary of {}", tokens[i], i, cfg_.vocab);
  if (pos0 + int64_t(tokens.size()) > max_ctx_)
    fail_kind(ErrorKind::resources, "prompt of {} tokens at position {} exceeds the context of {} tokens", tokens.size(),
              pos0, max_ctx_);
  int32_t chunk = all_rows ? std::min(max_batch_, logits_rows_) : max_batch_;
  std::vector<float> out;
  for (size_t done = 0; done < tokens.size(); done += chunk) {
    int32_t n = int32_t(std::min<size_t>(chunk, tokens.size() - done));
    std::vector<uint32_t> ids(tokens.begin() + done, tokens.begin() + done + n);
    Recording rec;
    rec.long_context = n == 1 && pos0 + int64_t(done) >= long_context_from();  // as the decode loop records it
    auto enc = device_.createCommandEncoder("prefill");
    uint32_t st[2] = {ids.back(), uint32_t(pos0 + done)};
    enc.writeBuffer(state_, 0, st, sizeof st);
    enc.writeBuffer(tokens_, 0, ids.data(), ids.size() * 4);
    record_forward(enc, n, rec, nullptr, nullptr, logits_only);
    auto cb = enc.finish();
    device_.queue().wait(device_.queue().submit(cb));
    bool last = done + n == tokens.size();
    if (all_rows || last) {
      int32_t L = std::min(n, logits_rows_);
      int32_t keep = all_rows ? L : 1;
      std::vector<float> part(size_t(keep) * cfg_.vocab);
      device_.queue().readBuffer(logits_, uint64_t(L - keep) * cfg_.vocab * 4, part.data(), part.size() * 4);
      out.insert(out.end(), part.begin(), part.end());
    }
  }
  return out;
}

std::vector<float> Model::last_hidden() {
  std::vector<float> h(cfg_.dim);
  device_.queue().readBuffer(x_, uint64_t(last_rows_ - 1) * cfg_.dim * 4, h.data(), h.size() * 4);
  return h;
}

std::vector<float> Model::last_normed() {
  std::vector<float> h(cfg_.dim);
  int32_t L = std::min(last_rows_, logits_rows_);
  device_.queue().readBuffer(xn_, uint64_t(L - 1) * cfg_.dim * 4, h.data(), h.size() * 4);
  return h;
}

std::vector<float> Model::weight_row(const std::string& name, int64_t row) {
  const Weight* w = find(name);
  if (!w || w->shape.size() != 2 || row < 0 || row >= w->shape[0]) fail("weight_row: no row {} in {}", row, name);
  // Rows padded to whole blocks (Q4_K "row" layout) are dequantized whole, then cut to their length.
  const uint64_t rb = gpu_row_bytes(w->dtype, uint64_t(w->shape[1])), blocks = padded_blocks(w->dtype, uint64_t(w->shape[1]));
  std::vector<uint8_t> raw(rb);
  device_.queue().readBuffer(w->buffer, uint64_t(row) * rb, raw.data(), raw.size());
  // Q6_K's GPU blocks (224 bytes) back to GGML's (210): the first 210 bytes of each.
  const uint64_t gb = gpu_block_bytes(w->dtype), sb = traits(w->dtype).block_bytes;
  for (uint64_t b = 1; gb != sb && b < blocks; ++b) std::memmove(raw.data() + b * sb, raw.data() + b * gb, sb);
  std::vector<float> out(blocks * traits(w->dtype).block_elems);
  dequantize_row(w->dtype, raw.data(), out.data(), int64_t(out.size()));
  out.resize(size_t(w->shape[1]));
  return out;
}

std::vector<float> Model::decode(int32_t token, int32_t pos) {
  auto out = forward_tokens(std::span(&token, 1), pos, false, true);
  if (persistent_) persistent_->check();  // a grid that was not resident at once gives wrong logits
  return out;
}

}  // namespace bs::model
