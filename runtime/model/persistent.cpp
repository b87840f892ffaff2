#include "runtime/model/persistent.h"

#include <algorithm>
#include <cstdlib>

#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/model/model.h"

namespace bs::model {

using namespace kparams;

namespace {

// The kernel's dtype code for a weight of `k` columns, or -1 where its decoder does not cover it
// (rows padded to whole blocks, F16 rows that are not 16-byte aligned).
int dtype_code(DType t, int64_t k) {
  switch (t) {
    case DType::F16: return k % 8 == 0 ? int(kPkF16) : -1;
    case DType::Q8_0: return k % 32 == 0 ? int(kPkQ8_0) : -1;
    case DType::Q4_K: return k % 256 == 0 ? int(kPkQ4K) : -1;
    case DType::Q6_K: return k % 256 == 0 ? int(kPkQ6K) : -1;
    default: return -1;
  }
}

void put_addr(std::vector<uint32_t>& t, size_t at, uint64_t a) {
  t[at] = uint32_t(a);
  t[at + 1] = uint32_t(a >> 32);
}

}  // namespace

std::string q4k_dot_kernel(const gpu::KernelCache& kernels, const std::string& base) {
  const char* e = std::getenv("BLUESHIFT_Q4K_DOT");
  std::string_view v = e ? e : "half";
  if (v != "float" && v != "int" && v != "intmx" && v != "half")
    fail_kind(ErrorKind::usage, "BLUESHIFT_Q4K_DOT={}: expected float, int, intmx or half", v);
  std::string k = base + (v == "int" ? "_i8" : v == "intmx" ? "_i8mx" : v == "half" ? "_h16" : "");
  return kernels.has(k) ? k : base;
}

std::shared_ptr<PersistentDecode> PersistentDecode::create(Model& m, std::string* why) {
  auto no = [&](std::string reason) -> std::shared_ptr<PersistentDecode> {
    if (why) *why = std::move(reason);
    return nullptr;
  };
  const ModelConfig& c = m.cfg_;
  gpu::Device& dev = m.device_;
  const auto& ad = dev.adapter();
  const std::string q4k_kernel = q4k_dot_kernel(m.kernels_, "decode_persistent");  // first: a bad value is an error anywhere
  if (env_switch("BLUESHIFT_NO_PERSISTENT")) return no("BLUESHIFT_NO_PERSISTENT is set");
  // Default: GPUs, except F16 layers. Measured on the H100 (benchmarks/results/2026-11-24-h100-session6.md, Q3, Q5,
  // Q6): 8B q4_k_m 214 -> 243 tok/s, 1B q4_k_m 806-811 -> 817-821 since the grid barrier's rework (before it the 1B
  // lost: 803 -> 765), but 1B F16 656 -> 615 (still so in 2026-11-25-h100-session8.md R9: 647 per-phase vs 596 at 384
  // invocations, 616 at 512). On the H200 (2026-11-28-h200-session17.md, R2) the per-phase path also won the 8B F16
  // (167.1 -> 175.7 tok/s; its F16 matvecs scale with bandwidth, the kernel's phases did not), while the kernel kept
  // the q4_k_m rows (1B 909 against 861, 8B 256 against 226) and lost the 1B F16 (671 against 767). On lavapipe one
  // workgroup runs every layer on one thread. BLUESHIFT_PERSISTENT=1 takes it wherever it can run.
  const bool forced = env_switch("BLUESHIFT_PERSISTENT");
  if (!forced && ad.type == "cpu") return no("off by default on CPU devices (BLUESHIFT_PERSISTENT=1 forces it)");
  if (!dev.hasBufferDeviceAddress()) return no("the device has no buffer device addresses");
  if (!m.kernels_.has("decode_persistent")) return no("the kernel set has no decode_persistent");
  if (c.qk_norm || c.sandwich_norm || c.attn_softcap > 0) return no("q/k norms, sandwich norms or softcaps");
  if (c.moe() || c.attn_sinks || c.attn_out_bias) return no("mixture-of-experts layers, attention sinks or an o_proj bias");
  // Llama-family layers only: no hybrid layers, per-layer shapes, gates, partial rotary or f32 KV cache.
  if (!c.layer_kinds.empty() || !c.layer_head_dims.empty() || !c.layer_kv_heads.empty() || !c.layer_ffn_dims.empty() ||
      c.attn_output_gate || c.rot_dim() != c.head_dim || c.rope.partial_factor != 1.0f || c.v_norm || c.v_from_k ||
      c.kv_shared_layers || c.layer_scalar || c.ple_dim || m.opts_.kv_f32)
    return no("a layer other than the llama family's (hybrid, Gemma 4, partial rotary or an f32 KV cache)");
  if (c.head_dim % 4 != 0 || c.head_dim > 256 || c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0)
    return no("head_dim or the head counts");

  // The grid: as many workgroups as are surely resident at once. One workgroup (384-640 wide, below) per
  // multiprocessor on NVIDIA (the SM count from VK_NV_shader_sm_builtins); 1 on a CPU device
  // (lavapipe runs the workgroups of a dispatch on its thread pool; one needs no other to progress).
  auto pk = std::shared_ptr<PersistentDecode>(new PersistentDecode(m));
  const bool cpu = ad.type == "cpu";
  uint32_t grid = env_uint("BLUESHIFT_PERSISTENT_GRID", 0);
  if (!grid) grid = cpu ? 1 : ad.sm_count;
  if (!grid) return no("the number of resident workgroups is unknown (no SM count; set BLUESHIFT_PERSISTENT_GRID)");
  // 512 invocations; up to hidden size 2048, 384 unless only 512 makes the teams' round whole (below). On the H100
  // (2026-11-25-h100-session8.md, R5-R6) 384 took the 1B q4_k_m from 854 to 889 tok/s and the 8B from 251 to 202
  // (f16 138 -> 115); 448 and 320 lost on both. On the H200 (session 24, J2) 512 lost 11% on qwen2.5-1.5b and won
  // 1.5% on the 1B; with teams (below) it wins 8.9% there.
  //
  // Teams of 2 subgroups in the o and down phases (decode_persistent.comp add_matvec: a task's columns split over two
  // subgroups, half its dependent load steps) where the dim / 2 tasks then still take one round of the grid's teams;
  // a second round costs what the split saves (1B at 384: TEAM 2 would be 2 rounds of 4 steps against 1 of 8). Up
  // to hidden size 2048, 512 invocations where only 512 makes the round whole: the 1B (1024 tasks: 1056 teams at
  // 512, 792 at 384). BLUESHIFT_PERSISTENT_WG and BLUESHIFT_PERSISTENT_TEAM=N (N dividing the workgroup's
  // subgroups) override.
  //
  // Above hidden size 2048, 640 where its 20 subgroups take the gate/up phase's ffn_dim tasks in fewer rounds of the
  // grid than 512's 16, else 512. At 640 the driver caps the kernel at 96 registers (an SM's 65,536 over 20 warps); it
  // takes 112-115 at 512, and fits 96 without spilling (session 27, M3-M4). The cap costs each round: the 3B (8,192
  // tasks: 4 rounds either way) lost 1.8% at 640 and the 1B 2.4%; the 8B (14,336: 7 rounds at 512, 6 at 640) gained
  // 5.9%, and qwen2.5-7b (18,944: 9 and 8) 6.6% (M6). Widths of 672-736 would take a round more off, but the driver
  // caps them at 80 registers (it seems to count warps in fours, one a scheduler), where the kernel spills: the 8B
  // lost 2-7% (M5).
  const uint32_t sgs = ad.subgroup_size ? ad.subgroup_size : 32, tasks = uint32_t(c.dim + 1) / 2;
  auto teams = [&](uint32_t w, uint32_t t) { return uint64_t(grid) * (w / sgs / t); };  // the grid's, at width w
  auto one_round = [&](uint32_t w, uint32_t t) { return teams(w, t) >= tasks; };
  auto ffn_rounds = [&](uint32_t w) { return (uint64_t(c.ffn_dim) + teams(w, 1) - 1) / teams(w, 1); };
  uint32_t wg_default = cpu ? 64
                        : c.dim > 2048 ? (ffn_rounds(640) < ffn_rounds(512) ? 640 : 512)
                        : !one_round(384, 2) && one_round(512, 2) ? 512
                                                                  : 384;
  uint32_t wg = env_uint("BLUESHIFT_PERSISTENT_WG", wg_default);
  wg = std::min(wg, ad.max_workgroup_invocations);
  if (wg < 32 || wg % 32 != 0 || uint32_t(c.head_dim / 4) > wg) return no("workgroup size");
  // The workgroup reductions keep one value a subgroup in arrays of MAX_SUBGROUPS (common.glsl: 64); lavapipe's
  // subgroups of 8 pass it above 512 invocations (1024 gave rel L2 1.1-1.4 against the per-phase decode).
  if (wg / sgs > 64)
    return no(fmt::format("workgroup size {}: {} subgroups of {}, more than the 64 its reductions hold", wg, wg / sgs, sgs));
  pk->grid_ = grid;
  pk->wg_ = wg;

  // Q4_K rows on packed f16 (decode_persistent_h16, the default) or integer dot products (_i8, _i8mx) where the
  // device can and a layer has Q4_K matrices (elsewhere their staged slots would only take shared memory).
  bool any_q4k = false, o_q4k = true, any_q6k_down = false;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    if (const Weight* w = m.find(fmt::format("blk.{}.ffn_down", l)); w && w->dtype == DType::Q6_K) any_q6k_down = true;
    for (const char* s : {"attn_q", "attn_k", "attn_v", "attn_out", "ffn_gate", "ffn_up", "ffn_down"})
      if (const Weight* w = m.find(fmt::format("blk.{}.{}", l, s)); w && w->dtype == DType::Q4_K) any_q4k = true;
    const Weight* o = m.find(fmt::format("blk.{}.attn_out", l));
    o_q4k = o_q4k && o && o->dtype == DType::Q4_K;
  }
  bool q4k_slots = any_q4k && q4k_kernel != "decode_persistent";

