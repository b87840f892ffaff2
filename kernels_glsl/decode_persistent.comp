#version 450
// One decode step's layers in ONE dispatch (issue 15): every workgroup of a grid that is resident at
// once (runtime/model/persistent.cpp picks it: one per multiprocessor on NVIDIA, 1 on lavapipe) walks
// all layers, and a grid-wide barrier separates the dependent phases of each layer:
//   P1 q/k/v: RMSNorm(x) staged in shared memory, rotation pairs of q and k (RoPE, bias first) and
//      pairs of v rows; q to scratch, k and v as f16 into the layer's caches at state.pos
//   P2 attention: (head, context chunk) items, each a partial softmax state (m, l, o) in scratch
//   P3 o-projection: the partials merged while staging (every workgroup merges for itself: no
//      extra barrier), o rows added into x (PK_FOLD_O, the _fold variants: in P2's workgroups, after a wait on
//      their head group alone, not on the grid)
//   P4 gate/up: RMSNorm(x) staged; h = act(W_gate xn) * (W_up xn) into scratch
//   P5 down: h staged (in passes of equal size where it is longer than the staging area), added into x
// A dispatch boundary costs launch + ramp + tail (~4-7 us on the H100 per phase); a grid barrier
// costs 0.46 us (benchmarks/results/2026-11-23-h100.md, sections 1 and 5).
//
// Matvec work: a task is two rows (a RoPE pair, two v / o / down rows, or a gate row with its up
// row) taken by one subgroup; tasks are spread grid-stride over every subgroup of the grid, and each
// lane takes block parts of both rows (dequant.glsl's decoders), so the pair shares its x loads and
// the subgroup reduces with subgroupAdd alone. Weights and KV caches of all layers are reached by
// buffer device address through the layer table (lavapipe binds at most 32 buffers per stage).
//
// Spec constants: 0 = workgroup size, 1 = staging floats (shared memory), 2 = POLL_ALL, 3 = POLL_LOAD,
// 4 = FENCE_ALL (grid barrier), 5 = PARTS (Q4_K parts per lane per step), 6 = X_EARLY (the residual rows
// read before their dot products), 7 = LOADS_ONLY (p.skip's bit 6, below). p.skip (timing breakdowns
// only, wrong logits): bit i skips phase i + 1's work, bit 5 the staging loads (bit 7 those of the norms alone, P1's and
// P4's; bit 8 those of P5's h alone); bit 6 has the Q4_K and F16 matvecs
// load their weights and skip the math (each lane folds the loaded words into its sum): what the loads alone take.
// The host passes bit 6 as LOADS_ONLY, so the kernel that runs without it has no trace of it. 8 = PROBE (timing
// breakdowns only, wrong logits; 0 in every kernel that computes): bits that take one part of a task away at a time.
// 9 = PAIR_SUM, 10 = PIPE, 11 = TEAM, 12 = STREAM, 13 = EARLY, 14 = SPREAD, 15 = Q6K_SLOTS, 16 = NORM_SLOTS,
// 17 = HEAD_Q8X, 18 = EXTRA_SYNC, 19 = POLL_COUNT, 20 = TBL_SMEM, 21 = QKV_ORDER, 22 = STUB, 23 = TOUCH,
// 24 = TOUCH_STEP, 25 = TPP, 26 = ATTN_GQA (below).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#ifdef PK_FOLD_O
#extension GL_EXT_shader_atomic_float : require
#endif
#include "common.glsl"
#include "dequant.glsl"
#include "persistent.h"
#include "rope.glsl"
layout(local_size_x = 64, local_size_x_id = 0) in;  // defaults fit every device; the host sets both
#if defined(PK_INT_DOT) || defined(PK_HALF_DOT)
layout(constant_id = 1) const uint SH = 2048;  // the int8 / f16 staging beside it: the defaults fit 32 KiB
#else
layout(constant_id = 1) const uint SH = 4096;
#endif
// Q6K_SLOTS = 1 (set by the host where a Q6_K down projection stages its f16 slots: pk_down_on_slots) compiles
// q6k_dot2's slot form in; 0 leaves it out. Chosen at run time alone, the form cost the 1B 1% where it never ran (112-113
// registers against 111; session 32, R5-R6).
layout(constant_id = 15) const uint Q6K_SLOTS = 1;
// NORM_SLOTS = 1: where a phase's matrices are all Q4_K, its RMSNorm goes straight into the slots, each invocation a
// slot's 16 values (stage_norm_slots), with no floats staged; 2: in P1 also where only some of q/k/v are Q4_K (Q4_K_M's
// Q6_K v layers), the floats staged from the same registers. The host sets it where dim's slots fit the workgroup.
layout(constant_id = 16) const uint NORM_SLOTS = 0;
// HEAD_Q8X = 1: after the last layer a grid barrier, then the output norm straight into quantize_x_q8's int8 form at
// binding 7 (head_norm_q8x), which decode's Q6_K head (matvec_q6k_wide_i8) reads: the rms_norm_q8x dispatch's work
// without its dispatch. Leaving that dispatch out saved 11 us a token on the 1B (session 33, R6); this costs the kernel
// ~5 us, and the 1B ran 1,281 -> 1,287 tok/s (R8).
layout(constant_id = 17) const uint HEAD_Q8X = 0;
// EXTRA_SYNC (BLUESHIFT_PERSISTENT_EXTRA_SYNC; timing breakdowns only, 0 in every kernel that runs for its logits): at
// the end of each layer, n = bits 0-7 extra synchronizations of kind bits 8-9: 0 a grid barrier, 1 a workgroup's count
// alone (its fence and atomic, no wait), 2 a fence and a workgroup barrier. What n of them add is n times their cost.
layout(constant_id = 18) const uint EXTRA_SYNC = 0;
layout(push_constant) uniform PC { PersistentParams p; };
// STUB (BLUESHIFT_PERSISTENT_STUB; register attribution only, wrong logits; 0 in every kernel that computes): p.skip's
// bits 0-5 at compile time, so that the code they skip is not in the kernel at all. What the driver's register count
// falls by with a bit set is what that phase's code holds at the kernel's peak (benchmarks/kernel_registers.sh).
layout(constant_id = 22) const uint STUB = 0;
uint skip_mask() { return p.skip | STUB; }
layout(std430, binding = 0) readonly buffer T { uint tbl[]; };
// TBL_SMEM = 1: the layer table's row of the layer that runs is read from shared memory (s_tbl, two rows: layer l's at
// l % 2), copied there from binding 0 in the wait of the grid barrier before the layer (layer 0's at the start). A
// phase's first weight loads then wait on no table load: binding 0's lines are long out of L1 by the time a phase
// reads them (the weights stream through it), so each read was an L2 round trip ahead of the loads that depend on it.
// On the H200: 1B q4_k_m 1,331 -> 1,354 tok/s, 3B 622 -> 630, 8B 355.5 -> 360.4, ~1 us a layer (session 37, U1).
// 0 reads the table from binding 0 (A/B runs).
layout(constant_id = 20) const uint TBL_SMEM = 1;
// QKV_ORDER = 1: the q/k/v phase deals its tasks in an order that gives the subgroups with two of them two q tasks
// (P1, below); 0: q, then k, then v (A/B runs). The sums are the same either way.
layout(constant_id = 21) const uint QKV_ORDER = 1;
shared uint s_tbl[2u * kPkStride];
// Word e of layer l's row of the table.
uint tb(uint l, uint e) { return TBL_SMEM != 0u ? s_tbl[(l & 1u) * kPkStride + e] : tbl[l * kPkStride + e]; }
// Layer l's row into s_tbl (the workgroup's last invocations, so that invocation 0, which polls at the barriers, does
// not wait on the loads); a workgroup barrier must follow before any tb(l, ..).
void tbl_fetch(uint l) {
  if (TBL_SMEM == 0u || l >= p.n_layers) return;
  for (uint i = gl_WorkGroupSize.x - 1u - gl_LocalInvocationIndex; i < kPkStride; i += gl_WorkGroupSize.x)
    s_tbl[(l & 1u) * kPkStride + i] = tbl[l * kPkStride + i];
}
layout(std430, binding = 1) coherent buffer X { float x[]; };
layout(std430, binding = 2) coherent buffer Sc { float sc[]; };
#if defined(PK_INT_DOT) || defined(PK_HALF_DOT)
layout(std430, binding = 2) coherent buffer Sc4 { vec4 sc4[]; };  // the same scratch, 16 bytes a load (stage_slots)
#endif
// The same x, 16 bytes a load (stage_norm_slots, head_norm_q8x).
layout(std430, binding = 1) coherent buffer X4 { vec4 x4[]; };
// HEAD_Q8X's output (quantize_x_q8's layout), bound rather than addressed: the host orders the head's dispatch after
// this one by the buffers they bind (the persistent scratch where nothing is written here).
layout(std430, binding = 7) writeonly buffer XQ { uvec4 xq_out[]; };
layout(std430, binding = 3) readonly buffer St { uint state[]; };
layout(std430, binding = 4) coherent volatile buffer Sy { uint sync_w[]; };
layout(std430, binding = 5) readonly buffer Fg { float freq_g[]; };
layout(std430, binding = 6) readonly buffer Fl { float freq_l[]; };

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer RU4 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer RU { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer RU2 { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer RF { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer RF4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) coherent buffer KVh { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer KV4 { f16vec4 v[]; };

// The staged input vector of the phase (columns k0.. of it), as vec4s with one vec4 of skew per 16:
// the lanes of a Q4_K row read x at float offsets 0, 16, 64, 80, ... (part t of a block), which in a
// plain float array all fall in banks 0 and 16 (16-way conflicts: the first H100 run's matvecs ran at
// ~0.6 TB/s); skewed, 8 lanes' 16-byte reads hit 8 different bank groups.
uint sx_at(uint i) { return (i >> 2) + (i >> 6); }  // vec4 slot of float i
uvec2 addr(uint l, uint e) { return uvec2(tb(l, e), tb(l, e + 1u)); }
#if defined(PK_INT_DOT) || defined(PK_HALF_DOT)
// The slot forms (below) keep the floats and their Q4_K slots in one array, the slots first (persistent.h
// PK_SMEM_WORDS). A down projection may take the whole array in P5: a Q4_K or Q6_K one its slots alone (stage_slots),
// any other its floats alone, from word 0 (sx_at0; kSxAt elsewhere).
shared uvec4 smem[PK_SMEM_WORDS(SH)];
const uint kSxAt = PK_SX_AT(SH);
uint sx_at0 = kSxAt;  // the word of float 0 (uniform)
vec4 xin4(uint i) { return uintBitsToFloat(smem[sx_at0 + sx_at(i)]); }  // i % 4 == 0
void sx_set4(uint i, vec4 v) { smem[sx_at0 + sx_at(i)] = floatBitsToUint(v); }
void sx_set(uint i, float v) { smem[sx_at0 + sx_at(i)][i & 3u] = floatBitsToUint(v); }
float sx_get(uint i) { return uintBitsToFloat(smem[sx_at0 + sx_at(i)][i & 3u]); }
#else
shared vec4 sx4[SH / 4u + SH / 64u + 1u];
const uint kSxAt = 0u;
uint sx_at0 = 0u;  // (unused: the slot forms' P5 moves their floats)
vec4 xin4(uint i) { return sx4[sx_at(i)]; }  // i % 4 == 0
void sx_set4(uint i, vec4 v) { sx4[sx_at(i)] = v; }
void sx_set(uint i, float v) { sx4[sx_at(i)][i & 3u] = v; }
float sx_get(uint i) { return sx4[sx_at(i)][i & 3u]; }
#endif
#if defined(PK_INT_DOT) || defined(PK_HALF_DOT)
// A slot is 16 values of sx as two uvec4s (a, b) and a vec2 s (the integer form: q1, q2 and (d / 254, sum); the f16
// form: words 0-1 and 2-3, and (scale, sum)). The slots of a 256-column block are one record of kPkSlotRec uvec4s:
// the 16 a, the 16 b, then 8 uvec4s whose word i holds slot i's s and slot i + 8's (the pair a Q4_K part meets). A
// part t reads a at t and t + 8, b at t + 16 and t + 24, and s at t + 32: consecutive lanes consecutive uvec4s.
// slot_at(g): the record word of slot g's a (g % 16 < 8: the part's low-nibble slot).
uint slot_at(uint g) { return (g >> 4) * kPkSlotRec + (g & 15u); }
void slot_store(uint g, uvec4 a, uvec4 b, vec2 s) {
  uint r = slot_at(g), si = (g >> 4) * kPkSlotRec + 32u + (g & 7u);
  smem[r] = a;
  smem[r + 16u] = b;
  if ((g & 8u) != 0u)
    smem[si].zw = floatBitsToUint(s);
  else
    smem[si].xy = floatBitsToUint(s);
}
#endif

#ifdef PK_INT_DOT
// decode_persistent_i8: Q4_K rows meet x in integer dot products (int_dot.glsl). After each staging, sx is
// quantized into 16-value slots (two int8 levels, d / 254 and the sum) in the records above, slots ordered as in
// matvec_q4k_i8's input: a Q4_K part t reads slots t and t + 8 of its block, so consecutive lanes read consecutive
// uvec4s (no bank conflicts). The float sx stays for the Q6_K / Q8_0 / F16 rows of the same phase. persistent.cpp
// sizes SH for both (6.75 bytes a float).
#include "int_dot.glsl"

// Slot g from its 16 values (stage_quantize, below).
void slot_put(uint g, vec4 v[4]) {
  uvec4 q1, q2;
  vec2 ds;
  q8x_quantize(v[0], v[1], v[2], v[3], q1, q2, ds);
  slot_store(g, q1, q2, ds);
}
#elif defined(PK_HALF_DOT)
// decode_persistent_h16: Q4_K rows meet x in packed f16 arithmetic. A code pair becomes an f16 pair with one mask:
// (w & 0x000F000F) | 0x64006400 is (1024 + c0, 1024 + c2) for the low nibbles of bytes 0 and 2, and with 0x00F000F0
// (1024 + 16 c0, 1024 + 16 c2) for the high ones; one packed subtract of 1024 and one packed fma against x follow.
// That is 13 instructions for a word's 8 weights (a shift, 4 masks, 4 subtracts, 4 fmas), against 26 in the float
// form (per 4 weights: 4 masks, 4 subtracts and 4 fmas, twice, and a shift). The float form's math was on the
// kernel's critical path: without half of it the 8B q4_k_m kernel took 15% less (session 22's G2, PROBE 16).
// After each staging, sx is copied into f16 slots of 16 values laid out as the integer form's (a part t reads slots
// t and t + 8 of its block, consecutive lanes consecutive slots), each scaled by a power of 2 that puts its largest
// value in [0.5, 1): a product is at most 240 (16 c with c <= 15) and an f16 sum of two at most 480, far from the
// f16 range's end whatever x's size (the down projection's input can reach the thousands in real models).
// Each slot keeps (its power of 2, over 16 for the high nibbles' slots, and the sum of its values as rounded to f16,
// times that power), so the min term is d_min m sum(x~) for the x~ the codes met: the result is the dot product
// with the rounded x, summed in f16 two products to a sum (relative rounding ~2^-11 each).
// Within a slot, word m's pairs are (x[4m], x[4m + 2]) and (x[4m + 1], x[4m + 3]), the nibble pairs' order.
#define Q8X_QUANTIZE_ONLY  // int_dot.glsl for q8x_slot_first, without the integer-dot instruction
#include "int_dot.glsl"

// Slot g from its 16 values (stage_quantize, below).
void slot_put(uint g, vec4 v[4]) {
  vec4 a = max(max(abs(v[0]), abs(v[1])), max(abs(v[2]), abs(v[3])));
  int e;
  frexp(max(max(a.x, a.y), max(a.z, a.w)), e);  // amax = f 2^e, f in [0.5, 1) (e = 0 for amax = 0)
  float down = exp2(float(-e)), up = exp2(float(e));
  uint pk[8];
  float sum = 0.0;
  for (uint w = 0u; w < 4u; ++w) {
    f16vec4 h = f16vec4(v[w] * down);
    sum += dot(vec4(h), vec4(1.0));
    pk[2u * w] = packFloat2x16(h.xz), pk[2u * w + 1u] = packFloat2x16(h.yw);
  }
  slot_store(g, uvec4(pk[0], pk[1], pk[2], pk[3]), uvec4(pk[4], pk[5], pk[6], pk[7]),
             vec2(up * ((g % 16u) >= 8u ? 1.0 / 16.0 : 1.0), up * sum));
}

// The 16 codes of one nibble half of qs words q (mask 0x000F000F: low nibbles, 0x00F000F0: high ones, times 16)
// against a slot's 8 f16 pairs xa, xb; the sum in f32 (the slot's scale still to apply). Four f16 pair sums of two
// products each keep the rounding of the sums below that of the products: two sums of four ran 1% faster on the H200
// but erred 15% more (random 1B q4_k_m against the float form: 8.2e-3 worst rel L2 against 6.9e-3; session 22, G4).
float q4k_half16(uvec4 q, uint mask, uvec4 xa, uvec4 xb) {
  const f16vec2 k1024 = f16vec2(1024.0);
  uvec4 u = q >> 8u;
  f16vec2 s0 = (unpackFloat2x16((q.x & mask) | 0x64006400u) - k1024) * unpackFloat2x16(xa.x);
  f16vec2 s1 = (unpackFloat2x16((u.x & mask) | 0x64006400u) - k1024) * unpackFloat2x16(xa.y);
  f16vec2 s2 = (unpackFloat2x16((q.y & mask) | 0x64006400u) - k1024) * unpackFloat2x16(xa.z);
  f16vec2 s3 = (unpackFloat2x16((u.y & mask) | 0x64006400u) - k1024) * unpackFloat2x16(xa.w);
  s0 = fma(unpackFloat2x16((q.z & mask) | 0x64006400u) - k1024, unpackFloat2x16(xb.x), s0);
  s1 = fma(unpackFloat2x16((u.z & mask) | 0x64006400u) - k1024, unpackFloat2x16(xb.y), s1);
  s2 = fma(unpackFloat2x16((q.w & mask) | 0x64006400u) - k1024, unpackFloat2x16(xb.z), s2);
  s3 = fma(unpackFloat2x16((u.w & mask) | 0x64006400u) - k1024, unpackFloat2x16(xb.w), s3);
  vec2 t = (vec2(s0) + vec2(s1)) + (vec2(s2) + vec2(s3));
  return t.x + t.y;
}
#endif
#if !defined(PK_INT_DOT) && !defined(PK_HALF_DOT)
#define Q8X_QUANTIZE_ONLY  // int_dot.glsl's quantizer for head_norm_q8x, without the integer-dot instruction
#include "int_dot.glsl"
#endif

#if defined(PK_INT_DOT) || defined(PK_HALF_DOT)
// sx[0 .. n) times `scale` into the Q4_K slots (n a multiple of 256 wherever a Q4_K row reads it; values past n count
// as 0), and where scale != 1 the scaled values back into sx (stage_norm: the norm's scale and the slots in one pass;
// n % 4 == 0, so the slots' vec4s cover sx). Called only in phases with a Q4_K matrix (uniform per workgroup: the
// layer table); a barrier follows.
const bool kQ4kSlots = true;
#ifdef PK_HALF_DOT
const bool kQ6kSlots = Q6K_SLOTS != 0u;  // Q6_K rows can read the f16 slots (q6k_dot2; P5 only)
#else
const bool kQ6kSlots = false;
#endif
void stage_quantize_scaled(uint n, float scale) {
  for (uint g = gl_LocalInvocationIndex; g < (n + 255u) / 256u * 16u; g += gl_WorkGroupSize.x) {
    uint first = q8x_row_first(g);
    vec4 v[4];
    for (uint w = 0u; w < 4u; ++w) {
      uint i = first + 4u * w;
      v[w] = i + 4u <= n ? xin4(i) * scale : vec4(0.0);
      if (scale != 1.0 && i + 4u <= n) sx_set4(i, v[w]);
    }
    slot_put(g, v);
  }
  barrier();
}
// The slots of scratch[off .. off + n) (n a multiple of 256, off of 4) straight from scratch, without sx: a Q4_K or
// Q6_K down projection reads the slots alone, so they may take the whole shared array (P5, pk_down_cap).
void stage_slots(uint off, uint n) {
  if ((skip_mask() & 288u) != 0u) {
    barrier();
    return;
  }
  // One slot an invocation a round: two at once (the 8B's 896 slots on 640 invocations in one round trip) ran slower,
  // 8B +1.0% kernel time, 1B +1.2% (benchmarks/results/2026-11-30-h200-session32.md, R2-R3).
  for (uint g = gl_LocalInvocationIndex; g < n / 16u; g += gl_WorkGroupSize.x) {
    uint first = (off + q8x_row_first(g)) / 4u;
    vec4 v[4];
    for (uint w = 0u; w < 4u; ++w) v[w] = sc4[first + w];
    slot_put(g, v);
  }
  barrier();
}
#else
const bool kQ4kSlots = false, kQ6kSlots = false;
void stage_quantize_scaled(uint n, float scale) {}
void stage_slots(uint off, uint n) {}
#endif
void stage_quantize(uint n) { stage_quantize_scaled(n, 1.0); }

// ---------------------------------------------------------------------------------------- grid barrier
// Counted per dispatch: barrier b (1-based) is passed when b x grid workgroups have arrived. With POLL_COUNT (the
// default) every workgroup polls that count; else the last arriver (its atomicAdd returns b x grid - 1) raises the
// release word, on its own 128-byte line, to b, and the others poll that word. No reset between barriers (the earlier
// generation scheme reset the count and fenced first). In that scheme a count polled where it was incremented
// measured 6.5 us a barrier on the H100; on the H200 polling the count is a round trip cheaper than the release word
// (POLL_COUNT, below). The counts go back to zero at the end of the dispatch (kernel_done). A wait longer than
// p.spin_limit polls means the grid is not co-resident: raise the flag and stop waiting from then on
// (wrong logits, no hang; the host reads the flag). lavapipe polls with atomics, not volatile loads:
// its LLVM hoisted a volatile load out of the loop.
// POLL_ALL = 0: invocation 0 polls while the others wait at the workgroup barrier (GPUs: one poller
// per workgroup); 1: every invocation polls. Neither makes grids > 1 reliable on lavapipe (the
// legacy memory barriers are not honoured there: grid-2 decode went wrong in some steps), so the
// CPU device runs a grid of 1, where the barrier never waits.
// (POLL_ALL acts on the release word alone: under POLL_COUNT invocation 0 polls.)
layout(constant_id = 2) const uint POLL_ALL = 0;
// POLL_LOAD = 1 (GPUs): poll with volatile loads; 0 polls with atomics (lavapipe, above).
layout(constant_id = 3) const uint POLL_LOAD = 0;
// FENCE_ALL = 1: every invocation fences its own writes before the workgroup barrier; 0: invocation 0
// fences after it, for the whole workgroup (a fence after a workgroup barrier is cumulative on NVIDIA,
// as CUDA's grid sync relies on): 511 fences fewer per barrier.
layout(constant_id = 4) const uint FENCE_ALL = 0;
// POLL_COUNT = 1: the workgroups poll the arrival count itself (b x grid at barrier b), each adding its arrival
// without waiting for the count back; 0: the last arriver, seeing the count come back full, raises the release word,
// which the others poll (a round trip more from the last arrival to the release). On the H200 1 took the 1B q4_k_m
// 1,282 -> 1,329 tok/s, the 3B 607 -> 619, the 8B 351 -> 354 (benchmarks/results/2026-11-30-h200-session36.md, T2).
layout(constant_id = 19) const uint POLL_COUNT = 1;
// PARTS: Q4_K parts per lane per step, their loads issued together (dot2; the host's default is 1 for the f16 and
// integer forms, 2 for the float form; BLUESHIFT_PERSISTENT_PARTS).
layout(constant_id = 5) const uint PARTS = 2;
// X_EARLY = 1: in the o and down phases lane 0 reads its two rows of x before the dot products, so the add
// into x after them is a store alone (x[ra] += s waits a round trip to L2 with the whole subgroup, once a
// task: H100 1B kernel 0.973 -> 0.958 ms, 8B 3.785 -> 3.722 ms, the same sums; session 11's B1). A subgroup
// owns its rows through the phase, so the early value is still current.
layout(constant_id = 6) const uint X_EARLY = 1;
layout(constant_id = 7) const uint LOADS_ONLY = 0;
// PROBE (BLUESHIFT_PERSISTENT_PROBE; timing breakdowns only, wrong logits): 1 = the Q4_K headers are not loaded (a
// constant header: its scale decode folds away too); 2 = the float Q4_K rows read no x from the staging area (constant x);
// 4 = no subgroup reduction at a task's end (each lane keeps its own partial); 8 = the Q4_K codes are not loaded
// (codes made from the part index); 16 = the float Q4_K rows' high-nibble half of the math is not done (half the
// dequantization and dot products); in the norms' staging (stage_norm, stage_norm_slots): 32 = x not loaded (the norm
// weights stand in), 64 = no workgroup reduction of the squares (each invocation scales by its own), 128 = P1's staging
// taken away, 256 = P4's. What a phase loses with a bit set is what that part of the task cost.
layout(constant_id = 8) const uint PROBE = 0;
// PAIR_SUM = 1: a task's two sums reduced in one butterfly (pair_sum); 0: two subgroupAdds (A/B runs).
layout(constant_id = 9) const uint PAIR_SUM = 1;
// PIPE = 1: Q4_K rows load a step ahead of their math (dot2); 0: each step loads, then computes (A/B runs).
layout(constant_id = 10) const uint PIPE = 1;
// TEAM: subgroups that share an o or down projection task (add_matvec). The host takes 2 where the tasks then fit one
// round of the grid's teams, else 1 (persistent.cpp).
layout(constant_id = 11) const uint TEAM = 1;
// SPREAD = 1: grid-stride task t falls to workgroup t % grid (its subgroup or team t / grid), so that a phase whose
// tasks do not fill a whole number of rounds spreads its last round over every SM; 0: to workgroup t / (subgroups or
// teams a workgroup), which gives the last round to the first workgroups alone (the 8B's q/k/v phase: 3,072 tasks on
// 2,112 subgroups, 32 tasks on each of 60 SMs and 16 on the other 72).
layout(constant_id = 14) const uint SPREAD = 1;
// The first task of this subgroup's (or team's: per = subgroups a team, i its team in the workgroup) grid-stride loop.
uint first_task(uint per, uint i) {
  return SPREAD != 0u ? i * gl_NumWorkGroups.x + gl_WorkGroupID.x : gl_WorkGroupID.x * (gl_NumSubgroups / per) + i;
}
uint sync_read(uint i) { return POLL_LOAD != 0u ? sync_w[i] : atomicAdd(sync_w[i], 0u); }
uint n_barriers = 0u;  // grid barriers passed in this dispatch (uniform)
// Polls sync word i until it reaches `target`, or raises the error flag after p.spin_limit polls.
void wait_word(uint i, uint target) {
  if (sync_read(kPkSyncError) != 0u) return;
  for (uint n = 1u; sync_read(i) < target; ++n)
    if ((n & 255u) == 0u && (n > p.spin_limit || sync_read(kPkSyncError) != 0u)) {
      atomicOr(sync_w[kPkSyncError], 1u);
      return;
    }
}
void wait_release(uint b) { wait_word(kPkSyncRelease, b); }
// Counts the workgroup in on sync word i once its writes are fenced (FENCE_ALL: by every invocation, else by
// invocation 0 after the workgroup barrier); returns the count before it in invocation 0, 0 in the others.
uint count_in(uint i) {
  if (FENCE_ALL != 0u) memoryBarrier();
  barrier();
  uint before = 0u;
  if (gl_LocalInvocationIndex == 0u) {
    if (FENCE_ALL == 0u) memoryBarrier();
    before = atomicAdd(sync_w[i], 1u);
  }
  return before;
}
// Where `poll`, waits (invocation 0) until sync word i reaches `target`; then publishes to this workgroup what the
// workgroups counted in there wrote.
void await_word(uint i, uint target, bool poll) {
  if (gl_LocalInvocationIndex == 0u) {
    if (poll) wait_word(i, target);
    memoryBarrier();
  }
  barrier();
}
// The grid barrier in two halves, for work between them that reads nothing another workgroup writes in this dispatch
// (the weights). grid_arrive fences and counts the workgroup in; its ticket is the barrier's number, doubled, plus 1 in
// invocation 0 of the last workgroup to arrive where POLL_COUNT is 0 (it raised the release itself and so does not poll
// for it). grid_wait(ticket) waits for the full count (POLL_COUNT) or the release, and publishes the other workgroups'
// writes to this one.
uint grid_arrive() {
  uint b = ++n_barriers, last = 0u;
  if (POLL_COUNT != 0u) {
    count_in(kPkSyncArrive);  // its count unused: an add the workgroup does not wait for
    return 2u * b;
  }
  if (count_in(kPkSyncArrive) == b * gl_NumWorkGroups.x - 1u && gl_LocalInvocationIndex == 0u) {
    atomicMax(sync_w[kPkSyncRelease], b);
    last = 1u;
  }
  return 2u * b + last;
}
void grid_wait(uint ticket) {
  uint b = ticket / 2u;
  if (POLL_COUNT != 0u) {
    await_word(kPkSyncArrive, b * gl_NumWorkGroups.x, true);
    return;
  }
  await_word(kPkSyncRelease, b, (ticket & 1u) == 0u && POLL_ALL == 0u);
  if (POLL_ALL != 0u) {
    wait_release(b);
    memoryBarrier();
    barrier();
  }
}
void grid_barrier() { grid_wait(grid_arrive()); }
// TOUCH = n: in the wait of the grid barrier after q/k/v, the grid reads up to n words a lane of the layer's cached K
// rows, then its V rows, TOUCH_STEP bytes apart (32: one a sector), so that they are in L2 when attention asks for
// them.
// Attention and the o fold are a chain of dependent round trips (K, the scores, V, the group's wait, W_o); the cached
// rows were written steps ago, long since pushed out of L2 by the weights, so without this each K and V round trip
// went to DRAM. A lane folds its words together and stores them nowhere (s_touch, on a value no word is expected to
// take) before the wait's workgroup barrier: no register is held past the wait. Subgroup 0, whose invocation 0 polls,
// does not touch. The row at pos is left out: P1 wrote it in this dispatch (it is in L2, and a non-coherent read of it
// here would be a race). The touches stop at the rows' end: n caps them where the rows outgrow the grid's reach
// (n x lanes x TOUCH_STEP: at 8, 16 MB on the 1B at 512 wide, 20.5 MB on the 8B at 640). On the H200, q4_k_m at
// 512 + 128 tokens: 1B 1,341 -> 1,385 tok/s, 8B 361 -> 369; at 4,096 + 128: 1B 858 -> 970, 8B 253 -> 279 (session 39,
// W5). Touching the streamed phases' weights too (gate/up, down, the next layer's q/k/v, W_o) lost up to 2% on the 1B
// and held even on the 8B: their waits are short, and the touches' round trip held the last workgroup to arrive (W2).
// 0: none.
layout(constant_id = 23) const uint TOUCH = 8;
layout(constant_id = 24) const uint TOUCH_STEP = 32;
shared uint s_touch;
// Layer l's K, then V, cache rows [lo, pos): touch k of the two goes to lane k % (the grid's touching lanes).
void touch_kv(uint l, uint lo, uint pos) {
  if (TOUCH == 0u || gl_SubgroupID == 0u || pos <= lo) return;
  uvec2 kc = addr(l, kPkKCache), vc = addr(l, kPkVCache);
  uint lanes = gl_NumWorkGroups.x * (gl_NumSubgroups - 1u) * gl_SubgroupSize, f = 0u;
  uint j = (gl_WorkGroupID.x * (gl_NumSubgroups - 1u) + gl_SubgroupID - 1u) * gl_SubgroupSize + gl_SubgroupInvocationID;
  uint row = p.kv_dim * 2u, n = ((pos - lo) * row + TOUCH_STEP - 1u) / TOUCH_STEP;  // touches a cache
  [[unroll]] for (uint i = 0u; i < TOUCH; ++i) {
    uint k = j + i * lanes;
    if (k >= 2u * n) break;
    f ^= RU(k < n ? kc : vc).v[(lo * row + (k < n ? k : k - n) * TOUCH_STEP) >> 2];
  }
  if (f == 0x9E3779B9u) s_touch = f;
}
#ifdef PK_FOLD_O
// Heads a group (PK_FOLD_O, below): the heads whose columns of W_o make one Q4_K block (the host folds only where
// head_dim divides 256).
uint fold_heads() { return 256u / p.head_dim; }
#endif
// Every workgroup is past its last barrier when the done count is full: the last one zeroes the counts
// for the next dispatch (which the queue starts after this one ends).
void kernel_done() {
  barrier();
  if (gl_LocalInvocationIndex == 0u && atomicAdd(sync_w[kPkSyncDone], 1u) == gl_NumWorkGroups.x - 1u) {
    atomicExchange(sync_w[kPkSyncArrive], 0u);
    atomicExchange(sync_w[kPkSyncRelease], 0u);
    atomicExchange(sync_w[kPkSyncDone], 0u);
#ifdef PK_FOLD_O
    for (uint g = 0u; g < p.n_heads / fold_heads(); ++g)
      atomicExchange(sync_w[kPkSyncGroups + kPkSyncGroupStride * g], 0u);
#endif
  }
}

// ------------------------------------------------------------------------------------------- matvecs
// The subgroup sums of a task's two rows with one butterfly instead of two: the first exchange leaves row a's sum of
// a lane pair in the low half of the lanes and row b's in the high half, the remaining log2(sg) - 1 exchanges sum
// each half, and one shuffle brings b's to the low half (log2(sg) + 1 exchanges for 2 log2(sg): 6 for 10 at 32).
// Exact in the lanes below sg / 2, lane 0 among them.
vec2 pair_sum(vec2 acc) {
  uint h = gl_SubgroupSize / 2u;
  bool hi = (gl_SubgroupInvocationID & h) != 0u;
  float v = (hi ? acc.y : acc.x) + subgroupShuffleXor(hi ? acc.x : acc.y, h);
  for (uint o = h / 2u; o > 0u; o >>= 1) v += subgroupShuffleXor(v, o);
  return vec2(v, subgroupShuffle(v, h));
}

// A Q4_K part's staged x in dot2's float form: the 16 values its low nibbles meet, scaled by kQ4LoScale
// (a0..a3), the 16 its high nibbles meet, scaled by kQ4HiScale (b0..b3), and the two groups' plain sums. xo is the
// part's first column less k0.
struct Q4kX { vec4 a0, a1, a2, a3, b0, b1, b2, b3; float sa, sb; };
Q4kX q4k_x(uint xo) {
  Q4kX x;
  x.a0 = xin4(xo), x.a1 = xin4(xo + 4u), x.a2 = xin4(xo + 8u), x.a3 = xin4(xo + 12u);
  x.b0 = xin4(xo + 32u), x.b1 = xin4(xo + 36u), x.b2 = xin4(xo + 40u), x.b3 = xin4(xo + 44u);
  if ((PROBE & 2u) != 0u) x.a0 = x.a1 = x.a2 = x.a3 = x.b0 = x.b1 = x.b2 = x.b3 = vec4(0.5, 0.25, -0.5, 1.0);
  x.sa = dot(x.a0 + x.a1 + x.a2 + x.a3, vec4(1.0)), x.sb = dot(x.b0 + x.b1 + x.b2 + x.b3, vec4(1.0));
  x.a0 *= kQ4LoScale, x.a1 *= kQ4LoScale, x.a2 *= kQ4LoScale, x.a3 *= kQ4LoScale;
  x.b0 *= kQ4HiScale, x.b1 *= kQ4HiScale, x.b2 *= kQ4HiScale, x.b3 *= kQ4HiScale;
  return x;
}
// One row's part against x: header h (d, dmin, the packed scales), codes q, sub-block pair j.
float q4k_dot(uvec4 h, uvec4 q, uint j, Q4kX x) {
  vec2 dm = unpackHalf2x16(h.x);
  vec4 sm = q4k_scales_pair(h.yzw, j);
  float fa = dot(bs_q4_lo(q.x), x.a0) + dot(bs_q4_lo(q.y), x.a1) + dot(bs_q4_lo(q.z), x.a2) + dot(bs_q4_lo(q.w), x.a3);
  float fb = dot(bs_q4_hi(q.x), x.b0) + dot(bs_q4_hi(q.y), x.b1) + dot(bs_q4_hi(q.z), x.b2) + dot(bs_q4_hi(q.w), x.b3);
  if ((PROBE & 16u) != 0u) fb = 0.0;
  return dm.x * (sm.x * fa + sm.y * fb) - dm.y * (sm.z * x.sa + sm.w * x.sb);
}

// Q4_K blocks are 9 uvec4s: the header (d, dmin, packed scales), then 8 parts of 32 codes. The words of PARTS parts
// of rows ra (of a) and rb (of b) from part p0 on, sg apart (clamped to the last part, pend - 1). (Arrays sized by a
// specialization constant cannot be passed or copied: these hold the most parts, 4.)
const uint kMaxParts = 4u;
void q4k_load(RU4 wa, uint ra, RU4 wb, uint rb, uint nb, uint p0, uint pend, out uvec4 hh[2u * kMaxParts],
              out uvec4 qq[2u * kMaxParts]) {
  for (uint u = 0u; u < PARTS; ++u) {
    uint part = min(p0 + u * gl_SubgroupSize, pend - 1u), blk = part >> 3, t = part & 7u;
    uint ba = (ra * nb + blk) * 9u, bb = (rb * nb + blk) * 9u;
    hh[2u * u] = wa.v[ba], qq[2u * u] = wa.v[ba + 1u + t], hh[2u * u + 1u] = wb.v[bb], qq[2u * u + 1u] = wb.v[bb + 1u + t];
    if ((PROBE & 1u) != 0u) hh[2u * u] = hh[2u * u + 1u] = uvec4(0x3C003C00u, 0x01010101u, 0x01010101u, 0x01010101u);
    if ((PROBE & 8u) != 0u) qq[2u * u] = qq[2u * u + 1u] = uvec4(part * 0x01010101u, part, ~part, part ^ 0x5A5A5A5Au);
  }
}

// The math of one step of dot2's Q4_K loop: the PARTS parts of rows a and b from part p0 on (sg apart, their words hh
// and qq from q4k_load), against the staged x (column kx first), added into acc.
void q4k_math(uvec4 hh[2u * kMaxParts], uvec4 qq[2u * kMaxParts], uint p0, uint pend, uint kx, inout vec2 acc) {
  uint sg = gl_SubgroupSize;
  if (LOADS_ONLY != 0u) {  // timing breakdowns
    uvec4 f = uvec4(0u);
    for (uint u = 0u; u < 2u * PARTS; ++u) f ^= hh[u] ^ qq[u];
    acc.x += float((f.x ^ f.y ^ f.z ^ f.w) & 1u);
    return;
  }
  for (uint u = 0u; u < PARTS; ++u) {
    uint part = p0 + u * sg;
    if (part >= pend) break;
    uint blk = part >> 3, t = part & 7u, j = t >> 1;
    uvec4 ha = hh[2u * u], qa = qq[2u * u], hb = hh[2u * u + 1u], qb = qq[2u * u + 1u];
#ifdef PK_INT_DOT
    uint sa = (blk - kx / 256u) * kPkSlotRec + t;  // slot_at: the part's low-nibble slot; its high one 8 on
    uvec4 q1a = smem[sa], q2a = smem[sa + 16u], q1b = smem[sa + 8u], q2b = smem[sa + 24u];
    vec4 ds = uintBitsToFloat(smem[sa + 32u]);
    vec2 dsa = ds.xy, dsb = ds.zw * vec2(kQ8xHiStep, 1.0);
    for (uint r = 0u; r < 2u; ++r) {
      uvec4 h = r == 0u ? ha : hb, q = r == 0u ? qa : qb;
      vec2 dm = unpackHalf2x16(h.x);
      vec4 sm = q4k_scales_pair(h.yzw, j);
      float fa = dsa.x * float(q8x_dot16(q4_nib_lo(q), q1a, q2a)), fb = dsb.x * float(q8x_dot16_hi(q4_nib_hi(q), q1b, q2b));
      acc[r] += dm.x * (sm.x * fa + sm.y * fb) - dm.y * (sm.z * dsa.y + sm.w * dsb.y);
    }
#elif defined(PK_HALF_DOT)
    uint sa = (blk - kx / 256u) * kPkSlotRec + t;  // slot_at: the part's low-nibble slot; its high one 8 on
    uvec4 xla = smem[sa], xlb = smem[sa + 16u], xha = smem[sa + 8u], xhb = smem[sa + 24u];
    vec4 ss = uintBitsToFloat(smem[sa + 32u]);
    vec2 sl = ss.xy, sh = ss.zw;
    for (uint r = 0u; r < 2u; ++r) {
      uvec4 h = r == 0u ? ha : hb, q = r == 0u ? qa : qb;
      vec2 dm = unpackHalf2x16(h.x);
      vec4 sm = q4k_scales_pair(h.yzw, j);
      float fa = sl.x * q4k_half16(q, 0x000F000Fu, xla, xlb), fb = sh.x * q4k_half16(q, 0x00F000F0u, xha, xhb);
      acc[r] += dm.x * (sm.x * fa + sm.y * fb) - dm.y * (sm.z * sl.y + sm.w * sh.y);
    }
#else
    Q4kX x = q4k_x(blk * 256u + 64u * j + 16u * (t & 1u) - kx);
    for (uint r = 0u; r < 2u; ++r) acc[r] += q4k_dot(r == 0u ? ha : hb, r == 0u ? qa : qb, j, x);
#endif
  }
}

// A task's two row sums over the subgroup (exact in lane 0).
vec2 task_sum(vec2 acc) {
  if ((PROBE & 4u) != 0u) return acc;
  // pair_sum exchanges with every lane: whole subgroups only (the host's workgroups are multiples of 32 invocations).
  bool whole = gl_WorkGroupSize.x % gl_SubgroupSize == 0u;
  return PAIR_SUM != 0u && whole ? pair_sum(acc) : vec2(subgroupAdd(acc.x), subgroupAdd(acc.y));
}

// A Q6_K lane part's words (dot2; part = 8 a block + 4 h + l0 / 8): 8 bytes of ql at 64h + l0 and at 64h + 32 + l0, 8
// of qh at 128 + 32h + l0, the half's 8 scale bytes, and the word holding d. On the GPU a block is 224 bytes
// (runtime/base/dtype.h): every field starts on an 8-byte boundary.
struct Q6kW { uvec2 qa, qb, qh, sc; uint d; };
Q6kW q6k_load(RU2 w, uint row, uint nb, uint part) {
  uint hh = (part >> 2) & 1u, l0 = (part & 3u) * 8u, bo = (row * nb + (part >> 3)) * 224u;
  Q6kW r;
  r.qa = w.v[(bo + 64u * hh + l0) >> 3], r.qb = w.v[(bo + 64u * hh + 32u + l0) >> 3];
  r.qh = w.v[(bo + 128u + 32u * hh + l0) >> 3], r.sc = w.v[(bo + 192u + 8u * hh) >> 3];
  r.d = w.v[(bo + 208u) >> 3].x;
  return r;
}
// Two rows' parts (words wa, wb) against x: the part's quarter qq at columns xo + 32 qq + 0..7, each quarter's x loaded
// for both rows just before its use. The same sums, in the same order, as a loop that loads every quarter's x first.
// With `slots` (a constant at each call; PK_HALF_DOT), x is the f16 slots of the block whose record is at word `rec`
// (the slot forms' P5: stage_slots) and xo only places the part in its block: quarter qq's 8 columns are one half of a
// slot, its values scaled by the slot's power of 2, which the quarter's sum undoes.
vec2 q6k_dot2(Q6kW wa, Q6kW wb, uint l0, uint xo, bool slots, uint rec) {
  vec2 s = vec2(0.0);
  [[unroll]] for (uint qq = 0u; qq < 4u; ++qq) {
    vec4 x0, x1;
    float xs = 1.0;
#ifdef PK_HALF_DOT
    if (slots) {
      // Columns 128 h + l0 + 32 qq (xo's part of the block): slot 8 (qq & 1) + j (q8x_slot_first's inverse), half
      // l0 / 8 & 1; its scale is word j of the record's s pairs, z for the slots past 8 (over 16 there).
      uint j = 4u * ((xo >> 7) & 1u) + 2u * (qq >> 1) + (l0 >> 4), hi = qq & 1u;
      uvec4 xw = smem[rec + j + 8u * hi + 16u * ((l0 >> 3) & 1u)];
      vec4 sw = uintBitsToFloat(smem[rec + 32u + j]);
      xs = hi != 0u ? 16.0 * sw.z : sw.x;
      vec2 a = unpackHalf2x16(xw.x), b = unpackHalf2x16(xw.y), c = unpackHalf2x16(xw.z), d = unpackHalf2x16(xw.w);
      x0 = vec4(a.x, b.x, a.y, b.y), x1 = vec4(c.x, d.x, c.y, d.y);  // a slot word's pairs: (x0, x2), (x1, x3)
    } else
#endif
    {
      x0 = xin4(xo + 32u * qq), x1 = xin4(xo + 32u * qq + 4u);
    }
    float sx = dot(x0 + x1, vec4(1.0));
    uint bi = (l0 >> 4) + 2u * qq;
    [[unroll]] for (uint r = 0u; r < 2u; ++r) {
      Q6kW w = r == 0u ? wa : wb;
      float scl = float(int((bi < 4u ? w.sc.x : w.sc.y) << (24u - 8u * (bi & 3u))) >> 24);
      float f = dot(bs_six(q6k_codes(w.qa.x, w.qb.x, w.qh.x)[qq]), x0) +
                dot(bs_six(q6k_codes(w.qa.y, w.qb.y, w.qh.y)[qq]), x1);
      s[r] += xs * (scl * (64.0 * f - 96.0 * sx));
    }
  }
  return vec2(unpackHalf2x16(wa.d).x, unpackHalf2x16(wb.d).x) * s;
}

// Two rows' dot products over columns [k0, k1) with the staged input (sx[0] = column kx <= k0), summed over
// the subgroup (exact in lane 0, where every caller reads them). Rows ra of a and rb of b, both of dtype dt
// and k columns (Q4_K / Q6_K: k % 256 == 0; Q8_0: k % 32 == 0; F16: k % 8 == 0); kx and k0 are multiples of 256.
vec2 dot2(uint dt, uvec2 a, uint ra, uvec2 b, uint rb, uint k, uint kx, uint k0, uint k1) {
  vec2 acc = vec2(0.0);
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupSize;
  if (dt == kPkQ4K) {
    uint nb = k / 256u;
    RU4 wa = RU4(a), wb = RU4(b);
    uint pend = k1 / 32u;
    // PARTS parts per lane per step (sg apart), their loads issued before any math: the decode is
    // latency-bound at one workgroup per multiprocessor, so loads in flight are what bandwidth needs.
    // (Four parts per lane where k >= 4096 ran slower on the H100: 8B decode kernel 4.2 -> 6.8 ms; with the
    // integer dots 3 and 4 parts lost too: 8B 235 -> 211 / 196 tok/s. Headers loaded one word a lane and shared
    // by shuffles, to free registers for more parts, took more: 110 -> 122-133 registers, 8B 241 -> 221 tok/s,
    // 183 at 3-4 parts; session 11 B1. Shuffled inside this loop, just before each part's use, they held the
    // registers at 112-115 for 3-4 parts and still lost: 8B kernel 3.72 -> 4.67 / 4.56 ms, 1B 0.96 -> 1.10 / 1.14;
    // at 2 parts 124 registers, 3.97 ms; session 12 R1. More parts a lane lose here at any register count.)
    // The integer-dot form (PK_INT_DOT)
    // cut the ALU per part by half but not the time: these matvecs are bound by latency, not issue (1B
    // kernel 1.03 -> 1.09 ms, 8B 3.94 -> 3.98 ms on the H100, i8dot_run.sh). The f16 form is the default now.
    // PIPE = 1: the next step's loads are issued before this step's math (the words double-buffered in
    // registers), so a subgroup's math overlaps its own next loads instead of running between them.
    uvec4 hh[2u * kMaxParts], qq[2u * kMaxParts], nh[2u * kMaxParts], nq[2u * kMaxParts];
    if (PIPE != 0u) q4k_load(wa, ra, wb, rb, nb, k0 / 32u + lane, pend, nh, nq);
    for (uint p0 = k0 / 32u + lane; p0 < pend; p0 += PARTS * sg) {
      if (PIPE != 0u) {
        hh = nh, qq = nq;
        if (p0 + PARTS * sg < pend) q4k_load(wa, ra, wb, rb, nb, p0 + PARTS * sg, pend, nh, nq);
      } else {
        q4k_load(wa, ra, wb, rb, nb, p0, pend, hh, qq);
      }
      q4k_math(hh, qq, p0, pend, kx, acc);
    }
  } else if (dt == kPkQ6K || (kQ6kSlots && dt == kPkQ6KSlots)) {
    // 8-byte loads of a part's words, then its math (session 28, N4-N5: against one word a load, the same sums, 8B
    // q4_k_m +0.4-0.6%, 1B +0.2%). The words a step ahead, as PIPE does for Q4_K, spilled (128 registers at 512 wide,
    // 256 bytes; 8B -23%). kPkQ6KSlots: x is the f16 slots (P5 in the slot forms).
    uint nb = k / 256u;
    RU2 wa = RU2(a), wb = RU2(b);
    for (uint part = k0 / 32u + lane; part < k1 / 32u; part += sg) {
      uint l0 = (part & 3u) * 8u, xo = (part >> 3) * 256u + 128u * ((part >> 2) & 1u) + l0 - kx;
      Q6kW pa = q6k_load(wa, ra, nb, part), pb = q6k_load(wb, rb, nb, part);
      if (kQ6kSlots && dt == kPkQ6KSlots)
        acc += q6k_dot2(pa, pb, l0, xo, true, ((part >> 3) - kx / 256u) * kPkSlotRec);
      else
        acc += q6k_dot2(pa, pb, l0, xo, false, 0u);
    }
  } else if (dt == kPkQ8_0) {
    uint nb = k / 32u;
    RU wa = RU(a), wb = RU(b);
    for (uint part = k0 / 16u + lane; part < k1 / 16u; part += sg) {
      uint blk = part >> 1, t = part & 1u;
      uint xo = blk * 32u + 16u * t - kx;
      vec4 x0 = xin4(xo), x1 = xin4(xo + 4u), x2 = xin4(xo + 8u), x3 = xin4(xo + 12u);
      float s = dot(x0 + x1 + x2 + x3, vec4(1.0));
      for (uint r = 0u; r < 2u; ++r) {
        RU w = r == 0u ? wa : wb;
        uint bo = ((r == 0u ? ra : rb) * nb + blk) * 34u;
        float d = bs_half_at(w.v[bo >> 2], bo);
        uint qo = bo + 2u + 16u * t, i = qo >> 2, sh = (qo & 2u) * 8u;
        uint w0 = w.v[i], w1 = w.v[i + 1u], w2 = w.v[i + 2u], w3 = w.v[i + 3u], w4 = sh != 0u ? w.v[i + 4u] : 0u;
        float f = dot(bs_byte_biased(bs_funnel(w0, w1, sh)), x0) + dot(bs_byte_biased(bs_funnel(w1, w2, sh)), x1) +
                  dot(bs_byte_biased(bs_funnel(w2, w3, sh)), x2) + dot(bs_byte_biased(bs_funnel(w3, w4, sh)), x3);
        acc[r] += d * (256.0 * f - 384.0 * s);
      }
    }
  } else {  // F16: a part is 8 values (4 words) of a row
    RU4 wa = RU4(a), wb = RU4(b);  // rows are k * 2 bytes: 16-byte aligned when k % 8 == 0
    // One part per lane per step: 2 and 4 (loads issued together) moved the 8B f16 kernel by under 1%
    // (6.84 -> 6.82 ms; session 11 B1): its matvecs already stream at ~2.7 TB/s between the phases' fixed costs.
    uint np = k / 8u;
    for (uint part = k0 / 8u + lane; part < k1 / 8u; part += sg) {
      vec4 x0 = xin4(part * 8u - kx), x1 = xin4(part * 8u + 4u - kx);
      uvec4 qa = wa.v[ra * np + part], qb = wb.v[rb * np + part];
      if (LOADS_ONLY != 0u) {  // timing breakdowns
        uvec4 f = qa ^ qb;
        acc.x += float((f.x ^ f.y ^ f.z ^ f.w) & 1u);
        continue;
      }
      for (uint r = 0u; r < 2u; ++r) {
        uvec4 q = r == 0u ? qa : qb;
        vec4 lo = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y)), hi = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
        acc[r] += dot(lo, x0) + dot(hi, x1);
      }
    }
  }
  return task_sum(acc);
}

// ------------------------------------------------------------------------------------------- staging
// Staging loads go out kU per invocation before any is used: one L2 / DRAM round trip per kU x WG
// values instead of one per WG (the loops were serial chains: ~4 us per phase of pure overhead in the
// second H100 run, against a 0.46 us grid barrier).
const uint kU = 8u;

// sx = RMSNorm(x) * (offset + w) over dim; with `slots` (a Q4_K matrix in the phase), the slots too, in the same
// pass as the norm's scale.
void stage_norm(uvec2 nw, bool slots) {
  if ((skip_mask() & 160u) != 0u) {
    barrier();
    return;
  }
  RF w = RF(nw);
  uint wg = gl_WorkGroupSize.x;
  float ss = 0.0;
  for (uint i0 = gl_LocalInvocationIndex; i0 < p.dim; i0 += kU * wg) {
    float v[kU], g[kU];
    for (uint u = 0u; u < kU; ++u) {
      uint i = min(i0 + u * wg, p.dim - 1u);
      g[u] = w.v[i];
      v[u] = (PROBE & 32u) != 0u ? g[u] : x[i];
    }
    for (uint u = 0u; u < kU; ++u)
      if (i0 + u * wg < p.dim) {
        ss += v[u] * v[u];
        sx_set(i0 + u * wg, v[u] * (p.offset + g[u]));
      }
  }
  float scale;
  if ((PROBE & 64u) != 0u) {
    scale = inversesqrt(ss + p.eps);
    barrier();
  } else {
    scale = inversesqrt(workgroup_sum(ss) / float(p.dim) + p.eps);  // its barriers publish sx
  }
  if (kQ4kSlots && slots) {
    stage_quantize_scaled(p.dim, scale);
    return;
  }
  for (uint i = gl_LocalInvocationIndex; i < p.dim; i += wg) sx_set(i, sx_get(i) * scale);
  barrier();
}

// The Q4_K slots of RMSNorm(x) * (offset + w) over dim (dim % 256 == 0, dim / 16 <= the workgroup: the host sets
// NORM_SLOTS only then), with no floats staged (a phase whose matrices are all Q4_K reads nothing else) unless `floats`
// (P1 with a q/k/v matrix that reads floats: the scaled values into sx too): invocation g loads slot g's 16 values of x
// and of the weights, the squares are summed over the workgroup, then slot g is made from the scaled values.
void stage_norm_slots(uvec2 nw, bool floats) {
#if defined(PK_INT_DOT) || defined(PK_HALF_DOT)
  if ((skip_mask() & 160u) != 0u) {
    barrier();
    return;
  }
  RF4 w = RF4(nw);
  uint g = gl_LocalInvocationIndex, first = q8x_row_first(g) / 4u;
  bool mine = g < p.dim / 16u;
  float ss = 0.0;
  vec4 v[4];
  for (uint u = 0u; u < 4u; ++u) {
    vec4 gv = mine ? w.v[first + u] : vec4(0.0), xv = (PROBE & 32u) != 0u ? gv : mine ? x4[first + u] : vec4(0.0);
    ss += dot(xv, xv);
    v[u] = xv * (p.offset + gv);
  }
  float scale = (PROBE & 64u) != 0u ? inversesqrt(ss + p.eps) : inversesqrt(workgroup_sum(ss) / float(p.dim) + p.eps);
  if (mine) {
    for (uint u = 0u; u < 4u; ++u) {
      v[u] *= scale;
      if (floats) sx_set4(4u * (first + u), v[u]);
    }
    slot_put(g, v);
  }
  barrier();
#endif
}

// HEAD_Q8X: x's output norm into quantize_x_q8's form at binding 7 (dim % 256 == 0; a grid barrier before: x is
// final).
// Invocation g of the grid takes slots g, g + the grid's invocations, .. (16 values of x and of the weights as vec4s
// each, as rms_norm_q8x takes them); each workgroup that holds slots sums the squares of all of x, the others return
// at once.
void head_norm_q8x() {
  uint slots = p.dim / 16u, first_slot = gl_WorkGroupID.x * gl_WorkGroupSize.x;
  if (first_slot >= slots) return;  // uniform per workgroup
  float ss = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < p.dim / 4u; i += gl_WorkGroupSize.x) {
    vec4 v = x4[i];
    ss += dot(v, v);
  }
  float scale = inversesqrt(workgroup_sum(ss) / float(p.dim) + p.eps);
  RF4 w = RF4(uvec2(p.out_norm_lo, p.out_norm_hi));
  for (uint s = first_slot + gl_LocalInvocationIndex; s < slots; s += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint first = q8x_row_first(s) / 4u;
    vec4 v[4];
    for (uint u = 0u; u < 4u; ++u) v[u] = x4[first + u] * scale * (p.offset + w.v[first + u]);
    uvec4 q1, q2;
    vec2 ds;
    q8x_quantize(v[0], v[1], v[2], v[3], q1, q2, ds);
    Q8X_STORE(xq_out, (s / 16u) * kQ8xBlockWords, s % 16u, q1, q2, ds);
  }
}

