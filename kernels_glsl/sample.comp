#version 450
// GPU sampling for the decode loop: one workgroup over the vocabulary.
//   repetition penalty (HF: logit > 0 ? logit / r : logit * r, once per distinct token in the history)
//   -> temperature -> top-k -> top-p -> min-p -> a draw from Philox4x32-10(seed, step).
// Top-k and top-p are thresholds found by 16-way search on the logit value, so no sort is needed; the draw
// walks the kept probabilities in token order (the same distribution as HF's sorted walk).
#include "common.glsl"
#include "params.h"
#include "argmax.glsl"
layout(local_size_x = 256, local_size_x_id = 0) in;
// Timing breakdowns only (BLUESHIFT_SAMPLE_PROBE, wrong tokens): bit 0 leaves the argmax keys unread (no token), bit 1
// the embedding row unwritten, bit 2 the cancel word unread.
layout(constant_id = 1) const uint PROBE = 0u;
#ifdef SLOT_PARAMS
// serve's batched decode: each sequence's sampling options sit in a buffer the host writes when the
// sequence joins, so the recorded batch is replayed unchanged (push constants would be baked into it).
layout(std430, binding = 8) readonly buffer SlotParams { SampleParams p; };
#elif defined(SAMPLE_EMBED)
// sample_parts_embed_<dtype> (with ARGMAX_PARTS; W_<dtype>): the sampled token's embedding row, times pe.scale, into
// x (binding 12) for the next decode step, from the table bound whole at binding 11 (embed_row.glsl): the decode loop
// then records no embed dispatch (Recording::x_embedded). pe.dim is the row's length; a token past the rows the
// binding holds writes nothing (the host binds the table whole).
layout(push_constant) uniform PC { SampleParams p; EmbedParams pe; };
#define WEIGHT_BINDING 11
#include "weight_fetch.glsl"
layout(std430, binding = 12) writeonly buffer X { float x_rows[]; };
void embed_store(uint i, float v) { x_rows[i] = v; }
#include "embed_row.glsl"
#else
layout(push_constant) uniform PC { SampleParams p; };
#endif
// coherent: the penalty/temperature pass rewrites logits that other invocations read in the final walk.
layout(std430, binding = 0) coherent buffer L { float logits[]; };
layout(std430, binding = 1) buffer S { uint state[]; };
layout(std430, binding = 2) buffer Hist { uint history[]; };
layout(std430, binding = 3) buffer Ring { uint ring[]; };
layout(std430, binding = 4) readonly buffer Eos { uint eos[]; };
layout(std430, binding = 5) coherent buffer Seen { uint seen[]; };
layout(std430, binding = 6) buffer Tok { uint tokens[]; };
layout(std430, binding = 7) readonly buffer Control { uint control[]; };  // host-visible; [0] != 0 cancels
#ifdef ARGMAX_PARTS
// sample_parts: greedy decoding without a repetition penalty only (the host records this variant only then). The
// argmax comes from the argmax keys (argmax.glsl) of slices of the vocabulary, bound whole: its length is the key
// count times kArgmaxKeyStride (params.h). argmax_parts.comp writes keys, or the head's *_argmax matvec maxes into
// them (matvec.glsl); so each key is read once here and set back to 0 (none), ready for the next step's head.
layout(std430, binding = 9) buffer Parts { uvec2 parts[]; };
#endif

shared float s_val[MAX_SUBGROUPS];
shared uint s_token;
shared uint s_stop;
shared uint s_chunk;