  // Invocations a position in attention's scores (decode_persistent.comp TPP): a block of positions is wg / TPP long,
  // and an invocation loads head_dim / 4 / TPP pieces of a key row. 2 where head_dim is at most 64 (8 pieces), else 4.
  // On the H200 (benchmarks/results/2026-11-30-h200-session40.md, W12), q4_k_m: the 1B (head_dim 64) +1.9% at 512 + 128
  // and +5.0% at 4,096 + 128 with 2 against 4 (1: +1.2%, +1.5%); the 8B (head_dim 128) -2.3% and -1.3% with 2. Where
  // an item is one block either way, a longer block only costs more: Qwen2.5-0.5B's shape (14 heads, 57-72 positions an
  // item at 512 + 128) -0.9% there, +2.8% at 4,096 (W14). BLUESHIFT_PERSISTENT_ATTN_TPP=1|2|4 fixes it.
  const uint32_t tpp_env = env_uint("BLUESHIFT_PERSISTENT_ATTN_TPP", 0);
  const uint32_t attn_tpp = tpp_env == 1 || tpp_env == 2 || tpp_env == 4 ? tpp_env : c.head_dim <= 64 ? 2 : 4;
  // Staging floats: what shared memory holds beside the kernel's other arrays (s_part: 16 B per
  // invocation, s_q 1 KiB, s_sc 4 / TPP B per invocation, bs_red 256 B, s_tbl two rows of the layer table, slack).
  // The down projection's input (ffn_dim) may exceed it: it is staged in passes of whole 256-column blocks.
  // sx4 holds SH / 4 + SH / 64 + 1 vec4s (one of skew per 16: decode_persistent.comp): 4.25 bytes a float.
  // The int8 and f16 slots add 40 bytes per 16 floats (int8: q1, q2, d and sum; f16: the values, scale and sum), for
  // ceil(SH / 256) blocks (640 bytes cover the rounding up): 6.75 bytes a float. Where dim or q_dim then no longer
  // fits, the float decode.
  const uint32_t need = uint32_t(std::max({c.dim, c.q_dim(), c.ffn_dim}) + 3) & ~3u;
  auto staging = [&](bool with_slots) -> uint32_t {
    const uint64_t other =
        16ull * wg + 1024 + 4ull * wg / attn_tpp + 256 + 8 * kPkStride + 256 + (with_slots ? 640 : 0);
    if (ad.max_shared_memory <= other + 16) return 0;
    uint32_t cap = uint32_t((ad.max_shared_memory - other - 16) * 4 / (with_slots ? 27 : 17)) & ~3u;
    uint32_t sh = std::min(cap, need);
    return uint32_t(std::max(c.dim, c.q_dim())) > sh || (sh < uint32_t(c.ffn_dim) && sh < 256) ? 0 : sh;
  };
  uint32_t sh = q4k_slots ? staging(true) : 0;
  if (!sh) {
    q4k_slots = false;
    sh = staging(false);
  }
  if (!sh) return no("dim or q_dim exceeds the shared staging area");
  pk->kernel_ = q4k_slots ? q4k_kernel : "decode_persistent";
  pk->staging_ = sh;
  // The o projection folded into the attention phase (decode_persistent.comp PK_FOLD_O, the _fold variants): one grid
  // barrier a layer fewer, the head groups' sums added into x by float atomics in any order, so on a GPU the logits
  // differ from run to run at the h16 kernel's rounding level (4e-3 rel L2). Where W_o is Q4_K in every layer, head_dim
  // divides 256 (a group of heads is one block column) and the device adds floats atomically. On the H200
  // (benchmarks/results/2026-11-29-h200-session30.md, Q3-Q4), against no fold: 1B q4_k_m 1162 -> 1215 tok/s, 8B 323 ->
  // 336, 3B 542 -> 583. BLUESHIFT_PERSISTENT_FOLD_O=0 or ModelOptions::deterministic (`--deterministic`) keeps the o
  // phase (a bitwise reproducible decode).
  const uint32_t hd = uint32_t(c.head_dim), fold_heads = hd <= 256 && 256 % hd == 0 ? 256 / hd : 0;
  if (!m.opts_.deterministic && env_uint("BLUESHIFT_PERSISTENT_FOLD_O", 1) && o_q4k && fold_heads &&
      uint32_t(c.n_heads) % fold_heads == 0 &&
      uint32_t(c.n_heads) / fold_heads <= kPkMaxGroups && dev.has_atomic_float_add() &&
      m.kernels_.has(pk->kernel_ + "_fold"))
    pk->kernel_ += "_fold";
  // Who polls at a grid barrier (decode_persistent.comp): one invocation per workgroup, or every
  // invocation with BLUESHIFT_PERSISTENT_POLL_ALL=1 (A/B runs).
  uint32_t poll_all = env_uint("BLUESHIFT_PERSISTENT_POLL_ALL", 0) ? 1 : 0;
  // Polls by volatile load on GPUs, by atomic on lavapipe (whose LLVM hoists the volatile load);
  // BLUESHIFT_PERSISTENT_POLL_LOAD=0|1 overrides.
  uint32_t poll_load = env_uint("BLUESHIFT_PERSISTENT_POLL_LOAD", cpu ? 0 : 1) ? 1 : 0;
  // Who fences before a grid barrier: invocation 0 for its workgroup after the workgroup barrier (0), or
  // every invocation (1); BLUESHIFT_PERSISTENT_FENCE_ALL=0|1. 0 relies on a fence after a workgroup barrier
  // covering the workgroup's earlier writes, which NVIDIA's memory model gives (CUDA's grid sync is built
  // on it) and Vulkan's legacy barriers do not promise: the default on NVIDIA only (1B decode kernel 1.029
  // -> 1.025 ms, 8B 3.959 -> 3.917 on the H100, 2026-11-24-h100-session6.md).
  constexpr uint32_t kNvidia = 0x10DE;
  uint32_t fence_all = env_uint("BLUESHIFT_PERSISTENT_FENCE_ALL", ad.vendor_id == kNvidia ? 0 : 1) ? 1 : 0;
  // Q4_K parts per lane per step (decode_persistent.comp dot2): 1 for the f16 and integer forms, 2 for the float
  // form; BLUESHIFT_PERSISTENT_PARTS=1..4 for A/B runs. On the H200 the f16 form's PARTS 1 ran +1.3% (1B), +0.6%
  // (8B), +2.8% (3B) ahead of 2, and with PIPE the int form's 1B +5.1%, 8B +6.9%; the float form's lost 1-2%
  // (2026-11-28-h200-session23.md, H1-H4). (The float form at 4: 8B kernel 4.2 -> 6.8 ms on the H100; session 6 Q2.)
  uint32_t parts = std::clamp(env_uint("BLUESHIFT_PERSISTENT_PARTS", q4k_slots ? 1 : 2), 1u, 4u);
  // The o and down phases' residual rows read before their dot products (default; BLUESHIFT_PERSISTENT_X_EARLY=0
  // for A/B runs: the same sums).
  uint32_t x_early = env_uint("BLUESHIFT_PERSISTENT_X_EARLY", 1) ? 1 : 0;
  // BLUESHIFT_PERSISTENT_SKIP (timing breakdowns only: decode_persistent.comp p.skip; benchmarks/persistent_phases.sh):
  // bits 0-4 the phases' work, 5 all staging, 7 the norms' staging, 8 P5's. Its bit 6 (the matvecs' weight loads without
  // their math) is a spec constant, so the kernel that runs without it is the one measured.
  const uint32_t skip = env_uint("BLUESHIFT_PERSISTENT_SKIP", 0), loads_only = skip & 64u ? 1 : 0;
  // BLUESHIFT_PERSISTENT_PROBE=MASK: parts of the matvec task taken away one at a time (decode_persistent.comp PROBE;
  // timing breakdowns only, wrong logits).
  const uint32_t probe = env_uint("BLUESHIFT_PERSISTENT_PROBE", 0) & 511u;
  // A task's two row sums in one butterfly (decode_persistent.comp pair_sum); BLUESHIFT_PERSISTENT_PAIR_SUM=0: two
  // subgroupAdds (A/B runs).
  const uint32_t pair_sum = env_uint("BLUESHIFT_PERSISTENT_PAIR_SUM", 1) ? 1 : 0;
  // Q4_K rows load a step ahead of their math (decode_persistent.comp PIPE) at one part a step;
  // BLUESHIFT_PERSISTENT_PIPE=0|1 for A/B runs. The f16 form at PARTS 1: 1B +1.0%, 8B +0.8%, 3B -0.2%; at PARTS 2
  // (twice the registers) it lost 2.5-8.5% (H2).
  const uint32_t pipe = env_uint("BLUESHIFT_PERSISTENT_PIPE", parts == 1 ? 1 : 0) ? 1 : 0;
  // Subgroups a team in the o and down phases (above, with the workgroup's width): 2 where the tasks fit one round,
  // else 1. On the H200 (session 24, J1-J3): against TEAM 1, the 1B at 512 wide TEAM 2 +7.3%, TEAM 4 (2 rounds) +0.8%;
  // at 384 TEAM 3 -8%, TEAM 4 -5%; 3B TEAM 4 -5%. These defaults against 384 wide TEAM 1: 1B q4_k_m 1022.4 -> 1113.0
  // tok/s (+8.9%), qwen2.5-1.5b 595.6 -> 634.4 (+6.5%); the 3B and 8B unchanged. Under SPREAD (below) the 1B's TEAM 1
  // runs even with TEAM 2 (1156.5 against 1155.8 and 1153.0 tok/s; session 26, L3): what TEAM 2 had bought was the
  // balance across SMs (TEAM 1 without SPREAD gave 1,024 tasks to 64 of the 132 workgroups), which SPREAD now gives.
  // The 8B at TEAM 2 (two rounds) lost 7.6% (L3).
  uint32_t team = std::max(1u, env_uint("BLUESHIFT_PERSISTENT_TEAM", !cpu && one_round(wg, 2) ? 2 : 1));
  if (ad.subgroup_size == 0 || (wg / ad.subgroup_size) % team != 0) team = 1;
  // The gate/up phase's Q4_K tasks as one stream of steps a subgroup, the next task's loads issued in the last step of
  // the one before (decode_persistent.comp STREAM); BLUESHIFT_PERSISTENT_STREAM=0|1 for A/B runs.
  const uint32_t stream = env_uint("BLUESHIFT_PERSISTENT_STREAM", 1) ? 1 : 0;
  // That stream's first loads issued between the arrival and the wait at the grid barrier that opens the phase
  // (decode_persistent.comp EARLY 2); BLUESHIFT_PERSISTENT_EARLY=0|1|2 for A/B runs (1: before the phase's staging, 0:
  // after it). On the H200 (2026-11-29-h200-session25.md, K3, K6), against 0: 1 gave the 8B q4_k_m +0.5%, the 1B -0.4%,
  // qwen2.5-1.5b and the 3B even; 2 gave the 1B +1.2% (1145.3 against 1132.0 at 0 and 1126.5 at 1), the 8B +0.9% (299.5
  // against 296.8), qwen2.5-1.5b +0.7% and the 3B +0.9% (K7), with logits identical.
  const uint32_t early = std::min(env_uint("BLUESHIFT_PERSISTENT_EARLY", 2), 2u);
  // Grid-stride tasks dealt across the workgroups first (decode_persistent.comp SPREAD), so that a phase's last round
  // is spread over every SM; BLUESHIFT_PERSISTENT_SPREAD=0|1 for A/B runs. On the H200 (2026-11-29-h200-session26.md,
  // L2), against 0: 1B q4_k_m +1.2%, 8B +1.8%, qwen2.5-1.5b +1.5%, 3B +6.1%, logits identical; the 8B's q/k/v phase
  // 0.369 -> 0.313 ms a step.
  const uint32_t spread = env_uint("BLUESHIFT_PERSISTENT_SPREAD", 1) ? 1 : 0;
  // Q6_K down projections on the f16 slots (decode_persistent.comp Q6K_SLOTS, pk_down_on_slots): the kernel's slot form
  // of q6k_dot2 only where a layer takes it.
  const bool h16 = q4k_kernel.find("_h16") != std::string::npos;
  const uint32_t q6k_slots =
      any_q6k_down && pk_down_on_slots(sh, uint32_t(c.ffn_dim), q4k_slots, h16, kPkQ6K) ? 1 : 0;
  // RMSNorm straight into the slots where a phase's matrices are all Q4_K (decode_persistent.comp NORM_SLOTS), where
  // dim's slots fit one a workgroup invocation. On the H200: 1B kernel -1.8%, 8B -0.1% (session 33, R1).
  const bool norm_fits = q4k_slots && uint32_t(c.dim) % 256 == 0 && uint32_t(c.dim) / 16 <= wg;
  // 2 (the default) takes P1's layers with some q/k/v not Q4_K (Q4_K_M's Q6_K v) the same way, the floats staged beside
  // the slots; BLUESHIFT_PERSISTENT_NORM_SLOTS=1 keeps those on the two-pass stage_norm (A/B runs).
  const uint32_t norm_slots = norm_fits ? std::min(env_uint("BLUESHIFT_PERSISTENT_NORM_SLOTS", 2), 2u) : 0;
  pk->norm_slots_ = norm_slots != 0;
  // The output norm into the int8 form the Q6_K head reads, after a last grid barrier (decode_persistent.comp
  // HEAD_Q8X), where the head takes it (Model's head_i8_); BLUESHIFT_PERSISTENT_HEAD_NORM=0 leaves it to rms_norm_q8x.
  const uint32_t head_q8x = m.head_i8_ && env_uint("BLUESHIFT_PERSISTENT_HEAD_NORM", 1) ? 1 : 0;
  pk->head_norm_ = head_q8x != 0;
  // BLUESHIFT_PERSISTENT_EXTRA_SYNC=N: N extra synchronizations at each layer's end (decode_persistent.comp EXTRA_SYNC;
  // timing breakdowns only: what a grid barrier, a count or a fence costs inside the kernel).
  const uint32_t extra_sync = env_uint("BLUESHIFT_PERSISTENT_EXTRA_SYNC", 0) & 0x3FFu;
  // Grid barriers that poll the arrival count, not a release word the last arriver raises (decode_persistent.comp
  // POLL_COUNT: a round trip less a barrier). On the H200, where a grid barrier costs 1.3-1.5 us inside the kernel
  // (session 36, T1): 1B q4_k_m +3.6%, 3B +2.0%, 8B +0.6% (T2). BLUESHIFT_PERSISTENT_POLL_COUNT=0 for A/B runs.
  const uint32_t poll_count = env_uint("BLUESHIFT_PERSISTENT_POLL_COUNT", 1) ? 1 : 0;
  // The running layer's row of the layer table read from shared memory (decode_persistent.comp TBL_SMEM), not from
  // binding 0: no L2 round trip ahead of a phase's first weight loads. On the H200 1B q4_k_m +1.7%, 3B +1.4%, 8B +1.4%
  // (session 37, U1). BLUESHIFT_PERSISTENT_TBL_SMEM=0 for A/B runs.
  const uint32_t tbl_smem = env_uint("BLUESHIFT_PERSISTENT_TBL_SMEM", 1) ? 1 : 0;
  // The q/k/v phase's tasks dealt so that a subgroup with two takes two q tasks (decode_persistent.comp QKV_ORDER).
  // BLUESHIFT_PERSISTENT_QKV_ORDER=0 for A/B runs (q, then k, then v).
  const uint32_t qkv_order = env_uint("BLUESHIFT_PERSISTENT_QKV_ORDER", 1) ? 1 : 0;
  // Register attribution only (wrong logits): p.skip's bits 0-5 at compile time (decode_persistent.comp STUB).
  const uint32_t stub = env_uint("BLUESHIFT_PERSISTENT_STUB", 0) & 63u;
  // The layer's cached K and V rows read into L2 in the wait after q/k/v, up to TOUCH words a lane, TOUCH_STEP bytes
  // apart (decode_persistent.comp TOUCH): on the H200, q4_k_m at 512 + 128 tokens, 1B +3.3%, 8B +2.1%; at 4,096 + 128
  // +13% and +11% (session 39, W5). BLUESHIFT_PERSISTENT_TOUCH=0 for A/B runs.
  const uint32_t touch = std::min(env_uint("BLUESHIFT_PERSISTENT_TOUCH", 8), 16u);
  const uint32_t touch_step = std::clamp(env_uint("BLUESHIFT_PERSISTENT_TOUCH_STEP", 32), 4u, 4096u) & ~3u;
  pk->spec_ = {{0, wg}, {1, sh}, {2, poll_all}, {3, poll_load}, {4, fence_all}, {5, parts}, {6, x_early}, {7, loads_only},
               {8, probe}, {9, pair_sum}, {10, pipe}, {11, team}, {12, stream}, {13, early}, {14, spread},
               {15, q6k_slots}, {16, norm_slots}, {17, head_q8x}, {18, extra_sync}, {19, poll_count}, {20, tbl_smem},
               {21, qkv_order}, {22, stub}, {23, touch}, {24, touch_step}, {25, attn_tpp}};

