// One struct describes the model. The converter (rdrr/hf_config.cpp) resolves every architecture
// quirk into these fields; the runtime reads flags, never architecture names.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace bs {

enum class Activation : uint8_t { silu, gelu_tanh };
enum class RopeScaling : uint8_t { none, linear, llama3, longrope, yarn };
enum class AttentionType : uint8_t { full, sliding };
// What mixes tokens in a layer: attention (full or sliding: layer_types), a Gated DeltaNet linear
// attention with a recurrent state (Qwen 3.5 / 3.6), or a short causal convolution with a rolling conv
// state (LFM2). Only attention layers have a KV cache.
enum class LayerKind : uint8_t { attention, linear_attention, short_conv };

struct RopeConfig {
  float theta = 10000.0f;                  // base of the global (full-attention) layers
  float local_theta = 0.0f;                // base of sliding layers; 0 = same as theta
  RopeScaling scaling = RopeScaling::none;
  float factor = 1.0f;                     // linear and llama3
  float low_freq_factor = 1.0f;            // llama3
  float high_freq_factor = 4.0f;           // llama3
  int32_t original_max_position = 8192;    // llama3, longrope
  // LongRoPE (Phi-3's 128k variants): per-frequency divisors, short_factor for contexts up to
  // original_max_position and long_factor beyond (chosen by the context the model is built for, as
  // llama.cpp and DOPPLER do; HF switches by the positions of each forward), and attention_factor, which
  // HF multiplies into cos and sin and so into q and k: attention logits scale by its square.
  std::vector<float> short_factor, long_factor;
  float attention_factor = 1.0f;
  // Gemma 4's "proportional" RoPE on full layers: frequencies over the whole head_dim
  // (theta^(-2i/head_dim)), only the first partial_factor * head_dim / 2 of them nonzero; the rest of
  // the rotate-half pairs (i, i + head_dim/2) stay as they are.
  float partial_factor = 1.0f;
  // YaRN (GPT-OSS): frequencies blend interpolation (/ factor) and extrapolation over the ramp between the
  // dims that turn beta_fast and beta_slow times in original_max_position; attention_factor (0.1 ln(factor)
  // + 1 unless given) scales cos and sin as LongRoPE's does. truncate: HF floors / ceils the ramp's ends.
  float beta_fast = 32.0f, beta_slow = 1.0f;
  bool yarn_truncate = true;
};

// LongRoPE's attention factor where the checkpoint gives none, as transformers and DOPPLER derive it:
// sqrt(1 + ln(factor) / ln(original_max_position)), 1 for factor <= 1.
inline float longrope_attention_factor(double factor, int32_t original_max_position) {
  return factor <= 1.0 ? 1.0f : float(std::sqrt(1 + std::log(factor) / std::log(double(original_max_position))));
}

struct ModelConfig {
  std::string arch;                 // HF model_type or DOPPLER's modelType, for display only ("llama", "transformer", ...)
  int32_t n_layers = 0;
  int32_t dim = 0;                  // hidden size
  int32_t ffn_dim = 0;              // intermediate size
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;           // GQA: n_heads % n_kv_heads == 0; MQA: 1
  int32_t head_dim = 0;             // may differ from dim / n_heads (Gemma, Qwen3)
  int32_t vocab = 0;
  int32_t max_seq = 0;              // max_position_embeddings
  float norm_eps = 1e-5f;

  // --- feature flags ---
  bool norm_offset = false;         // RMSNorm scales by (1 + w) (every Gemma norm, q/k norms too)
  bool qk_norm = false;             // RMSNorm over each head of q and k before RoPE (Qwen3, Gemma 3)
  bool qkv_bias = false;            // q/k/v projections have biases (Qwen2)
  bool sandwich_norm = false;       // post-attention and post-FFN norms on the branch output (Gemma 3)
  bool tied_embeddings = true;      // lm_head = embedding table
  float embed_scale = 1.0f;         // multiply embeddings (Gemma: sqrt(dim), cast to the model dtype)
  Activation act = Activation::silu;
  float attn_scale = 0.0f;          // softmax scale; 0 = 1/sqrt(head_dim) (Gemma: query_pre_attn_scalar^-0.5)
  float attn_softcap = 0.0f;        // 0 = off; else scores = cap * tanh(scores / cap)
  float final_softcap = 0.0f;       // 0 = off; same on the logits
  int32_t sliding_window = 0;       // window of sliding layers (keys at positions > pos - window)
  std::vector<AttentionType> layer_types;  // n_layers entries
  std::vector<LayerKind> layer_kinds;      // n_layers entries; empty = every layer is attention
  RopeConfig rope;