// sx = scratch[off .. off + n).
void stage_copy(uint off, uint n) {
  if ((skip_mask() & 288u) != 0u) {
    barrier();
    return;
  }
  uint wg = gl_WorkGroupSize.x;
  for (uint i0 = gl_LocalInvocationIndex; i0 < n; i0 += kU * wg) {
    float v[kU];
    for (uint u = 0u; u < kU; ++u) v[u] = sc[off + min(i0 + u * wg, n - 1u)];
    for (uint u = 0u; u < kU; ++u)
      if (i0 + u * wg < n) sx_set(i0 + u * wg, v[u]);
  }
  barrier();
}

// sx = the attention output: each head's n_act partials merged, o = sum_s e^(m_s - M) o_s / sum_s e^(m_s - M) l_s.
// Each element loads its head's (m, l) pairs and its own partials together, kMF splits a round, and folds them in
// with a running max. One invocation a head reducing the weights into shared memory first, behind a barrier, cost a
// chain of loads and the barrier: 1B q4_k_m 967.6 -> 974.6 tok/s, 8B q4_k_m 266.4 -> 269.0
// (benchmarks/results/2026-11-28-h200-session21.md, F3).
// One element an invocation: two, their loads in flight together, ran even with it (F3; session 27's M3: 1B 1154 /
// 1156 tok/s, 8B 304 / 303) but held 24 loads in registers at once, and that set the kernel's register peak (M2-M3:
// 119 registers at 512 wide with two, 115 with one); at 640 wide two spilled under the driver's cap of 96, one fits.
const uint kMF = 4u;  // splits folded in a round (the grid's 132 workgroups make 4 a head at 32 heads)
// stage_merged(i0, n, n_act): sx[0 .. n) = the merged values i0 .. i0 + n of the attention output.
void stage_merged(uint i0, uint n, uint n_act) {
  if ((skip_mask() & 32u) != 0u) {
    barrier();
    return;
  }
  uint hd = p.head_dim, ps = hd + 2u;
  for (uint ii = gl_LocalInvocationIndex; ii < n; ii += gl_WorkGroupSize.x) {
    uint i = i0 + ii, base = p.part_off + (i / hd) * p.splits * ps;
    float big = -3.402823466e38, den = 0.0, num = 0.0;
    for (uint s0 = 0u; s0 < n_act; s0 += kMF) {
      float ms[kMF], ls[kMF], os[kMF];
      [[unroll]] for (uint u = 0u; u < kMF; ++u)
        if (s0 + u < n_act) {
          uint b = base + (s0 + u) * ps;
          ms[u] = sc[b + hd];
          ls[u] = sc[b + hd + 1u];
          os[u] = sc[b + i % hd];
        }
      float nb = big;
      [[unroll]] for (uint u = 0u; u < kMF; ++u)
        if (s0 + u < n_act) nb = max(nb, ms[u]);
      float a = exp(big - nb);
      den *= a;
      num *= a;
      big = nb;
      [[unroll]] for (uint u = 0u; u < kMF; ++u)
        if (s0 + u < n_act) {
          float w = exp(ms[u] - nb);
          den += w * ls[u];
          num += w * os[u];
        }
    }
    sx_set(ii, num / den);
  }
  barrier();
}
void stage_attention(uint n_act) { stage_merged(0u, p.q_dim, n_act); }