  // Layer table.
  std::vector<uint32_t> tbl(size_t(c.n_layers) * kPkStride, 0);
  for (int32_t l = 0; l < c.n_layers; ++l) {
    if (c.kind(l) != LayerKind::attention) return no("a layer that is not attention");
    auto W = [&](const char* s) { return m.find(fmt::format("blk.{}.{}", l, s)); };
    size_t b = size_t(l) * kPkStride;
    put_addr(tbl, b + kPkAttnNorm, W("attn_norm")->buffer.deviceAddress());
    put_addr(tbl, b + kPkFfnNorm, W("ffn_norm")->buffer.deviceAddress());
    const std::pair<const char*, uint32_t> mats[] = {{"attn_q", kPkQ},     {"attn_k", kPkK},   {"attn_v", kPkV},
                                                     {"attn_out", kPkO},   {"ffn_gate", kPkGate}, {"ffn_up", kPkUp},
                                                     {"ffn_down", kPkDown}};
    for (auto [name, at] : mats) {
      const Weight* w = W(name);
      int code = dtype_code(w->dtype, w->shape[1]);
      if (code < 0) return no(fmt::format("blk.{}.{}: {} [{}, {}] has no persistent decoder", l, name, dtype_name(w->dtype),
                                          w->shape[0], w->shape[1]));
      if (!forced && code == int(kPkF16))
        return no("off by default for F16 layers (BLUESHIFT_PERSISTENT=1 forces it)");
      put_addr(tbl, b + at, w->buffer.deviceAddress());
      tbl[b + at + 2] = uint32_t(code);
      if (at == kPkDown) {  // decode_persistent.comp P5: the slot forms stage the slots of a Q4_K or Q6_K matrix, or
                            // another's floats, alone over all of smem
        const uint32_t ffn = uint32_t(c.ffn_dim);
        const bool on_slots = pk_down_on_slots(sh, ffn, q4k_slots, q6k_slots != 0, uint32_t(code));
        const uint32_t cols = pk_pass_cols(ffn, pk_down_cap(sh, ffn, q4k_slots, on_slots));
        pk->down_passes_[std::string(dtype_name(w->dtype))] = (ffn + cols - 1) / cols;
      }
    }
    if (tbl[b + kPkGate + 2] != tbl[b + kPkUp + 2]) return no("ffn_gate and ffn_up differ in dtype");
    put_addr(tbl, b + kPkKCache, m.kcache_[size_t(l)].deviceAddress());
    put_addr(tbl, b + kPkVCache, m.vcache_[size_t(l)].deviceAddress());
    if (c.qkv_bias) {
      put_addr(tbl, b + kPkBiasQ, W("attn_q_bias")->buffer.deviceAddress());
      put_addr(tbl, b + kPkBiasK, W("attn_k_bias")->buffer.deviceAddress());
      put_addr(tbl, b + kPkBiasV, W("attn_v_bias")->buffer.deviceAddress());
    }
    bool sliding = !c.layer_types.empty() && c.layer_types[size_t(l)] == AttentionType::sliding;
    tbl[b + kPkWindow] = sliding ? uint32_t(c.sliding_window) : 0u;
    tbl[b + kPkLocal] = sliding ? 1u : 0u;
  }

