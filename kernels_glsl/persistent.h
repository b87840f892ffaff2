// The persistent decode kernel's push constants and layer table, defined once for GLSL and C++
// (decode_persistent.comp, runtime/model/persistent.cpp). Every member is a 32-bit scalar.
#ifdef __cplusplus
#pragma once
#include <cstdint>
namespace bs::kparams {
using uint = uint32_t;
#define PK_FN inline
#else
#define PK_FN
#endif

struct PersistentParams {
  uint n_layers; uint dim; uint q_dim; uint kv_dim;
  uint ffn_dim; uint n_heads; uint n_kv_heads; uint head_dim;
  uint splits;     // attention: at most this many context chunks per head (partials per head)
  float eps; float offset; uint act;
  float scale;     // softmax scale
  uint h_off;      // scratch: q at 0, the FFN hidden h at h_off, attention partials at part_off
  uint part_off;
  uint spin_limit; // grid-barrier spins before a workgroup gives up and raises the error flag
  uint skip;       // timing breakdowns (BLUESHIFT_PERSISTENT_SKIP): bit i skips phase i + 1's work (5: staging, 6: math)
  uint fold_parts; // PK_FOLD_O: parts of W_o's rows a head group (0: the grid shared out over the groups)
  uint out_norm_lo; uint out_norm_hi;  // HEAD_Q8X: the output norm's weights (f32), as an address
};

// Layer table: kPkStride words per layer. Addresses are buffer device addresses as (lo, hi) words; a
// matrix entry is (lo, hi, dtype code, 0) with codes kPkF16.. below. Absent biases have address 0.
const uint kPkStride = 48u;
const uint kPkAttnNorm = 0u, kPkFfnNorm = 2u;
const uint kPkQ = 4u, kPkK = 8u, kPkV = 12u, kPkO = 16u, kPkGate = 20u, kPkUp = 24u, kPkDown = 28u;
const uint kPkKCache = 32u, kPkVCache = 34u;
const uint kPkBiasQ = 36u, kPkBiasK = 38u, kPkBiasV = 40u;
const uint kPkWindow = 42u;   // sliding window of the layer (0 = full causal)
const uint kPkLocal = 43u;    // 1: the layer's RoPE uses the local (sliding) inv_freq table
const uint kPkF16 = 0u, kPkQ8_0 = 1u, kPkQ4K = 2u, kPkQ6K = 3u;
const uint kPkQ6KSlots = 4u;  // not in the table: a Q6_K matrix against the f16 slots (decode_persistent.comp P5)
// Sync words (binding 4): arrivals at this dispatch's grid barriers (what the workgroups poll, POLL_COUNT), the last
// barrier released (on a line of its own; polled where POLL_COUNT is 0), the error flag (a barrier timed out:
// workgroups not co-resident), workgroups done (the last zeroes the three counts for the next dispatch).
// With the o projection folded into the attention phase (decode_persistent.comp PK_FOLD_O), one count a head group
// follows, each on a line of its own: the group's attention items done in this dispatch.
const uint kPkSyncArrive = 0u, kPkSyncError = 2u, kPkSyncDone = 3u, kPkSyncRelease = 32u;
const uint kPkSyncGroups = 64u, kPkSyncGroupStride = 32u, kPkMaxGroups = 64u;
const uint kPkSyncWords = kPkSyncGroups + kPkSyncGroupStride * kPkMaxGroups;

// Shared memory of the slot forms (decode_persistent.comp, PK_INT_DOT / PK_HALF_DOT): one uvec4 array, the Q4_K slots
// of `sh` staged floats first (a record of kPkSlotRec uvec4s a 256-column block), then the floats (a vec4 of skew per
// 16).
const uint kPkSlotRec = 40u;
#define PK_SX_AT(sh) (((sh) + 255u) / 256u * kPkSlotRec)
#define PK_SMEM_WORDS(sh) (PK_SX_AT(sh) + (sh) / 4u + (sh) / 64u + 1u)
// The down projection's columns a pass (P5) where `cap` columns fit: passes of equal size in whole 256-column blocks
// where cap holds one (the 8B's 14336 in 8960 + 5376 ran 1.7% slower than in 7936 + 6400:
// benchmarks/results/2026-11-28-h200-session21.md, F5), else cap columns a pass.
PK_FN uint pk_pass_cols(uint ffn, uint cap) {
  if (cap < 256u) return cap;
  uint np = (ffn + (cap & ~255u) - 1u) / (cap & ~255u);
  return ((ffn + np - 1u) / np + 255u) & ~255u;
}
// Floats (with their vec4 of skew per 16) that the slot forms' whole shared array holds, for `sh` staging floats.
PK_FN uint pk_smem_floats(uint sh) { return (PK_SMEM_WORDS(sh) - 1u) * 64u / 17u & ~3u; }
// Whether the down projection (dtype code dt) stages its f16 or int8 slots alone in P5, over the whole shared array:
// in the slot forms (`slots`) a Q4_K one always (the 8B's 14336 columns in 1 pass for 3: kernel -1.7%); a Q6_K one in
// the f16 form (`h16`) where its floats would take more than one pass (the 8B: 3 passes to 1, kernel -0.6%; its math on
// the slots costs where no pass is saved: the 1B +2.3%; benchmarks/results/2026-11-30-h200-session32.md, R1, R4).
PK_FN bool pk_down_on_slots(uint sh, uint ffn, bool slots, bool h16, uint dt) {
  return slots && (dt == kPkQ4K || (h16 && dt == kPkQ6K && ffn > pk_smem_floats(sh)));
}
// The columns the down projection's staging holds (P5): its slots' blocks (`on_slots`); in the slot forms, other
// matrices' floats over the whole array where that makes one pass (the 1B's 8192: kernel -1.0%; the 8B's 14336 in 2
// passes rather than 3 ran even to 0.5% slower: R2-R3), else the `sh` staging floats.
PK_FN uint pk_down_cap(uint sh, uint ffn, bool slots, bool on_slots) {
  if (on_slots) return PK_SMEM_WORDS(sh) / kPkSlotRec * 256u;
  return slots && ffn <= pk_smem_floats(sh) ? pk_smem_floats(sh) : sh;
}

#ifdef __cplusplus
}  // namespace bs::kparams
#endif