// STREAM = 1: the gate/up phase's Q4_K tasks run as one stream of steps per subgroup (gate_up_q4k, below), so that a
// task's first loads are issued during the last step of the task before it; dot2 starts every task cold, one memory
// round trip with nothing in flight. 0: every task through dot2 (A/B runs).
layout(constant_id = 12) const uint STREAM = 1;
// EARLY = 1: the stream's first loads are issued before the phase's staging (the weights do not depend on x), so their
// round trip overlaps the staging's; 2: before the wait at the grid barrier that opens the phase (gate_up_q4k takes that
// barrier: its round trip overlaps the wait); 0: after the staging (A/B runs).
layout(constant_id = 13) const uint EARLY = 2;
// P4's RMSNorm for gate_up_q4k (its matrices are Q4_K): straight into the slots where NORM_SLOTS, else the floats, then
// the slots (PROBE 256 takes it away).
void stage_gate_up_norm(uvec2 nw) {
  if ((PROBE & 256u) != 0u)
    barrier();
  else if (NORM_SLOTS != 0u && kQ4kSlots)
    stage_norm_slots(nw, false);
  else
    stage_norm(nw, true);
}

// P4 with Q4_K gate and up matrices a, b: xn = RMSNorm(x) (norm weights nw) staged, then h[t] = act(a_t . xn) *
// (b_t . xn) for the subgroup's tasks t = t0, t0 + dt, ... < ffn_dim, their steps in one loop that loads the next step
// (of this task or the next) before this one's math.
void gate_up_q4k(uvec2 a, uvec2 b, uint t0, uint dt, uvec2 nw) {
  uint lane = gl_SubgroupInvocationID, span = PARTS * gl_SubgroupSize;
  uint nb = p.dim / 256u, pend = p.dim / 32u, steps = (pend + span - 1u) / span;
  RU4 wa = RU4(a), wb = RU4(b);
  uvec4 hh[2u * kMaxParts], qq[2u * kMaxParts], nh[2u * kMaxParts], nq[2u * kMaxParts];
  uint gb = EARLY == 2u ? grid_arrive() : 0u;
  if (EARLY == 0u) stage_gate_up_norm(nw);
  if (t0 < p.ffn_dim) q4k_load(wa, t0, wb, t0, nb, lane, pend, nh, nq);
  if (EARLY == 2u) grid_wait(gb);
  if (EARLY != 0u) stage_gate_up_norm(nw);
  vec2 acc = vec2(0.0);
  for (uint t = t0, s = 0u; t < p.ffn_dim;) {
    hh = nh, qq = nq;
    uint sn = s + 1u == steps ? 0u : s + 1u, tn = sn == 0u ? t + dt : t;
    if (tn < p.ffn_dim) q4k_load(wa, tn, wb, tn, nb, sn * span + lane, pend, nh, nq);
    q4k_math(hh, qq, s * span + lane, pend, 0u, acc);
    if (sn == 0u) {
      vec2 r = task_sum(acc);
      if (lane == 0u) sc[p.h_off + t] = bs_act(r.x, p.act) * r.y;
      acc = vec2(0.0);
    }
    t = tn, s = sn;
  }
}

