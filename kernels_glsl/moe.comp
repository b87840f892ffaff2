#version 450
// Mixture-of-experts routing and plumbing, one variant each (variants.cmake); params.h describes them.
// Everything a MoE layer needs to know about its routing is written here, on the GPU: expert ids and weights
// (router), slot groups per expert (group), so a recorded decode step replays without the host.
#include "common.glsl"
#include "params.h"

#if defined(MOE_ROUTER)
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(push_constant) uniform PC { MoeRouterParams p; };
layout(std430, binding = 0) readonly buffer W { float16_t w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) writeonly buffer Ids { uint ids[]; };
layout(std430, binding = 4) writeonly buffer Wts { float wts[]; };
layout(std430, binding = 5) readonly buffer NW { float nw[]; };
layout(std430, binding = 6) writeonly buffer XN { float xn[]; };
shared float logits[256];
void main() {
  const uint t = gl_WorkGroupID.x, E = p.n_experts, D = p.dim;
  // The ffn_norm folded in: the experts read xn from here, and no norm dispatch (or barrier) precedes this one.
  float ss = 0.0;
  for (uint i = gl_LocalInvocationIndex; i < D; i += gl_WorkGroupSize.x) ss += x[t * D + i] * x[t * D + i];
  const float scale = inversesqrt(workgroup_sum(ss) / float(D) + p.eps);
  for (uint i = gl_LocalInvocationIndex; i < D; i += gl_WorkGroupSize.x)
    xn[t * D + i] = x[t * D + i] * scale * (p.offset + nw[i]);
  // One subgroup per expert at a time, its lanes striding over dim (xn recomputed: no wait on its stores).
  for (uint e = gl_SubgroupID; e < E; e += gl_NumSubgroups) {
    float s = 0.0;
    for (uint i = gl_SubgroupInvocationID; i < D; i += gl_SubgroupSize)
      s += float(w[e * D + i]) * (x[t * D + i] * scale * (p.offset + nw[i]));
    s = subgroupAdd(s);
    if (subgroupElect()) logits[e] = s + ((p.flags & 2u) != 0u ? bias[e] : 0.0);
  }
  barrier();
  if (gl_LocalInvocationIndex != 0u) return;
  // Top k by repeated arg-max: strictly greater wins, so a tie goes to the lower expert id.
  float mx = logits[0];
  for (uint e = 1u; e < E; ++e) mx = max(mx, logits[e]);
  uint chosen[8];
  float sum_k = 0.0, sum_all = 0.0;
  for (uint e = 0u; e < E; ++e) sum_all += exp(logits[e] - mx);
  for (uint s = 0u; s < p.k; ++s) {
    uint best = 0u;
    float bv = -3.402823466e38;
    bool found = false;
    for (uint e = 0u; e < E; ++e) {
      bool taken = false;
      for (uint j = 0u; j < s; ++j) taken = taken || chosen[j] == e;
      if (!taken && (!found || logits[e] > bv)) best = e, bv = logits[e], found = true;
    }
    chosen[s] = best;
    sum_k += exp(bv - mx);
  }
  float denom = (p.flags & 1u) != 0u ? sum_k : sum_all;
  for (uint s = 0u; s < p.k; ++s) {
    ids[t * p.k + s] = chosen[s];
    wts[t * p.k + s] = exp(logits[chosen[s]] - mx) / denom;
  }
}

#elif defined(MOE_ACT)
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { MoeActParams p; };
layout(std430, binding = 0) readonly buffer GU { float gu[]; };
layout(std430, binding = 2) writeonly buffer H { float h[]; };
layout(std430, binding = 3) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 4) readonly buffer BGU { float bgu[]; };  // [experts, 2 n_ffn]: gate, then up
void main() {
  uint f = gl_GlobalInvocationID.x, b = gl_WorkGroupID.y;
  if (f >= p.n_ffn || b >= p.slots) return;
  float a = gu[b * 2u * p.n_ffn + f], c = gu[b * 2u * p.n_ffn + p.n_ffn + f];
  if ((p.flags & 1u) != 0u) {
    uint e = ids[b];
    a += bgu[e * 2u * p.n_ffn + f];
    c += bgu[e * 2u * p.n_ffn + p.n_ffn + f];
  }
  if (p.limit > 0.0) {
    a = min(a, p.limit);
    c = clamp(c, -p.limit, p.limit);
    h[b * p.n_ffn + f] = (c + 1.0) * a / (1.0 + exp(-p.alpha * a));
  } else {
    h[b * p.n_ffn + f] = bs_act(a, p.act) * c;
  }
}

#elif defined(MOE_COMBINE)
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { MoeCombineParams p; };
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 3) readonly buffer Wts { float wts[]; };
layout(std430, binding = 4) readonly buffer BD { float bd[]; };
void main() {
  uint i = gl_GlobalInvocationID.x, t = gl_WorkGroupID.y;
  if (i >= p.dim || t >= p.rows) return;
  float acc = 0.0;
  for (uint s = 0u; s < p.k; ++s) {
    uint b = t * p.k + s;
    float v = y[b * p.dim + i];
    if ((p.flags & 1u) != 0u) v += bd[ids[b] * p.dim + i];
    acc += wts[b] * v;
  }
  x[t * p.dim + i] += acc;
}

#elif defined(MOE_GROUP)
layout(local_size_x = 256) in;
layout(push_constant) uniform PC { MoeGroupParams p; };
layout(std430, binding = 0) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 1) writeonly buffer Counts { uint counts[]; };
layout(std430, binding = 2) writeonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 3) writeonly buffer Perm { uint perm[]; };
shared uint cnt[256];
void main() {
  uint e = gl_LocalInvocationID.x;
  uint n = 0u;
  if (e < p.n_experts)
    for (uint b = 0u; b < p.slots; ++b) n += ids[b] == e ? 1u : 0u;
  cnt[e] = n;
  barrier();
  if (e >= p.n_experts) return;
  uint off = 0u;
  for (uint j = 0u; j < e; ++j) off += cnt[j];
  counts[e] = n;
  offsets[e] = off;
  for (uint b = 0u; b < p.slots; ++b)
    if (ids[b] == e) perm[off++] = b;
}
#endif