  // Attention: at most `splits` context chunks per head, about one item per workgroup.
  // BLUESHIFT_PERSISTENT_SPLITS=N fixes it (tests: several chunks on a grid of 1).
  uint32_t splits = std::max(1u, env_uint("BLUESHIFT_PERSISTENT_SPLITS", grid / uint32_t(c.n_heads)));
  auto& p = pk->params_;
  p = {uint32_t(c.n_layers), uint32_t(c.dim), uint32_t(c.q_dim()), uint32_t(c.kv_dim()), uint32_t(c.ffn_dim),
       uint32_t(c.n_heads), uint32_t(c.n_kv_heads), uint32_t(c.head_dim), splits, c.norm_eps,
       c.norm_offset ? 1.0f : 0.0f, c.act == Activation::silu ? 0u : 1u, c.softmax_scale(), 0, 0, 0, 0, 0, 0, 0};
  p.h_off = uint32_t(c.q_dim());
  p.part_off = p.h_off + uint32_t(c.ffn_dim);
  // A GPU polls an L2 line in ~0.3 us: 2^22 polls is ~1 s, far beyond any phase's length. A CPU polls
  // in ~1 ns and its threads share cores with other processes: 2^31 polls.
  p.spin_limit = env_uint("BLUESHIFT_PERSISTENT_SPINS", cpu ? 1u << 31 : 1u << 22);
  p.skip = skip;
  // Parts of W_o's rows a head group in the folded o projection: 0 shares the grid out over the groups;
  // BLUESHIFT_PERSISTENT_FOLD_PARTS=N fixes it (tests: several parts on a grid of 1).
  p.fold_parts = env_uint("BLUESHIFT_PERSISTENT_FOLD_PARTS", 0);
  if (head_q8x) {
    const uint64_t on = m.find("output_norm")->buffer.deviceAddress();
    p.out_norm_lo = uint32_t(on), p.out_norm_hi = uint32_t(on >> 32);
  }
  // The long-context recording's form (Model::long_context_from): attention items of a kv head's G query heads
  // together (decode_persistent.comp ATTN_GQA 1: every item grouped), each K and V piece loaded once for them, and G
  // times the chunks a head (p.splits is then the chunks of a kv head's items), so a long context's items are G times
  // shorter. Where G is 2-4 and the G heads' q rows fit the staging area. In the kernel with the plain items it cost
  // 1-3.5% at 512 + 128 where it was not taken (registers 113 -> 128 on the 1B; session 40, W11), so it is a pipeline of
  // its own, which only the long recording dispatches.
  const uint32_t group_heads = c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads == 0 ? uint32_t(c.n_heads / c.n_kv_heads) : 0;
  pk->has_long_ = group_heads >= 2 && group_heads <= 4 && group_heads * uint32_t(c.head_dim) <= sh;
  // BLUESHIFT_PERSISTENT_LONG_CHUNKS=N sets the chunks of a kv head's items in that form (A/B runs and tests; default
  // G x splits, one item a workgroup as in the plain form).
  uint32_t long_chunks = 0;
  if (pk->has_long_) {
    long_chunks = std::max(1u, env_uint("BLUESHIFT_PERSISTENT_LONG_CHUNKS", splits * group_heads));
    pk->long_spec_ = pk->spec_;
    pk->long_spec_.push_back({26, 1});
    pk->long_params_ = p;
    pk->long_params_.splits = long_chunks;
  }
  uint64_t scratch = uint64_t(p.part_off) + uint64_t(c.n_heads) * std::max(splits, long_chunks) * (c.head_dim + 2);