// ----------------------------------------------------------------------------------------- attention
// TPP (1, 2 or 4; persistent.cpp picks it by head_dim): invocations a position in the scores, so a block of positions
// is wg / TPP long. An item's blocks run one after another, each a chain of K loads, 5 barriers and V loads: fewer,
// longer blocks won where an invocation's share of a key row stays at 8 pieces (head_dim 64 at TPP 2).
layout(constant_id = 25) const uint TPP = 4u;
const uint MAX_HD4 = 64u;
shared vec4 s_q[MAX_HD4];
shared float s_sc[gl_WorkGroupSize.x / TPP];
shared vec4 s_part[gl_WorkGroupSize.x];

// The partial (o, m, l) of head h's split sp to scratch: o the sum of the V groups' accumulators (each invocation's acc,
// none past the groups), m the scores' max, l the weights' sum. In uniform control flow; s_part is free after it.
void store_partial(uint h, uint sp, vec4 acc, float m, float lsum) {
  uint tid = gl_LocalInvocationIndex, hd4 = p.head_dim / 4u, groups = gl_WorkGroupSize.x / hd4;
  s_part[tid] = tid / hd4 < groups ? acc : vec4(0.0);
  barrier();
  uint pbase = p.part_off + (h * p.splits + sp) * (p.head_dim + 2u);
  if (tid < hd4) {
    vec4 t = vec4(0.0);
    for (uint k = 0u; k < groups; ++k) t += s_part[k * hd4 + tid];
    sc[pbase + 4u * tid] = t.x;
    sc[pbase + 4u * tid + 1u] = t.y;
    sc[pbase + 4u * tid + 2u] = t.z;
    sc[pbase + 4u * tid + 3u] = t.w;
  }
  if (tid == 0u) {
    sc[pbase + p.head_dim] = m;
    sc[pbase + p.head_dim + 1u] = lsum;
  }
  barrier();
}

