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
  uint pad1; uint pad2;
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
// Sync words (binding 4): arrivals at this dispatch's grid barriers, the last barrier released (on a line
// of its own), the error flag (a barrier timed out: workgroups not co-resident), workgroups done (the last
// zeroes the three counts for the next dispatch).
// With the o projection folded into the attention phase (decode_persistent.comp PK_FOLD_O), one count a head group
// follows, each on a line of its own: the group's attention items done in this dispatch.
const uint kPkSyncArrive = 0u, kPkSyncError = 2u, kPkSyncDone = 3u, kPkSyncRelease = 32u;
const uint kPkSyncGroups = 64u, kPkSyncGroupStride = 32u, kPkMaxGroups = 64u;
const uint kPkSyncWords = kPkSyncGroups + kPkSyncGroupStride * kPkMaxGroups;

// Shared memory of the slot forms (decode_persistent.comp, PK_INT_DOT / PK_HALF_DOT): one uvec4 array, the Q4_K slots
// of `sh` staged floats first (a record of kPkSlotRec uvec4s a 256-column block), then the floats (a vec4 of skew per 16).
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
// The columns the down projection's staging holds (P5), for `sh` staging floats: in the slot forms (`slots`) the
// matrix takes the whole shared array, a Q4_K one its slots alone, any other its floats alone where that makes one
// pass (the 1B's 8192 floats: kernel -1.0%; the 8B's 14336 in 2 passes rather than 3 ran even to 0.5% slower:
// benchmarks/results/2026-11-30-h200-session32.md, R2-R3).
PK_FN uint pk_down_cap(uint sh, uint ffn, bool slots, bool q4k) {
  uint words = PK_SMEM_WORDS(sh), floats = (words - 1u) * 64u / 17u & ~3u;  // with a vec4 of skew per 16
  if (!slots) return sh;
  if (q4k) return words / kPkSlotRec * 256u;
  return ffn <= floats ? floats : sh;
}

#ifdef __cplusplus
}  // namespace bs::kparams
#endif