  using gpu::BufferUsage;
  pk->table_ = dev.createBuffer({tbl.size() * 4, BufferUsage::storage, "persistent layer table"});
  dev.queue().writeBuffer(pk->table_, 0, tbl.data(), tbl.size() * 4);
  pk->scratch_ = dev.createBuffer({scratch * 4, BufferUsage::storage, "persistent scratch"});
  pk->sync_ = dev.createBuffer({kPkSyncWords * 4, BufferUsage::storage, "persistent grid sync"});
  const std::vector<uint32_t> zero(kPkSyncWords, 0);
  dev.queue().writeBuffer(pk->sync_, 0, zero.data(), zero.size() * 4);
  return pk;
}

std::vector<gpu::BindGroupEntry> PersistentDecode::entries() const {
  return {{0, &table_},
          {1, &model_.x_, 0, uint64_t(params_.dim) * 4},
          {2, &scratch_},
          {3, &model_.state_},
          {4, &sync_},
          {5, &model_.inv_freq_global_},
          {6, &model_.inv_freq_local_},
          // HEAD_Q8X's output, bound so that the head's dispatch is ordered after this one (the scratch, which the
          // kernel writes anyway, where there is none).
          head_norm_ ? gpu::BindGroupEntry{7, &model_.xq_} : gpu::BindGroupEntry{7, &scratch_}};
}

void PersistentDecode::check() const {
  uint32_t error = 0;
  model_.device_.queue().readBuffer(sync_, uint64_t(kPkSyncError) * 4, &error, sizeof error);
  if (error != 0)
    fail_kind(ErrorKind::gpu,
              "persistent decode: a grid barrier timed out (grid {} x {} invocations not resident at once on {}); set "
              "BLUESHIFT_PERSISTENT_GRID lower or BLUESHIFT_NO_PERSISTENT=1",
              grid_, wg_, model_.device_.adapter().name);
}

}  // namespace bs::model