// Item (h, sp): positions [j0, j1) of head h, in blocks of WG / 4 positions (4 invocations per
// position for the scores), with an online softmax across blocks; the partial (o, m, l) to scratch.
void attention_item(uint l, uint h, uint sp, uint j0, uint j1) {
  uint tid = gl_LocalInvocationIndex, wg = gl_WorkGroupSize.x;
  uint hd4 = p.head_dim / 4u, kvh = h / (p.n_heads / p.n_kv_heads), kv4 = p.kv_dim / 4u;
  KV4 kc = KV4(addr(l, kPkKCache)), vc = KV4(addr(l, kPkVCache));
  for (uint d = tid; d < hd4; d += wg)
    s_q[d] = vec4(sc[h * p.head_dim + 4u * d], sc[h * p.head_dim + 4u * d + 1u], sc[h * p.head_dim + 4u * d + 2u],
                  sc[h * p.head_dim + 4u * d + 3u]);
  barrier();
  uint groups = wg / hd4, g = tid / hd4, d = tid % hd4, quarter = tid % TPP, bsz = wg / TPP;
  float m = -3.402823466e38, lsum = 0.0;
  vec4 acc = vec4(0.0);
  for (uint b0 = j0; b0 < j1; b0 += bsz) {
    uint n = min(bsz, j1 - b0), i = tid / TPP;
    float s = 0.0;
    if (i < n) {
      uint kb = (b0 + i) * kv4 + kvh * hd4;
      for (uint dd = quarter; dd < hd4; dd += TPP) s += dot(s_q[dd], vec4(kc.v[kb + dd]));
    }
    s_part[tid].x = s;
    barrier();
    float bm = -3.402823466e38;
    if (quarter == 0u && i < n) {
      s = s_part[tid].x;
      [[unroll]] for (uint t = 1u; t < TPP; ++t) s += s_part[tid + t].x;
      s *= p.scale;
      s_sc[i] = s;
      bm = s;
    }
    float mn = max(m, workgroup_max(bm));  // its barriers publish s_sc
    float e = 0.0;
    if (tid < n) {
      e = exp(s_sc[tid] - mn);
      s_sc[tid] = e;
    }
    float corr = exp(m - mn);
    lsum = lsum * corr + workgroup_sum(e);  // and these publish the weights
    acc *= corr;
    if (g < groups)
      for (uint j = g; j < n; j += groups) acc += s_sc[j] * vec4(vc.v[(b0 + j) * kv4 + kvh * hd4 + d]);
    m = mn;
    barrier();  // s_sc and s_part are reused by the next block
  }
  store_partial(h, sp, acc, m, lsum);  // its last barrier: s_q and s_part are reused by the next item
}