uvec4 philox(uvec4 c, uvec2 k) {
  for (int r = 0; r < 10; ++r) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// One workgroup walks the whole vocabulary, so each pass is bound by load latency: an invocation
// loads UNROLL logits (a workgroup-stride apart, coalesced) before it uses any of them. (One load per
// iteration took ~0.2 ms per token for a 128k vocabulary on the H100: ~500 dependent L2 round trips.)
const uint UNROLL = 8u;

// The logits base + u * workgroup size (u < UNROLL), -FLT_MAX past the vocabulary. Every pass below walks
// the vocabulary as base = invocation + k * UNROLL * workgroup size through this.
void load_logits(uint base, out float v[UNROLL]) {
  uint wg = gl_WorkGroupSize.x;
  for (uint u = 0u; u < UNROLL; ++u) v[u] = base + u * wg < p.vocab ? logits[base + u * wg] : -3.402823466e38;
}

// Sum over the workgroup of the mass (e^(logit - mx)) of logits >= t (after the caller's transform).
float mass_at_least(float t, float mx) {
  float acc = 0.0;
  for (uint base = gl_LocalInvocationID.x; base < p.vocab; base += UNROLL * gl_WorkGroupSize.x) {
    float v[UNROLL];
    load_logits(base, v);
    for (uint u = 0u; u < UNROLL; ++u)
      if (v[u] >= t) acc += exp(v[u] - mx);
  }
  return workgroup_sum(acc);
}

// One pass over the vocabulary narrows [a, b] 16-fold (four bisection steps): thresholds
// a + (b - a) (j + 1) / 16 for j < 15 are probed at once, and the new interval lies between the
// largest probe whose count (as_count) or mass of logits >= it still reaches `target` and the next.
// Invariant kept: f(a) >= target. Top-k and top-p take 10 passes each (was 40 bisection passes each).
const uint NPROBE = 15u;
shared float s_probe[NPROBE * MAX_SUBGROUPS];
void narrow(inout float a, inout float b, float mx, bool as_count, float target) {
  float step = (b - a) / 16.0, th[NPROBE], acc[NPROBE];
  for (uint j = 0u; j < NPROBE; ++j) {
    th[j] = a + step * float(j + 1u);
    acc[j] = 0.0;
  }
  for (uint base = gl_LocalInvocationID.x; base < p.vocab; base += UNROLL * gl_WorkGroupSize.x) {
    float v[UNROLL];
    load_logits(base, v);
    for (uint u = 0u; u < UNROLL; ++u) {
      if (v[u] < th[0]) continue;
      float w = as_count ? 1.0 : exp(v[u] - mx);
      for (uint j = 0u; j < NPROBE; ++j)
        if (v[u] >= th[j]) acc[j] += w;
    }
  }
  for (uint j = 0u; j < NPROBE; ++j) {
    float s = subgroupAdd(acc[j]);
    if (subgroupElect()) s_probe[j * MAX_SUBGROUPS + gl_SubgroupID] = s;
  }
  barrier();
  float na = a, nb = th[0];
  for (uint jj = 0u; jj < NPROBE; ++jj) {
    uint j = NPROBE - 1u - jj;
    float s = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) s += s_probe[j * MAX_SUBGROUPS + g];
    if (s >= target) {
      na = th[j];
      nb = j + 1u < NPROBE ? th[j + 1u] : b;
      break;
    }
  }
  barrier();  // s_probe is reused by the next pass
  a = na;
  b = nb;
}