  // --- LFM2 (short-conv hybrid: layer_kinds short_conv) ---
  int32_t conv_kernel = 0;          // width of the causal depthwise conv (HF conv_L_cache); its rolling
                                    // state keeps the last conv_kernel - 1 inputs of each conv layer
  // --- Qwen 3.5 / 3.6 (Gated DeltaNet hybrid) ---
  int32_t rotary_dim = 0;           // partial rotary: the first rotary_dim dims of a head rotate; 0 = head_dim
  bool attn_output_gate = false;    // attn_q is [n_heads, 2, head_dim] rows (q, gate); out *= sigmoid(gate)
  int32_t linear_k_heads = 0;       // linear_attention layers: q/k heads (repeated onto v heads)
  int32_t linear_v_heads = 0;       //   v heads: the recurrent state is [linear_v_heads, k_dim, v_dim] f32
  int32_t linear_k_dim = 0;         //   per-head q/k width
  int32_t linear_v_dim = 0;         //   per-head v width
  int32_t linear_conv = 0;          //   causal depthwise conv width over the qkv projection (4)
  int32_t linear_qkv_dim() const { return 2 * linear_k_heads * linear_k_dim + linear_v_heads * linear_v_dim; }
  int32_t linear_out_dim() const { return linear_v_heads * linear_v_dim; }
  int32_t rot_dim() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // --- Gemma 4 (issue 14): per-layer attention shapes, KV sharing, per-layer inputs ---
  // Per-layer sizes where layers differ (full-attention layers with their own head_dim and KV heads,
  // double-wide MLPs); empty = every layer has head_dim, n_kv_heads, ffn_dim.
  std::vector<int32_t> layer_head_dims, layer_kv_heads, layer_ffn_dims;
  bool v_from_k = false;            // full-attention layers have no v projection: v = k's projection (before k's norm)
  bool v_norm = false;              // RMS-normalize each v head, without a weight
  int32_t kv_shared_layers = 0;     // the last N layers compute no k/v: they read the cache of the
                                    // last earlier layer of their attention type
  bool layer_scalar = false;        // blk.N.layer_scalar [1] multiplies the residual after the layer
  int32_t ple_dim = 0;              // per-layer input width (hidden_size_per_layer_input); 0 = none
  int32_t ple_vocab = 0;            // rows of per_layer_embed
  float ple_embed_scale = 1.0f;     // per_layer_embed rows are multiplied by this (sqrt(ple_dim))

  // --- Mixture of experts (issue 16: Mixtral, Qwen3-MoE, GPT-OSS; runtime/model/forward_moe.cpp) ---
  // Every layer's FFN is n_experts experts of width expert_ffn_dim, n_experts_used of them per token:
  // router logits = blk.N.ffn_router xn (+ ffn_router_bias), the top n_experts_used by logit (ties: the
  // lower expert id), weights softmax over those (= full softmax renormalized, Mixtral's and Qwen3-MoE's
  // norm_topk_prob, GPT-OSS's top-k-then-softmax) or, with !moe_norm_topk, the full softmax's own values.
  int32_t n_experts = 0;            // 0: dense FFN
  int32_t n_experts_used = 0;
  int32_t expert_ffn_dim = 0;
  bool moe_norm_topk = true;
  bool moe_router_bias = false;     // GPT-OSS: router bias, expert gate/up/down biases
  bool moe_expert_bias = false;
  // GPT-OSS's clamped SwiGLU: g = min(gate, limit), u = clamp(up, -limit, limit), h = (u + 1) g sigmoid(alpha g);
  // swiglu_limit 0 = the plain act(gate) * up.
  float swiglu_alpha = 0.0f, swiglu_limit = 0.0f;
  bool attn_out_bias = false;       // GPT-OSS: o_proj bias blk.N.attn_out_bias [dim]
  bool attn_sinks = false;          // GPT-OSS: blk.N.attn_sinks [n_heads], a per-head logit in the softmax's denominator
  bool moe() const { return n_experts > 0; }

  std::vector<int32_t> eos_ids;     // generation stops on any of these
  int32_t bos_id = -1;

  int32_t q_dim() const { return n_heads * head_dim; }
  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  float softmax_scale() const;      // attn_scale or 1/sqrt(head_dim)
  LayerKind kind(int32_t l) const { return layer_kinds.empty() ? LayerKind::attention : layer_kinds[size_t(l)]; }
  // Gemma 4: one layer's sizes, and where its K/V come from.
  int32_t head_dim_of(int32_t l) const { return layer_head_dims.empty() ? head_dim : layer_head_dims[size_t(l)]; }
  int32_t kv_heads_of(int32_t l) const { return layer_kv_heads.empty() ? n_kv_heads : layer_kv_heads[size_t(l)]; }
  int32_t ffn_dim_of(int32_t l) const { return layer_ffn_dims.empty() ? ffn_dim : layer_ffn_dims[size_t(l)]; }
  int32_t q_dim_of(int32_t l) const { return n_heads * head_dim_of(l); }
  int32_t kv_dim_of(int32_t l) const { return kv_heads_of(l) * head_dim_of(l); }
  // head_dim of the first full (global) or sliding layer; the model's head_dim when there is none. One RoPE
  // table serves each attention type, so its layers share this head_dim (Model checks it).
  int32_t head_dim_of_type(bool global) const {
    for (int32_t l = 0; l < n_layers; ++l)
      if (sliding(l) != global) return head_dim_of(l);
    return head_dim;
  }
  // The widest layer's sizes (Gemma 4's layers differ), for buffers planned once for every layer.
  int32_t max_over_layers(int32_t (ModelConfig::*of)(int32_t) const) const {
    int32_t m = 0;
    for (int32_t l = 0; l < n_layers; ++l) m = m > (this->*of)(l) ? m : (this->*of)(l);
    return m;
  }
  bool sliding(int32_t l) const { return !layer_types.empty() && layer_types[size_t(l)] == AttentionType::sliding; }
  bool has_v_proj(int32_t l) const { return !(v_from_k && !sliding(l)); }
  bool computes_kv(int32_t l) const { return l < n_layers - kv_shared_layers; }
  // Layer l keeps a KV cache of its own: an attention layer that is not KV-shared (hybrids' other layers
  // keep a fixed-size state instead).
  bool owns_kv_cache(int32_t l) const { return kind(l) == LayerKind::attention && computes_kv(l); }
  int32_t kv_source(int32_t l) const;  // the layer whose KV cache layer l reads (itself unless shared)
  float softmax_scale_of(int32_t l) const {
    return (attn_scale > 0 ? attn_scale : 1.0f / __builtin_sqrtf(float(head_dim_of(l)))) * rope.attention_factor *
           rope.attention_factor;
  }
};