// ATTN_GQA (1 in the long-context recording's pipeline, Model::long_context_from; 0 in the other): every item is
// (kv head, chunk) and takes the kv head's G = n_heads / n_kv_heads query heads (G <= 4) together. Each K row piece is
// loaded once for the G heads, and the grid's workgroups go to G times the chunks a head (p.splits is then a kv head's
// chunks, grid / n_kv_heads by default), so a long context's chunk is G times shorter: fewer blocks, each a chain of K
// loads, 5 barriers and V loads; each V row piece is loaded once too, into G accumulators. The G heads' q rows are
// staged in the staging area (free between P1's reads and the o phase's merge; the host checks G x head_dim fits),
// their scores go in s_part's first slot of each position's TPP, and s_q serves as the vec4 reductions' scratch
// (MAX_HD4 = 64 vec4s, one a subgroup). (V sums a head a group of invocations, one accumulator each, lost to this at
// 4,096 + 128 on the H200: 1B +3.7% against +8.5%, 8B +3.1% against +6.9%; session 40, W9-W10.)
layout(constant_id = 26) const uint ATTN_GQA = 0;
vec4 workgroup_sum4(vec4 v) {
  v = subgroupAdd(v);
  if (subgroupElect()) s_q[gl_SubgroupID] = v;
  barrier();
  vec4 s = vec4(0.0);
  for (uint i = 0u; i < gl_NumSubgroups; ++i) s += s_q[i];
  barrier();
  return s;
}
vec4 workgroup_max4(vec4 v) {
  v = subgroupMax(v);
  if (subgroupElect()) s_q[gl_SubgroupID] = v;
  barrier();
  vec4 s = vec4(-3.402823466e38);
  for (uint i = 0u; i < gl_NumSubgroups; ++i) s = max(s, s_q[i]);
  barrier();
  return s;
}
// Item (kvh, sp): positions [j0, j1) of kv head kvh's query heads kvh * G .. + G; each head's partial (o, m, l) to
// scratch at its split sp, as attention_item writes it.
void attention_group_item(uint l, uint kvh, uint sp, uint j0, uint j1) {
  uint tid = gl_LocalInvocationIndex, wg = gl_WorkGroupSize.x;
  uint G = p.n_heads / p.n_kv_heads, h0 = kvh * G, hd4 = p.head_dim / 4u, kv4 = p.kv_dim / 4u;
  KV4 kc = KV4(addr(l, kPkKCache)), vc = KV4(addr(l, kPkVCache));
  for (uint i = tid; i < G * hd4; i += wg) {
    uint b = h0 * p.head_dim + 4u * i;
    sx_set4(4u * i, vec4(sc[b], sc[b + 1u], sc[b + 2u], sc[b + 3u]));
  }
  barrier();
  uint groups = wg / hd4, g = tid / hd4, d = tid % hd4, quarter = tid % TPP, bsz = wg / TPP;
  vec4 m = vec4(-3.402823466e38), lsum = vec4(0.0);
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
  for (uint b0 = j0; b0 < j1; b0 += bsz) {
    uint n = min(bsz, j1 - b0), i = tid / TPP;
    vec4 s = vec4(0.0);
    if (i < n) {
      uint kb = (b0 + i) * kv4 + kvh * hd4;
      for (uint dd = quarter; dd < hd4; dd += TPP) {
        vec4 k = vec4(kc.v[kb + dd]);
        s.x += dot(xin4(4u * dd), k);
        if (G > 1u) s.y += dot(xin4(4u * (hd4 + dd)), k);
        if (G > 2u) s.z += dot(xin4(4u * (2u * hd4 + dd)), k);
        if (G > 3u) s.w += dot(xin4(4u * (3u * hd4 + dd)), k);
      }
    }
    s_part[tid] = s;
    barrier();
    vec4 bm = vec4(-3.402823466e38);
    if (quarter == 0u && i < n) {
      s = s_part[tid];
      [[unroll]] for (uint t = 1u; t < TPP; ++t) s += s_part[tid + t];
      s *= p.scale;
      s_part[tid] = s;  // position i's scores: its own slot, which no other invocation reads
      bm = s;
    }
    vec4 mn = max(m, workgroup_max4(bm));  // its barriers publish the scores
    vec4 e = vec4(0.0);
    if (tid < n) {
      e = exp(s_part[TPP * tid] - mn);
      s_part[TPP * tid] = e;
    }
    vec4 corr = exp(m - mn);
    lsum = lsum * corr + workgroup_sum4(e);  // and these publish the weights
    [[unroll]] for (uint k = 0u; k < 4u; ++k) acc[k] *= corr[k];
    if (g < groups)
      for (uint j = g; j < n; j += groups) {
        vec4 w = s_part[TPP * j], v = vec4(vc.v[(b0 + j) * kv4 + kvh * hd4 + d]);
        [[unroll]] for (uint k = 0u; k < 4u; ++k) acc[k] += w[k] * v;
      }
    m = mn;
    barrier();  // s_part is reused by the next block
  }
  [[unroll]] for (uint k = 0u; k < 4u; ++k) {
    if (k >= G) break;
    store_partial(h0 + k, sp, acc[k], m[k], lsum[k]);  // its last barrier: the staging area is free for the next item
  }
}

