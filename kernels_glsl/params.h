// Push-constant blocks, defined once for GLSL and C++ (niagara's config.h idea). Every member is a
// 32-bit scalar so std430 and C++ layouts agree; the static_asserts in runtime/gpu/params_check.cpp
// hold the C++ side to that.
#ifdef __cplusplus
#pragma once
#include <cstdint>
namespace bs::kparams {
using uint = uint32_t;
#define BS_PARAMS(name) struct name
#else
#define BS_PARAMS(name) struct name
#endif

// stream_read: sums n_vec4 vec4s (bandwidth probe).
BS_PARAMS(StreamParams) { uint n_vec4; uint iters; };
// kv_touch: a layer's K and V caches by address (lo, hi words), a cache row's bytes, the sliding window (0: none) and
// the bytes between touches.
BS_PARAMS(KvTouchParams) { uint k_lo; uint k_hi; uint v_lo; uint v_hi; uint row_bytes; uint window; uint step; uint pad0; };

// rms_norm: rows of n; y = x * rsqrt(mean(x^2) + eps) * (offset + w).
BS_PARAMS(RmsNormParams) { uint n; uint rows; float eps; float offset; };
// rms_norm.comp RMS_PLANES: RmsNormParams and the number of split-k planes at binding 4 ([parts, rows x n]).
BS_PARAMS(RmsPlanesParams) { uint n; uint rows; float eps; float offset; uint parts; uint pad0; uint pad1; uint pad2; };

// matvec: y[b*m + r] = sum_k W[r, k] * x[b*k_stride + k] (+ y when accumulate) for rows r < m.
BS_PARAMS(MatvecParams) { uint m; uint k; uint batch; uint accumulate; };
// matvec_*_norm: the same with RMSNorm of x folded in, y = W (x * rsqrt(mean(x^2) + eps) * (offset + nw)).
// matvec_*_gated: y = act(W_gate xn) * (W_up xn) with that xn; act 0 = silu, 1 = gelu_tanh (else unused).
BS_PARAMS(MatvecNormParams) { uint m; uint k; uint batch; uint accumulate; float eps; float offset; uint act; uint pad0; };
// matvec_*_q / _k / _v (decode): the norm-folded q, k, v projections with RoPE (q, k) and the KV-cache
// append (k, v: f16 at row state.pos + b) in the epilogue. rope_rows = 1: workgroup g takes the pairs
// 2g, 2g + 1 of the rotation (rows i and i + head_dim/2 of a head), so ROWS must be 4.
BS_PARAMS(MatvecRopeParams) { uint m; uint k; uint batch; uint accumulate; float eps; float offset; uint head_dim; uint pad0; };

// reduce: sum or max over n elements, written to out[0].
BS_PARAMS(ReduceParams) { uint n; uint pad0; uint pad1; uint pad2; };


// --- the forward pass (runtime/model) ---
// Step state (binding "state" of several kernels): uint[0] = token, uint[1] = pos of row 0.

// rope: rotates the first rot_dim dims of each head of x [rows, n_heads, head_dim] in place, rotate-half
// (NeoX) pairing (i, i + rot_dim/2), at position state.pos + row. inv_freq[rot_dim/2] comes from the CPU.
BS_PARAMS(RopeParams) { uint rows; uint n_heads; uint head_dim; uint rot_dim; };

// kv_store: cache[(state.pos + row) * kv_dim + i] = f16(src[row * kv_dim + i]).
BS_PARAMS(KvStoreParams) { uint rows; uint kv_dim; uint pad0; uint pad1; };

// rope_kv: RoPE on q (in place) and k, k and v appended to the f16 caches at state.pos + row.
BS_PARAMS(RopeKvParams) { uint rows; uint n_heads; uint n_kv_heads; uint head_dim; };
// rope_kv.comp QKV_PLANES: RopeKvParams, then per q / k / v its split-k planes' count (0: not split) and float offset.
BS_PARAMS(RopeKvPlanesParams) {
  uint rows; uint n_heads; uint n_kv_heads; uint head_dim;
  uint q_parts; uint k_parts; uint v_parts; uint pad0;
  uint q_off; uint k_off; uint v_off; uint pad1;
};

// attention: out[row, h, :] = softmax_j(scale * q.k_j (softcapped), j in window) . v_j, one workgroup per
// (head, row). GQA: kv head = h / (n_heads / n_kv_heads). window 0 = full causal.
BS_PARAMS(AttentionParams) {
  uint rows; uint n_heads; uint n_kv_heads; uint head_dim;
  uint max_ctx; uint window; float scale; float softcap;
};

// attention_split: one decode row, the window split into `splits` chunks per head (flash-decoding).
BS_PARAMS(AttentionSplitParams) {
  uint n_heads; uint n_kv_heads; uint head_dim; uint splits;
  uint window; float scale; float softcap; uint pad0;
};

// gated activation: h[i] = act(g[i]) * u[i] over n elements; act 0 = silu, 1 = gelu_tanh.
BS_PARAMS(GatedActParams) { uint n; uint act; uint pad0; uint pad1; };

// add_bias: y[r, i] += b[i] for r < rows, i < n.
BS_PARAMS(BiasParams) { uint n; uint rows; uint pad0; uint pad1; };

// softcap: x = cap * tanh(x / cap) over n elements.
BS_PARAMS(SoftcapParams) { uint n; float cap; uint pad0; uint pad1; };

// short_conv (LFM2): per channel c < dim and row t < rows of bcx [rows, 3*dim] (B | C | x):
// y[t, c] = C[t, c] * sum_k w[c, k] * (B*x)[t - kernel + 1 + k, c]; inputs before row 0 come from the
// conv state [kernel - 1, dim] (zeros when state.pos == 0: a new sequence), which then holds the
// last kernel - 1 inputs. Workgroups: (dim / 64, rows / 16), both rounded up; kernel - 1 <= 16.
BS_PARAMS(ShortConvParams) { uint rows; uint dim; uint kernel; uint pad0; };

// scale_by: x[i] *= s[0] over n elements (Gemma 4's layer_scalar, a weight of one element).
BS_PARAMS(ScaleByParams) { uint n; uint pad0; uint pad1; uint pad2; };
// to_f16: y (f16) = x (f32) for n elements, n % 4 == 0 (the tensor-core GEMM's input, converted once).
BS_PARAMS(ToF16Params) { uint n; uint pad0; uint pad1; uint pad2; };
// splitk_reduce: y[i] = (accumulate ? y[i] : 0) + sum over p < parts of ws[p n + i], in order (matmul_cm.comp
// CM_SPLITK's partial sums).
BS_PARAMS(SplitKParams) { uint n; uint parts; uint accumulate; uint pad0; };
// matmul_cm_*_gated: H[M, m] (f16) = act(X W_gate^T) * (X W_up^T), X [M, k] in f16, gate and up [m, k]; act 0 SiLU,
// 1 GELU (tanh), as gated_act. m % 16 == 0.
BS_PARAMS(GatedMatmulParams) { uint m; uint k; uint batch; uint act; };

// ple_combine (Gemma 4's per-layer inputs): rows of n = ple_dim per (token, layer); ple.comp.
BS_PARAMS(PleCombineParams) {
  uint n; uint n_layers; uint stride; float eps;
  float offset; float proj_scale; float combine_scale; uint pad0;
};

// get_rows: out[t, :] = table[tokens[t], :] * scale (f16 table), one workgroup per token.
BS_PARAMS(GetRowsParams) { uint dim; uint n_tokens; float scale; uint vocab; };

// --- Qwen 3.5 / 3.6: Gated DeltaNet layers and the gated attention (runtime/model/forward_qwen35.cpp) ---
// conv_silu: out[t, c] = silu(sum_j w[c, j] x[t - (width-1) + j, c]) for rows t, channels c; the rows before
// the first come from the conv state [channels, width-1] (zeros when state.pos == 0), which is left holding
// the last width-1 input rows. width <= 8.
BS_PARAMS(ConvSiluParams) { uint channels; uint rows; uint width; uint pad0; };
// delta_rule: the gated delta rule over `rows` tokens, one workgroup per v head, one invocation per state
// column (local size = v_dim, spec constant 1 = k_dim), then the gated RMSNorm of each head's output.
// The state [v_heads, k_dim, v_dim] f32 starts from zero when state.pos == 0. q_scale = 1/sqrt(k_dim).
BS_PARAMS(DeltaRuleParams) { uint rows; uint k_heads; uint v_heads; uint pad0; float eps; float q_scale; uint pad1; uint pad2; };
// attn_gate_split: qg [n / head_dim, 2, head_dim] -> q, gate [n / head_dim, head_dim];
// attn_gate_apply: x[i] *= sigmoid(gate[i]) for i < n.
BS_PARAMS(AttnGateParams) { uint n; uint head_dim; uint pad0; uint pad1; };

// --- mixture of experts (runtime/model/forward_moe.cpp, moe.comp) ---
// A routing slot is (token t, choice s < k), numbered t * k + s; ids / weights [rows, k] hold its expert and weight.
// moe_router: per token row (one workgroup each), xn = rmsnorm(x) * (offset + nw) (written out for the experts),
// logits = W_r [experts, dim] (f16) xn (+ bias when flags & 2), the top k by logit (ties: the lower expert),
// weights = softmax over the k (flags & 1) or the full softmax's.
BS_PARAMS(MoeRouterParams) { uint dim; uint n_experts; uint k; uint flags; float eps; float offset; uint pad0; uint pad1; };
// matvec_*_expert: y[b, r] = W[moe_ids[b] * estride + row0 + r, :] . x[b / x_div, :] for slots b, rows r < m
// (accumulate 0): W holds estride rows per expert, of which rows row0 .. row0 + m are taken (gate or up of the
// fused gate_up). matmul_*_expert: the same for the slots grouped by moe_group; workgroup y = expert * tiles + tile.
BS_PARAMS(MoeMatvecParams) { uint m; uint k; uint x_div; uint accumulate; uint tiles; uint estride; uint row0; uint pad0; };
// moe_act: h[b, f] = act(g + bgu[e, f]) * (u + bgu[e, n_ffn + f]), g = gu[b, f], u = gu[b, n_ffn + f] (the fused
// gate_up's output [slots, 2 n_ffn]), over `slots` rows of n_ffn, e = ids[b]
// (bias [experts, 2 n_ffn] when flags & 1); limit > 0: GPT-OSS's clamped SwiGLU (u + 1) * g' * sigmoid(alpha g'),
// g' = min(g, limit), u clamped.
BS_PARAMS(MoeActParams) { uint n_ffn; uint slots; uint flags; uint act; float alpha; float limit; uint pad0; uint pad1; };
// moe_combine: x[t, i] += sum_s w[t, s] * (y[t * k + s, i] + bd[ids[t * k + s], i]) (bias when flags & 1).
BS_PARAMS(MoeCombineParams) { uint dim; uint rows; uint k; uint flags; };
// moe_group (prefill): per expert e, count[e] slots and offset[e] = the counts before it; perm[offset[e] + j] =
// the j-th slot routed to e in slot order. One workgroup; slots = rows * k.
BS_PARAMS(MoeGroupParams) { uint slots; uint n_experts; uint pad0; uint pad1; };

// --- weight kernels (matvec_*, matmul_*, embed_*) ---
// matvec_* and matmul_* take MatvecParams (matmul: batch = M tokens, Y [M, m] (+)= X [M, k] W[m, k]^T).
// embed: out[t, :] = W[tokens[t] - token_offset, :] * scale for t < n_tokens, rows of dim elements.
BS_PARAMS(EmbedParams) { uint dim; uint n_tokens; float scale; uint token_offset; };


// --- load-time repacks (runtime/model/gpu_repack.h): DOPPLER's stored forms into what the weight kernels read ---
// repack_w4a16_q8_0: `groups` groups of 32 (16 bytes of nibbles each) and their scales (scale_dtype 0 F16,
// 1 BF16, 2 F32) into as many Q8_0 blocks.
BS_PARAMS(RepackW4a16Params) { uint groups; uint scale_dtype; uint pad0; uint pad1; };
// repack_q4k_col_f16: rows [row0, row0 + rows) of F16 W [m, k] from its transposed Q4_K, k stored rows of
// blocks_per_col blocks.
BS_PARAMS(RepackQ4kColParams) { uint rows; uint k; uint blocks_per_col; uint row0; };

// --- the decode loop (runtime/generate) ---
// Step state, uint[16] on the GPU: [0] token fed to the next forward, [1] its position, [2] stop flag,
// [3] tokens generated so far, [4] decode steps executed (the RNG counter).
// sample: picks the next token from logits[vocab] (greedy when temperature <= 0), appends it to the
// history and the host-visible token ring, advances the step state, and raises stop on EOS or max_tokens.
BS_PARAMS(SampleParams) {
  uint vocab; uint top_k; float temperature; float top_p;
  float min_p; float repeat_penalty; uint seed_lo; uint seed_hi;
  uint max_tokens; uint n_eos; uint ignore_eos; uint ring_size;
};

// argmax_parts: greedy decode's first half; workgroup g of G writes key g (below) = argmax_key (argmax.glsl) of the
// largest logit of its slice of the vocabulary and the lowest id holding it, for sample_parts (sample.comp
// ARGMAX_PARTS).
BS_PARAMS(ArgmaxParams) { uint vocab; uint pad0; uint pad1; uint pad2; };
// Greedy decode's argmax keys: ceil(vocab / kArgmaxSliceRows) of them, key g at 64-bit word g * kArgmaxKeyStride. The
// head's *_argmax matvecs max row r's key into key r / kArgmaxSliceRows; argmax_parts' G workgroups (G at most the key
// count) write keys 0 .. G - 1. A key a cache line: with the keys side by side (slices of 2048 rows, 63 keys in 4
// lines of the 1B's head) the atomics met in the few L2 slices holding those lines, and the head took 7 us more on the
// 1B q4_k_m (4 rows a workgroup) and 21 us on the 1B f16 (2 rows) on the H200 (session 34, S1).
#ifdef __cplusplus
inline constexpr uint32_t kArgmaxSliceRows = 512, kArgmaxKeyStride = 16;
#else
const uint kArgmaxSliceRows = 512u, kArgmaxKeyStride = 16u;
#endif

// gate: args[i] = stop ? 0 : nominal[i] for the n indirect dispatch triples of a decode step.
BS_PARAMS(GateParams) { uint n; uint pad0; uint pad1; uint pad2; };

#ifdef __cplusplus
}  // namespace bs::kparams
#endif