inline int32_t ModelConfig::kv_source(int32_t l) const {
  if (computes_kv(l)) return l;
  for (int32_t s = n_layers - kv_shared_layers - 1; s >= 0; --s)
    if (sliding(s) == sliding(l)) return s;
  return l;  // validate_config rejects this
}

// The scale of q.k, LongRoPE's attention factor (on q and k both) included.
inline float ModelConfig::softmax_scale() const {
  return (attn_scale > 0 ? attn_scale : 1.0f / __builtin_sqrtf(float(head_dim))) * rope.attention_factor *
         rope.attention_factor;
}

// Internal tensor names, written once. The converter maps HF names onto these; the model binds by them.
//   embed            [vocab, dim]
//   output           [vocab, dim]       (absent when tied)
//   output_norm      [dim]
//   blk.N.attn_norm  [dim]              blk.N.attn_q [q_dim, dim]   blk.N.attn_k/v [kv_dim, dim]
//   blk.N.attn_q_bias/k_bias/v_bias     blk.N.attn_q_norm/k_norm [head_dim]
//   blk.N.attn_out   [dim, q_dim]       blk.N.attn_post_norm [dim]  (sandwich)
//   blk.N.ffn_norm   [dim]              blk.N.ffn_gate/ffn_up [ffn_dim, dim]  blk.N.ffn_down [dim, ffn_dim]
//   blk.N.ffn_post_norm [dim]           (sandwich)
// Short-conv layers (LFM2) have attn_norm (HF operator_norm) and, in place of attention:
//   blk.N.conv_in [3*dim, dim] (rows B | C | x)   blk.N.conv_kernel [dim, 1, conv_kernel] (F32)
//   blk.N.conv_out [dim, dim]
// Gated DeltaNet layers (kind linear_attention) have, instead of attn_q/k/v/out:
//   blk.N.linear_qkv [linear_qkv_dim, dim]  blk.N.linear_z [linear_out_dim, dim]
//   blk.N.linear_b / linear_a [linear_v_heads, dim]   blk.N.linear_conv [linear_qkv_dim, 1, linear_conv] (F32)
//   blk.N.linear_a_log / linear_dt_bias [linear_v_heads]   blk.N.linear_norm [linear_v_dim] (plain w, no offset)
//   blk.N.linear_out [dim, linear_out_dim]
// Gemma 4 (sizes per layer: head_dim_of, kv_heads_of, ffn_dim_of; attn_v absent where !has_v_proj,
// attn_k/attn_v/attn_k_norm absent where !computes_kv):
//   blk.N.layer_scalar [1]
//   ple_embed [ple_vocab, n_layers*ple_dim]   ple_proj [n_layers*ple_dim, dim]   ple_proj_norm [ple_dim]
//   blk.N.ple_gate [ple_dim, dim]       blk.N.ple_out [dim, ple_dim]   blk.N.ple_post_norm [dim]
// Mixture-of-experts layers (n_experts E, expert_ffn_dim F; DOPPLER's [experts, rows, cols] layout) have,
// instead of ffn_gate/up/down:
//   blk.N.ffn_router [E, dim] (F16)  blk.N.ffn_router_bias [E]
//   blk.N.ffn_gate_up_exps [E, 2F, dim] (per expert: F gate rows, then F up rows)   blk.N.ffn_down_exps [E, dim, F]
//   blk.N.ffn_gate_up_exps_bias [E, 2F]   blk.N.ffn_down_exps_bias [E, dim]
// and GPT-OSS's attention blk.N.attn_out_bias [dim], blk.N.attn_sinks [n_heads].
// The manifest keeps HF names (DOPPLER compatibility); rdrr/tensor_names.h maps them.

}  // namespace bs