#ifdef PK_FOLD_O
// --------------------------------------------------------------------------- the o projection, folded in
// PK_FOLD_O: the o projection runs in the attention phase, without a grid barrier between them (one fewer a layer).
// Heads go in groups of fold_heads(), whose columns of W_o [dim, q_dim] are one Q4_K block column (256 wide; the host
// folds only Q4_K W_o where head_dim divides 256). A workgroup counts each attention item it finishes (a head's context
// chunk) on its group's sync word; then, for each of its o tasks (a group's part of W_o's rows; the grid's workgroups
// shared out over the groups), it waits for that group's count alone, merges the group's heads into sx (256 floats)
// and takes the part's rows: an invocation a row, its sum added into x by a float atomic. The groups' adds into a row
// land in any order, so on a grid of more than one workgroup x's sums (and the logits) are not bitwise the same from
// run to run: 4e-3 worst rel L2 between two runs of the H200's 1B q4_k_m, top-1 99.5%, the h16 kernel's level for
// any reordering of its sums (BLUESHIFT_PERSISTENT_FOLD_O=0 is bitwise reproducible). Sums in 64-bit fixed point (the
// same in any order) cost the 8B 4.3% against no fold and the 1B 3.3% against float atomics (session 30, Q3). Every
// item is counted before its workgroup waits on any group, and the grid is resident at once, so every count
// completes. The timing switches LOADS_ONLY and PROBE do not reach these rows (p.skip's bit 2 still takes them away).
void group_arrive(uint g) { count_in(kPkSyncGroups + kPkSyncGroupStride * g); }  // the item's partials written
void group_wait(uint g, uint target) { await_word(kPkSyncGroups + kPkSyncGroupStride * g, target, true); }
// Row r of a Q4_K matrix of nb blocks a row, over its block blk, against sx[0 .. 256) (the f16 slots of it in the
// PK_HALF_DOT form, as q4k_math meets them). Each part's sum is q4k_math's f16 form's: one helper under both changed the
// gate/up stream's code and cost the 1B 0.9% (8B +0.4%; benchmarks/results/2026-11-30-h200-session31.md, R3), so the
// two stay written out.
float q4k_row_block(RU4 w, uint r, uint nb, uint blk) {
  uint b = (r * nb + blk) * 9u;
  float s = 0.0;
#ifdef PK_HALF_DOT
  uvec4 h = w.v[b];
  vec2 dm = unpackHalf2x16(h.x);  // the f16 slots of sx (stage_quantize): part t meets slots t and t + 8
  // Half the block's codes at a time: all 8 words at once spilled the 8B's kernel at 640 wide (48 bytes under the
  // driver's cap of 96 registers); the halves do not, and ran 336.2 tok/s against 333.5 there, the 1B even (1211.6
  // against 1213.9-1215.6; benchmarks/results/2026-11-29-h200-session30.md, Q4).
  for (uint hf = 0u; hf < 8u; hf += 4u) {
    uvec4 q[4];
    [[unroll]] for (uint u = 0u; u < 4u; ++u) q[u] = w.v[b + 1u + hf + u];
    [[unroll]] for (uint u = 0u; u < 4u; ++u) {
      uint t = hf + u;
      vec4 sm = q4k_scales_pair(h.yzw, t >> 1);
      vec4 ss = uintBitsToFloat(smem[t + 32u]);  // block 0's record (slot_at)
      vec2 sl = ss.xy, sh = ss.zw;
      float fa = sl.x * q4k_half16(q[u], 0x000F000Fu, smem[t], smem[t + 16u]);
      float fb = sh.x * q4k_half16(q[u], 0x00F000F0u, smem[t + 8u], smem[t + 24u]);
      s += dm.x * (sm.x * fa + sm.y * fb) - dm.y * (sm.z * sl.y + sm.w * sh.y);
    }
  }
#else
  uvec4 h = w.v[b], q[8];
  [[unroll]] for (uint t = 0u; t < 8u; ++t) q[t] = w.v[b + 1u + t];
  [[unroll]] for (uint t = 0u; t < 8u; ++t) s += q4k_dot(h, q[t], t >> 1, q4k_x(64u * (t >> 1) + 16u * (t & 1u)));
#endif
  return s;
}
// Part `part` of `parts` of W_o's rows (layer l) against group g's merged heads, added into x.
void fold_o(uint l, uint g, uint part, uint parts, uint n_act) {
  stage_merged(g * 256u, 256u, n_act);
  stage_quantize(256u);  // the f16 slots (PK_HALF_DOT; nothing in the float form)
  if ((skip_mask() & 4u) == 0u) {
    RU4 w = RU4(addr(l, kPkO));
    uint nb = p.q_dim / 256u, r1 = (part + 1u) * p.dim / parts;
    for (uint r = part * p.dim / parts + gl_LocalInvocationIndex; r < r1; r += gl_WorkGroupSize.x)
      atomicAdd(x[r], q4k_row_block(w, r, nb, g));
  }
  barrier();  // sx is restaged by the next item
}
#endif

// ------------------------------------------------------------------------------------------------ main
// x[ra] and x[rb] (rb == ra: the odd last row, added once) += s, from their values x0 read before the dot products
// (X_EARLY) or read here.
void add_rows(uint ra, uint rb, vec2 x0, vec2 s) {
  if (X_EARLY == 0u) x0 = vec2(x[ra], x[rb]);
  x[ra] = x0.x + s.x;
  if (rb != ra) x[rb] = x0.y + s.y;
}
// x += W h over columns [k0, k1) of W [dim, k] (dtype dt; h staged): the o and down phases. Two rows a task,
// grid-stride over teams of TEAM subgroups of a workgroup (a row's column passes fall to the same team); p.skip's bit
// `skip` skips it. TEAM > 1 splits a task's columns over the team (contiguous runs of 256-column blocks), and member 0
// adds the partial sums in a fixed order: fewer dependent steps a task where the tasks do not fill the grid's
// subgroups (the 1B's down projection: 1024 tasks of 8 steps; on 1056 teams of 2, one round of 4). Every team runs
// the same number of rounds, so each round's workgroup barrier is in uniform control flow. The partials alternate
// between two halves of s_part (free outside attention), and a member reaches a half again only past the next round's
// barrier, after member 0 has read it.
void add_matvec(uint dt, uvec2 w, uint k, uint k0, uint k1, uint skip) {
  bool lane0 = gl_SubgroupInvocationID == 0u;
  if (TEAM == 1u) {  // the plain grid-stride loop: the counted one below cost 0.2-0.6% at TEAM 1 (session 24, J1)
    uint nsub = gl_NumWorkGroups.x * gl_NumSubgroups;
    for (uint t = (skip_mask() & skip) != 0u ? ~0u : first_task(1u, gl_SubgroupID); t < (p.dim + 1u) / 2u; t += nsub) {
      uint ra = 2u * t, rb = min(2u * t + 1u, p.dim - 1u);  // rb == ra: the odd last row, added once
      vec2 x0 = X_EARLY != 0u && lane0 ? vec2(x[ra], x[rb]) : vec2(0.0);
      vec2 s = dot2(dt, w, ra, w, rb, k, k0, k0, k1);
      if (lane0) add_rows(ra, rb, x0, s);
    }
    return;
  }
  uint nt = (p.dim + 1u) / 2u, tpw = gl_NumSubgroups / TEAM, team = gl_SubgroupID / TEAM, m = gl_SubgroupID % TEAM;
  uint nteams = gl_NumWorkGroups.x * tpw, first = first_task(TEAM, team);
  uint rounds = (skip_mask() & skip) != 0u ? 0u : (nt + nteams - 1u) / nteams, nbk = (k1 - k0 + 255u) / 256u;
  uint c0 = k0 + (m * nbk / TEAM) * 256u, c1 = min(k1, k0 + ((m + 1u) * nbk / TEAM) * 256u);
  for (uint r = 0u; r < rounds; ++r) {
    uint t = first + r * nteams, ra = 2u * t, rb = min(2u * t + 1u, p.dim - 1u);  // rb == ra: the odd last row
    bool live = t < nt, own = live && m == 0u && lane0;  // own: the lane that adds into x
    vec2 x0 = X_EARLY != 0u && own ? vec2(x[ra], x[rb]) : vec2(0.0);
    vec2 s = live && c0 < c1 ? dot2(dt, w, ra, w, rb, k, k0, c0, c1) : vec2(0.0);
    if (TEAM > 1u) {
      uint half_ = (r & 1u) * gl_NumSubgroups;
      if (lane0) s_part[half_ + gl_SubgroupID].xy = s;
      barrier();
      if (own) {
        s = vec2(0.0);
        for (uint i = 0u; i < TEAM; ++i) s += s_part[half_ + team * TEAM + i].xy;
      }
    }
    if (own) add_rows(ra, rb, x0, s);
  }
}

