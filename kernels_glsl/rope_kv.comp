#version 450
// RoPE on q and k, and the KV-cache append, in one dispatch (three used to be four, behind a barrier).
// Row y of q is rotated in place, its k rows rotated and stored, as f16, in the k cache at state.pos + y,
// its v rows stored in the v cache. Same arithmetic as rope.comp (rope.glsl) and kv_store.comp, so results are
// bit-identical.
//
// BATCH_SLOTS (serve's batched decode, the *_slots variants): workgroup row y is sequence y of the batch,
// with its own position (word 1 of its step state, rows STATE_WORDS words apart in binding 4) and its
// own caches, whose addresses binding 5 holds (uvec4 per row: k cache, v cache), so one dispatch serves
// every sequence instead of one each.
//
// QKV_PLANES (prefill): q, k or v may still be in the planes of its split-k GEMM (matmul_cm.comp CM_SPLITK) at
// binding 7, [parts, rows x dim] from a float offset each (RopeKvPlanesParams; 0 parts: the value is in binding
// 0 / 1 / 2 as usual). Each value is summed as splitk_reduce sums it (from 0, plane 0 first: the same bits), so the
// three reduces, their barrier and a pass over q, k and v are gone. q's planes with full rotary only: q's dims past
// ROT_DIM are no items here (rotated in place, they stay where they are).
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#include "params.h"
#include "kv_type.glsl"
#include "rope.glsl"
layout(local_size_x = 128) in;
// Partial rotary (Qwen 3.5): only the first ROT_DIM dims of a head rotate, the rest pass through; 0 = all.
layout(constant_id = 0) const uint ROT_DIM = 0;
layout(std430, binding = 0) buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
#ifdef QKV_PLANES
layout(push_constant) uniform PC { RopeKvPlanesParams p; };
layout(std430, binding = 7) readonly buffer Ws { float ws[]; };
float planes_sum(uint off, uint parts, uint plane, uint i) {
  float s = 0.0;
  for (uint j = 0u; j < parts; ++j) s += ws[off + j * plane + i];
  return s;
}
uint q_plane() { return p.rows * p.n_heads * p.head_dim; }
uint kv_plane() { return p.rows * p.n_kv_heads * p.head_dim; }
float q_at(uint i) { return p.q_parts == 0u ? q[i] : planes_sum(p.q_off, p.q_parts, q_plane(), i); }
float k_at(uint i) { return p.k_parts == 0u ? k[i] : planes_sum(p.k_off, p.k_parts, kv_plane(), i); }
float v_at(uint i) { return p.v_parts == 0u ? v[i] : planes_sum(p.v_off, p.v_parts, kv_plane(), i); }
#else
layout(push_constant) uniform PC { RopeKvParams p; };
float q_at(uint i) { return q[i]; }
float k_at(uint i) { return k[i]; }
float v_at(uint i) { return v[i]; }
#endif
layout(std430, binding = 3) readonly buffer F { float inv_freq[]; };
layout(std430, binding = 4) readonly buffer S { uint state[]; };
#ifdef BATCH_SLOTS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
layout(constant_id = 1) const uint STATE_WORDS = 64;
layout(buffer_reference, std430, buffer_reference_align = 2) writeonly buffer KvOut { KV_T e[]; };
layout(std430, binding = 5) readonly buffer Caches { uvec4 caches[]; };
#define K_STORE(i, val) kout.e[i] = (val)
#define V_STORE(i, val) vout.e[i] = (val)
#else
layout(std430, binding = 5) writeonly buffer KC { KV_T kcache[]; };
layout(std430, binding = 6) writeonly buffer VC { KV_T vcache[]; };
#define K_STORE(i, val) kcache[i] = (val)
#define V_STORE(i, val) vcache[i] = (val)
#endif

// The work of a row is a flat list of items, taken grid-stride by the invocations of the workgroups of
// row y (any x count: the model dispatches a few per row, older callers one per head): the q pairs of
// every head, then per k head its pairs and the dims past the rotary ones, then every v value. A
// workgroup per head (the first version) made 24,576 workgroups of 32 busy invocations for a 1B's
// 512-token prefill, which took ~21 us a layer on the H100 against ~4 for its bytes.
void main() {
  uint row = gl_WorkGroupID.y;
  uint half_rot = (ROT_DIM == 0u ? p.head_dim : ROT_DIM) / 2u;
  uint kv_dim = p.n_kv_heads * p.head_dim, k_items = p.head_dim - half_rot;  // per k head
  uint nq = p.n_heads * half_rot, nk = p.n_kv_heads * k_items, n = nq + nk + kv_dim;
#ifdef BATCH_SLOTS
  uint pos = state[row * STATE_WORDS + 1u];
  KvOut kout = KvOut(caches[row].xy), vout = KvOut(caches[row].zw);
#else
  uint pos = state[1] + row;
#endif
  uint q_dim = p.n_heads * p.head_dim;
  for (uint it = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x; it < n;
       it += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    if (it < nq) {
      uint h = it / half_rot, i = it % half_rot, b = row * q_dim + h * p.head_dim + i;
      vec2 r = rope_rotate(q_at(b), q_at(b + half_rot), float(pos), inv_freq[i]);
      q[b] = r.x;
      q[b + half_rot] = r.y;
    } else if (it < nq + nk) {
      uint h = (it - nq) / k_items, i = (it - nq) % k_items;
      uint src = row * kv_dim + h * p.head_dim, dst = pos * kv_dim + h * p.head_dim;
      if (i < half_rot) {
        vec2 r = rope_rotate(k_at(src + i), k_at(src + i + half_rot), float(pos), inv_freq[i]);
        K_STORE(dst + i, KV_T(r.x));
        K_STORE(dst + i + half_rot, KV_T(r.y));
      } else {  // past the rotary dims (partial rotary): as they are
        i += half_rot;
        K_STORE(dst + i, KV_T(k_at(src + i)));
      }
    } else {
      uint i = it - nq - nk;
      V_STORE(pos * kv_dim + i, KV_T(v_at(row * kv_dim + i)));
    }
  }
}