void main() {
  uint tid = gl_LocalInvocationID.x;
  // Stopped already, or cancelled by the host (read once, the host may write it at any time): a
  // cancel stops the loop here without a token.
  if (tid == 0u) s_stop = state[2] != 0u ? 1u : (PROBE & 4u) == 0u && control[0] != 0u ? 2u : 0u;
  barrier();
  if (s_stop != 0u) {
    if (s_stop == 2u && tid == 0u) {
      state[2] = 1u;
      ring[1] = 1u;
    }
#ifdef ARGMAX_PARTS
    for (uint g = tid; g < uint(parts.length()) / kArgmaxKeyStride; g += gl_WorkGroupSize.x)
      parts[g * kArgmaxKeyStride] = uvec2(0u);  // a head may have maxed into them
#endif
    return;
  }
  uint pos = state[1];
  uint n_hist = pos + 1u;

  bool penalize = p.repeat_penalty != 1.0;
  if (penalize) {
    for (uint i = tid; i < n_hist; i += gl_WorkGroupSize.x) {
      uint t = history[i];
      if (t < p.vocab) atomicOr(seen[t >> 5], 1u << (t & 31u));
    }
    memoryBarrierBuffer();
    barrier();
  }
  // Penalty and temperature in place; max and first argmax.
  float inv_t = p.temperature > 0.0 ? 1.0 / p.temperature : 1.0;
  float best = -3.402823466e38;
  uint best_i = 0xffffffffu;
  bool rewrite = penalize || inv_t != 1.0;  // greedy without a penalty reads the logits as they are
  uint wg = gl_WorkGroupSize.x;
#ifdef ARGMAX_PARTS
  for (uint g = tid; (PROBE & 1u) == 0u && g < uint(parts.length()) / kArgmaxKeyStride; g += wg) {
    float l;
    uint i;
    argmax_unkey(parts[g * kArgmaxKeyStride], l, i);
    parts[g * kArgmaxKeyStride] = uvec2(0u);
    if (argmax_takes(l, i, best, best_i)) { best = l; best_i = i; }
  }
#else
  for (uint base = tid; base < p.vocab; base += UNROLL * wg) {
    float v[UNROLL];
    load_logits(base, v);
    for (uint u = 0u; u < UNROLL; ++u) {
      uint i = base + u * wg;
      if (i >= p.vocab) break;
      float l = v[u];
      if (penalize && (seen[i >> 5] & (1u << (i & 31u))) != 0u) l = l > 0.0 ? l / p.repeat_penalty : l * p.repeat_penalty;
      l *= inv_t;
      if (rewrite) logits[i] = l;
      if (argmax_takes(l, i, best, best_i)) { best = l; best_i = i; }
    }
  }
#endif
  // Workgroup argmax (ties to the lowest id, as torch.argmax).
  memoryBarrierBuffer();  // the rewritten logits, visible to the whole workgroup after workgroup_argmax's barrier
  workgroup_argmax(best, best_i);
  float mx = best;
  uint arg = best_i;

  uint token = arg;
#ifndef ARGMAX_PARTS
  if (p.temperature > 0.0) {
    // Threshold t, in HF's order: the largest t with count(>= t) >= top_k; then, within what top-k
    // kept, the largest t with mass(>= t) >= top_p * (the kept mass); then min-p.
    float lo = mx - 1e4, hi = mx;  // logits below mx - 1e4 have probability 0 in f32
    float t = lo;
    if (p.top_k > 0u && p.top_k < p.vocab) {
      float a = lo, b = hi;  // invariant: count(>= a) >= k
      for (int it = 0; it < 10; ++it) narrow(a, b, mx, true, float(p.top_k));
      t = max(t, a);
    }
    if (p.top_p > 0.0 && p.top_p < 1.0) {
      float total = mass_at_least(t, mx);  // HF renormalizes after top-k: top-p is of this mass
      float a = t, b = hi;  // invariant: mass(>= a) >= top_p * total
      for (int it = 0; it < 10; ++it) narrow(a, b, mx, false, p.top_p * total);
      t = max(t, a);
    }
    if (p.min_p > 0.0) t = max(t, mx + log(p.min_p));
    float kept = mass_at_least(t, mx);
    uvec4 r = philox(uvec4(state[4], 0u, 0x5eed5eedu, 0u), uvec2(p.seed_lo, p.seed_hi));
    float u = (float(r.x >> 8) + 0.5) * (1.0 / 16777216.0) * kept;
    // Each invocation owns a contiguous chunk, numbered in subgroup order (the order the prefix sum
    // runs in; how local invocation indices map to subgroups is the implementation's). The owner of u
    // is the last chunk with kept mass whose prefix is <= u: every u in [0, kept) has one, even where
    // f32 rounding leaves the prefix of one chunk above the end of the one before (u then fell
    // between chunks, and the sampler returned the argmax). Its walk takes the first token whose
    // running sum passes u, or its last kept token when rounding keeps the sum below u.
    uint c = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    uint chunk = (p.vocab + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
    uint b0 = c * chunk, b1 = min(b0 + chunk, p.vocab);
    float mine = 0.0;
    for (uint i = b0; i < b1; ++i) if (logits[i] >= t) mine += exp(logits[i] - mx);
    float before = subgroupExclusiveAdd(mine);
    float sg_total = subgroupAdd(mine);
    if (subgroupElect()) s_val[gl_SubgroupID] = sg_total;
    if (tid == 0u) {
      s_token = arg;
      s_chunk = 0u;
    }
    barrier();
    for (uint g = 0; g < gl_SubgroupID; ++g) before += s_val[g];
    if (mine > 0.0 && u >= before) atomicMax(s_chunk, c + 1u);
    barrier();
    if (s_chunk == c + 1u) {
      float acc = before;
      uint pick = 0xffffffffu, last = 0xffffffffu;
      for (uint i = b0; i < b1 && pick == 0xffffffffu; ++i) {
        if (logits[i] < t) continue;
        acc += exp(logits[i] - mx);
        last = i;
        if (u < acc) pick = i;
      }
      s_token = pick != 0xffffffffu ? pick : last;
    }
    barrier();
    token = s_token;
  }
#endif

  if (penalize) {  // leave the bitmap clear for the next step
    barrier();
    for (uint i = tid; i < n_hist; i += gl_WorkGroupSize.x) {
      uint t = history[i];
      if (t < p.vocab) seen[t >> 5] = 0u;
    }
  }
  if (tid == 0u) {
    uint n = state[3];
    ring[2u + n % p.ring_size] = token;  // [0] count, [1] stop: the host reads these after each batch
    history[pos + 1u] = token;
    tokens[0] = token;
    state[0] = token;
    state[1] = pos + 1u;
    state[3] = n + 1u;
    state[4] = state[4] + 1u;
    bool stop = n + 1u >= p.max_tokens;
    if (p.ignore_eos == 0u)
      for (uint e = 0; e < p.n_eos; ++e) stop = stop || token == eos[e];
    state[2] = stop ? 1u : 0u;
    ring[1] = stop ? 1u : 0u;
    ring[0] = n + 1u;
  }
#ifdef SAMPLE_EMBED
  if ((PROBE & 2u) == 0u && token < embed_rows(pe.dim)) embed_row(token, pe.dim, pe.scale, 0u);
#endif
}