void main() {
  uint pos = state[1];
  uint nsg = gl_NumSubgroups, gsub = first_task(1u, gl_SubgroupID), nsub = gl_NumWorkGroups.x * nsg;
  bool lane0 = gl_SubgroupInvocationID == 0u;
  uint hd = p.head_dim, half_hd = hd / 2u;
#ifdef PK_FOLD_O
  uint fold_done = 0u;  // the count every group's word reaches once this layer's items are done (uniform)
#endif
  tbl_fetch(0u);
  barrier();
  for (uint l = 0u; l < p.n_layers; ++l) {
    // P1: q, k, v.
    bool all_q4k = tb(l, kPkQ + 2u) == kPkQ4K && tb(l, kPkK + 2u) == kPkQ4K && tb(l, kPkV + 2u) == kPkQ4K,
         any_q4k = tb(l, kPkQ + 2u) == kPkQ4K || tb(l, kPkK + 2u) == kPkQ4K || tb(l, kPkV + 2u) == kPkQ4K;
    if ((PROBE & 128u) != 0u)
      barrier();
    else if (NORM_SLOTS != 0u && kQ4kSlots && (all_q4k || (NORM_SLOTS == 2u && any_q4k)))
      stage_norm_slots(addr(l, kPkAttnNorm), !all_q4k);
    else
      stage_norm(addr(l, kPkAttnNorm), any_q4k);
    {
      uint tq = p.q_dim / 2u, tk = p.kv_dim / 2u, n_tasks = tq + 2u * tk;
      // QKV_ORDER: the first q_lead places of the grid-stride order are q tasks, so the subgroups that take a task in
      // the second round (places nsub..) took a q task in the first (places 0..q_lead): two Q4_K tasks, never a q task
      // and a Q6_K v task (the 8B and 3B: 3,072 and 2,560 tasks on 2,640 and 2,112 subgroups).
      uint q_lead = QKV_ORDER != 0u && n_tasks > nsub ? min(n_tasks - nsub, tq) : 0u;
      bool local_freq = tb(l, kPkLocal) != 0u;
      for (uint i = (skip_mask() & 1u) != 0u ? n_tasks : gsub; i < n_tasks; i += nsub) {
        uint t = i < q_lead ? i : i < q_lead + 2u * tk ? tq + (i - q_lead) : i - 2u * tk;  // the task at place i
        uint which = t < tq ? 0u : t < tq + tk ? 1u : 2u;  // q, k, v
        uint tt = which == 0u ? t : which == 1u ? t - tq : t - tq - tk;
        uint e = which == 0u ? kPkQ : which == 1u ? kPkK : kPkV;
        uint ra, rb;
        if (which == 2u) {
          ra = 2u * tt, rb = 2u * tt + 1u;
        } else {
          ra = (tt / half_hd) * hd + tt % half_hd, rb = ra + half_hd;
        }
        uvec2 w = addr(l, e);
        vec2 s = dot2(tb(l, e + 2u), w, ra, w, rb, p.dim, 0u, 0u, p.dim);
        uvec2 bias = addr(l, kPkBiasQ + 2u * which);
        if (lane0) {
          if (bias != uvec2(0u)) s += vec2(RF(bias).v[ra], RF(bias).v[rb]);
          if (which < 2u) {
            float f = local_freq ? freq_l[tt % half_hd] : freq_g[tt % half_hd];
            s = rope_rotate(s.x, s.y, float(pos), f);
          }
          if (which == 0u) {
            sc[ra] = s.x;
            sc[rb] = s.y;
          } else {
            KVh c = KVh(addr(l, which == 1u ? kPkKCache : kPkVCache));
            c.v[pos * p.kv_dim + ra] = float16_t(s.x);
            c.v[pos * p.kv_dim + rb] = float16_t(s.y);
          }
        }
      }
    }
    uint lo = bs_window_lo(pos, tb(l, kPkWindow));
    // ATTN_GQA: the items are (kv head, chunk), and p.splits counts a kv head's chunks.
    uint G = p.n_heads / p.n_kv_heads, len = pos + 1u - lo, chunk = max(32u, (len + p.splits - 1u) / p.splits);
    const bool grouped = ATTN_GQA != 0u;
    uint qkv_done = grid_arrive();
    touch_kv(l, lo, pos);
    grid_wait(qkv_done);
    // P2: attention items (head, chunk); the chunking follows the position so that the grid is filled.
    uint n_act = (len + chunk - 1u) / chunk;
#ifdef PK_FOLD_O
    // P2 + P3: the items, each counted on its group's word, then each item's part of x += W_o att (above).
    uint gh = fold_heads(), items = (grouped ? p.n_kv_heads : p.n_heads) * n_act;
    fold_done += gh * n_act;
    for (uint item = gl_WorkGroupID.x; item < items; item += gl_NumWorkGroups.x) {
      uint h = item / n_act, sp = item % n_act, j0 = lo + sp * chunk, j1 = lo + min((sp + 1u) * chunk, len);
      if (grouped) {
        if ((skip_mask() & 2u) == 0u) attention_group_item(l, h, sp, j0, j1);
        for (uint k = 0u; k < G; ++k) group_arrive((h * G + k) / gh);  // each head's item counted, as below
      } else {
        if ((skip_mask() & 2u) == 0u) attention_item(l, h, sp, j0, j1);
        group_arrive(h / gh);
      }
    }
    // The o rows in ng x parts tasks over the whole grid, whatever the items' count: at n_act 1-2 (the first ~100
    // positions) a part an item left the 8B's o rows to 32-64 workgroups (P3 0.50 ms a step against 0.16 unfolded;
    // session 30, Q6).
    uint ng = p.n_heads / gh, parts = p.fold_parts != 0u ? p.fold_parts : max(1u, gl_NumWorkGroups.x / ng);
    for (uint t = gl_WorkGroupID.x; t < ng * parts; t += gl_NumWorkGroups.x) {
      group_wait(t / parts, fold_done);
      fold_o(l, t / parts, t % parts, parts, n_act);
    }
#else
    for (uint item = (skip_mask() & 2u) != 0u ? ~0u : gl_WorkGroupID.x;
         item < (grouped ? p.n_kv_heads : p.n_heads) * n_act; item += gl_NumWorkGroups.x) {
      uint h = item / n_act, sp = item % n_act, j0 = lo + sp * chunk, j1 = lo + min((sp + 1u) * chunk, len);
      if (grouped)
        attention_group_item(l, h, sp, j0, j1);
      else
        attention_item(l, h, sp, j0, j1);
    }
    grid_barrier();
    // P3: x += W_o att.
    stage_attention(n_act);
    if (tb(l, kPkO + 2u) == kPkQ4K) stage_quantize(p.q_dim);
    add_matvec(tb(l, kPkO + 2u), addr(l, kPkO), p.q_dim, 0u, p.q_dim, 4u);
#endif
    // P4: h = act(W_gate xn) * (W_up xn).
    {
      uvec2 wg_ = addr(l, kPkGate), wu = addr(l, kPkUp);
      uint dt = tb(l, kPkGate + 2u), t0 = (skip_mask() & 8u) != 0u ? ~0u : gsub;
      bool streamed = STREAM != 0u && dt == kPkQ4K;
      if (!streamed || EARLY != 2u) grid_barrier();  // else gate_up_q4k takes it
      if (streamed) {
        gate_up_q4k(wg_, wu, t0, nsub, addr(l, kPkFfnNorm));
      } else {
        if ((PROBE & 256u) != 0u) barrier(); else stage_norm(addr(l, kPkFfnNorm), dt == kPkQ4K);
        for (uint t = t0; t < p.ffn_dim; t += nsub) {
          vec2 s = dot2(dt, wg_, t, wu, t, p.dim, 0u, 0u, p.dim);
          if (lane0) sc[p.h_off + t] = bs_act(s.x, p.act) * s.y;
        }
      }
    }
    grid_barrier();
    // P5: x += W_down h, in column passes of what the staging area holds (k0 a multiple of 256): each
    // row's passes are taken by the same subgroup, so the adds into x need no grid barrier between. In the slot forms
    // the matrix may take the whole shared array (pk_down_on_slots, pk_down_cap): a Q4_K one, and a Q6_K one where that
    // saves passes, its slots alone (the 8B's 14336 columns in one pass where sx and its slots took three), any other
    // its floats alone, from word 0.
    {
      uvec2 w = addr(l, kPkDown);
      uint dt = tb(l, kPkDown + 2u);
      bool slots_only = pk_down_on_slots(SH, p.ffn_dim, kQ4kSlots, kQ6kSlots, dt);
      if (kQ4kSlots && !slots_only) sx_at0 = 0u;
      uint kc = pk_pass_cols(p.ffn_dim, pk_down_cap(SH, p.ffn_dim, kQ4kSlots, slots_only));
      if (slots_only && dt == kPkQ6K) dt = kPkQ6KSlots;
      for (uint k0 = 0u; k0 < p.ffn_dim; k0 += kc) {
        uint k1 = min(p.ffn_dim, k0 + kc);
        if (slots_only) {
          stage_slots(p.h_off + k0, k1 - k0);
        } else {
          stage_copy(p.h_off + k0, k1 - k0);
          if (dt == kPkQ4K) stage_quantize(k1 - k0);
        }
        add_matvec(dt, w, p.ffn_dim, k0, k1, 16u);
        barrier();  // the staging area is rewritten by the next pass
      }
      sx_at0 = kSxAt;
    }
    for (uint i = 0u; i < (EXTRA_SYNC & 255u); ++i) {
      uint kind = EXTRA_SYNC >> 8;
      if (kind == 0u) {
        grid_barrier();
      } else if (kind == 1u) {
        count_in(kPkSyncWords - 1u);  // a word no one polls (the last group's line)
        barrier();
      } else {
        memoryBarrier();
        barrier();
      }
    }
    if (l + 1u < p.n_layers) {
      uint gb = grid_arrive();
      tbl_fetch(l + 1u);  // the next layer's row, in the wait (what the wait's workgroup barrier publishes)
      grid_wait(gb);
    }
  }
  if (HEAD_Q8X != 0u) {
    grid_barrier();
    head_norm_q8x();
  }
  kernel_done();
}
