// blueshift export-gguf (hidden): writes an RDRR model of the llama, gemma2/3/4, phi3, lfm2, qwen35 or MoE
// (Mixtral as llama, qwen3moe, gpt-oss) shape as a GGUF v3
// file llama.cpp loads, so the two engines can be benchmarked on the same weights (benchmarks/peer/run_peer.sh)
// and GGUF import can be tested on files written the way llama.cpp's converter writes them.
//
// Quantized blocks are copied as they are (blueshift's Q4_K/Q6_K/Q8_0 are GGML's bytes). What changes on
// the way is what llama.cpp's convert_hf_to_gguf.py changes:
//  - dims: GGUF lists ne[0] = the row length first, the reverse of the HF shape [out, in];
//  - llama: attn_q / attn_k rows. HF checkpoints (and so RDRR) rotate the halves (i, i + head_dim/2) of
//    each head, llama.cpp's llama architecture adjacent pairs (2i, 2i+1); its converter permutes the rows
//    of q and k per head, and so does this. Each row is quantized on its own, so the permutation moves
//    whole rows of bytes and works for every type;
//  - gemma2 / gemma3: every RMSNorm weight is written as 1 + w (llama.cpp's RMSNorm scales by w itself);
//    the attention scale, sliding pattern and Gemma 3's local RoPE base are not in the file: llama.cpp
//    derives them from the architecture, so a model whose values differ is refused;
//  - phi3: q|k|v rows fused as attn_qkv and gate|up rows as ffn_up, as HF's checkpoint has them; LongRoPE's
//    factors as the tensors rope_factors_long / rope_factors_short;
//  - MoE: experts stacked (ffn_gate_exps / ffn_up_exps / ffn_down_exps, or ffn_gate_up_exps with
//    --fuse-gate-up), the router as ffn_gate_inp; gpt-oss's sinks, biases, YaRN keys;
//  - qwen35: norms as 1 + w (not the gated one), A_log as -exp(A_log), v heads tiled (where k heads are fewer),
//    the DeltaNet sizes as ssm.* keys;
//  - gemma4: per-layer sizes as arrays, key_length / key_length_swa, proportional RoPE as rope_freqs.
// The vocabulary is a stand-in of the model's size (GPT-2 byte tokens, then placeholders, no merges):
// enough to load and decode given token ids, not to tokenize text.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.h"
#include "cli/export_gguf_names.h"
#include "rdrr/gguf.h"
#include "rdrr/manifest.h"
#include "rdrr/quant.h"
#include "runtime/base/error.h"
#include "sharding/reader.h"

namespace {

namespace fs = std::filesystem;
using bs::gguf::Value;

struct Args {
  std::string model, out;
  bool json = false;
  bool fuse_gate_up = false;  // experts' gate|up as one ffn_gate_up_exps (llama.cpp's converter's fused option)
};

using namespace bs::export_gguf;

// The architecture a model is written as; refuses what llama.cpp's would compute differently.
// Gemma 4 as llama.cpp's gemma4 computes it: attention scale 1, GELU (tanh), q/k/v norms, sandwich norms of w,
// one head width per kind of layer (key_length, key_length_swa), sliding layers rotating the whole head.
Target gemma4_target(const bs::ModelConfig& c, const std::string& label) {
  Target t;
  t.arch = "gemma4";
  t.gemma4 = true;
  auto refuse = [&](const char* what) {
    bs::fail("{}: export-gguf writes it as llama.cpp's gemma4 architecture, which would compute it differently: it "
             "has {}",
             label, what);
  };
  if (c.attn_scale != 1.0f) refuse("an attention scale other than 1");
  if (c.act != bs::Activation::gelu_tanh || c.norm_offset || !c.sandwich_norm || !c.qk_norm || !c.v_norm)
    refuse("another activation or norm layout");
  if (c.attn_softcap != 0 || c.qkv_bias || c.moe()) refuse("an attention softcap, q/k/v biases or experts");
  if (c.rope.scaling != bs::RopeScaling::none || c.rotary_dim > 0) refuse("scaled or partial RoPE on sliding layers");
  for (int32_t l = 0; l < c.n_layers; ++l)
    if (c.head_dim_of(l) != c.head_dim_of_type(!c.sliding(l)))
      refuse("layers of one kind with different head widths (llama.cpp has key_length and key_length_swa)");
  return t;
}

Target target_of(const bs::ModelConfig& c, const std::string& label, bool fuse_gate_up) {
  if (c.arch == "gemma4_text") return gemma4_target(c, label);
  const bool gemma2 = c.arch == "gemma2", gemma3 = c.arch == "gemma3_text", phi3 = c.arch == "phi3";
  const bool lfm2 = c.arch == "lfm2", qwen3moe = c.arch == "qwen3_moe", gptoss = c.arch == "gpt_oss";
  const bool qwen35 = c.arch == "qwen3_5_text";
  Target t;
  t.arch = gemma2 ? "gemma2" : gemma3 ? "gemma3" : phi3 ? "phi3" : lfm2 ? "lfm2" : qwen3moe ? "qwen3moe"
         : gptoss ? "gpt-oss" : qwen35 ? "qwen35" : "llama";  // Mixtral is llama.cpp's llama with experts
  t.qwen35 = qwen35;
  t.moe = c.moe();
  t.fuse_gate_up = fuse_gate_up;
  t.shortconv = lfm2;
  t.permute_qk = t.arch == "llama";
  t.norms_plus_one = gemma2 || gemma3;
  t.fused = phi3;
  auto refuse = [&](const char* what) {
    bs::fail("{}: export-gguf writes it as llama.cpp's {} architecture, which would compute it differently: it has {}",
             label, t.arch, what);
  };
  for (int32_t l = 0; l < c.n_layers; ++l)
    if (c.kind(l) != bs::LayerKind::attention && !(lfm2 && c.kind(l) == bs::LayerKind::short_conv) &&
        !(qwen35 && c.kind(l) == bs::LayerKind::linear_attention))
      refuse("layers that are neither attention nor LFM2's short convolution nor Qwen 3.5's DeltaNet");
  if (qwen35) {
    // llama.cpp: every full_attention_interval-th layer is full attention; v heads as wide as k heads.
    while (t.full_interval < c.n_layers && c.kind(t.full_interval) != bs::LayerKind::attention) ++t.full_interval;
    ++t.full_interval;
    for (int32_t l = 0; l < c.n_layers; ++l)
      if ((c.kind(l) == bs::LayerKind::attention) != ((l + 1) % t.full_interval == 0))
        refuse("layer kinds that are not every n-th layer full attention (llama.cpp's full_attention_interval)");
    if (c.linear_k_dim != c.linear_v_dim) refuse("DeltaNet v heads of another width than k heads");
    if (!c.attn_output_gate) refuse("no attention output gate");
    if (!c.norm_offset) refuse("plain w norms");
  }
  if (c.qkv_bias && !gptoss) refuse("q/k/v biases");
  if ((c.attn_out_bias || c.attn_sinks) && !gptoss) refuse("an o_proj bias or attention sinks");
  if (c.moe() && c.arch != "mixtral" && !qwen3moe && !gptoss) refuse("experts of another family");
  if (qwen3moe && !c.moe_norm_topk) refuse("unnormalized top-k expert weights (llama.cpp's qwen3moe renormalizes)");
  if (c.swiglu_limit != (gptoss ? 7.0f : 0.0f) || c.swiglu_alpha != (gptoss ? 1.702f : 0.0f))
    refuse(gptoss ? "another SwiGLU clamp than 7 / alpha 1.702" : "a clamped SwiGLU");
  const bool qk_norm = gemma3 || lfm2 || qwen3moe || qwen35;
  if (c.qk_norm != qk_norm) refuse(qk_norm ? "no q/k norms" : "q/k norms");
  if (c.sandwich_norm != t.norms_plus_one) refuse(t.norms_plus_one ? "no sandwich norms" : "sandwich norms");
  if (c.norm_offset != t.norms_plus_one && !qwen35) refuse(t.norms_plus_one ? "plain w norms" : "(1 + w) norms");
  if (c.act != (t.norms_plus_one ? bs::Activation::gelu_tanh : bs::Activation::silu))
    refuse(t.norms_plus_one ? "a SiLU MLP" : "a GELU MLP");
  if (!t.norms_plus_one && c.embed_scale != 1.0f) refuse("an embedding scale");
  if ((c.rotary_dim > 0 && !qwen35) || c.rope.partial_factor != 1.0f) refuse("partial rotary embeddings");
  if (c.head_dim % 2) refuse("an odd head_dim");
  if (phi3 && c.tied_embeddings) refuse("tied embeddings");
  if (t.norms_plus_one && !c.tied_embeddings) refuse("an untied output matrix");
  if (gemma2 ? c.attn_softcap <= 0 || c.final_softcap <= 0 : c.attn_softcap != 0 || c.final_softcap != 0)
    refuse(gemma2 ? "no logit softcaps" : "logit softcaps");
  // llama.cpp's attention scale: 1/sqrt(head_dim), for Gemma's 27B (46 / 62 layers) 1/sqrt(dim / heads).
  const bool gemma_27b = (gemma2 && c.n_layers == 46) || (gemma3 && c.n_layers == 62);
  const float scale = 1.0f / std::sqrt(float(gemma_27b ? c.dim / c.n_heads : c.head_dim));
  const float own = c.attn_scale > 0 ? c.attn_scale : 1.0f / std::sqrt(float(c.head_dim));
  if (std::abs(own / scale - 1) > 1e-6f) refuse("another attention scale");
  // Sliding layers: gemma2 even layers, gemma3 five in six, phi3 all or none, llama none.
  for (int32_t l = 0; l < c.n_layers; ++l) {
    bool want = gemma2 || gptoss ? l % 2 == 0 : gemma3 ? l % 6 < 5 : phi3 ? c.sliding(0) : false;
    if (c.sliding(l) != want) refuse("another sliding-window pattern");
  }
  if (gemma3 && c.rope.local_theta != 10000.0f) refuse("a local RoPE base other than 10000");
  if (c.rope.scaling == bs::RopeScaling::longrope && !phi3) refuse("LongRoPE");
  if (c.rope.scaling == bs::RopeScaling::llama3 && t.arch != "llama") refuse("llama3 RoPE scaling");
  if (c.rope.scaling == bs::RopeScaling::yarn && (!gptoss || c.rope.yarn_truncate))
    refuse(gptoss ? "YaRN with truncated ramp ends (llama.cpp never truncates)" : "YaRN");
  return t;
}

// The text of token `b` < 256 in GPT-2's byte-level vocabulary: printable Latin-1 bytes stand for
// themselves, the others for code points 256, 257, ... in byte order.
std::string byte_token(int b) {
  auto printable = [](int x) { return (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF); };
  uint32_t cp = uint32_t(b);
  if (!printable(b)) {
    cp = 256;
    for (int x = 0; x < b; ++x) cp += !printable(x);
  }
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

// llama3 RoPE as llama.cpp applies it: a per-frequency divisor (rope_freqs.weight, head_dim/2 floats).
std::vector<float> llama3_rope_factors(const bs::ModelConfig& c) {
  const auto& r = c.rope;
  const double low_wavelen = r.original_max_position / r.low_freq_factor;
  const double high_wavelen = r.original_max_position / r.high_freq_factor;
  std::vector<float> f(size_t(c.head_dim / 2));
  for (size_t i = 0; i < f.size(); ++i) {
    double freq = std::pow(double(r.theta), -2.0 * double(i) / c.head_dim);
    double wavelen = 2 * M_PI / freq;
    if (wavelen < high_wavelen) {
      f[i] = 1.0f;
    } else if (wavelen > low_wavelen) {
      f[i] = r.factor;
    } else {
      double smooth = (r.original_max_position / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
      f[i] = float(1.0 / ((1 - smooth) / r.factor + smooth));
    }
  }
  return f;
}

// HF rows (head h, half j, index i) -> GGUF rows (h, i, j): out row h*hd + 2i + j = in row h*hd + j*hd/2 + i.
void permute_rope_rows(std::span<const std::byte> in, std::vector<std::byte>& out, int64_t rows, int32_t head_dim) {
  const size_t row = in.size() / size_t(rows), half = size_t(head_dim / 2);
  out.resize(in.size());
  for (size_t h = 0; h < size_t(rows / head_dim); ++h)
    for (size_t i = 0; i < half; ++i)
      for (size_t j = 0; j < 2; ++j)
        std::memcpy(out.data() + (h * head_dim + 2 * i + j) * row, in.data() + (h * head_dim + j * half + i) * row, row);
}

// One GGUF tensor: the RDRR tensors whose rows it concatenates (one, or Phi-3's fused parts in row order), or
// one half of each expert's rows of one (half 0: the gate rows of ffn_gate_up_exps, 1: the up rows).
struct OutTensor {
  std::string name;
  std::vector<const bs::TensorEntry*> parts;
  int half = -1;
};

// Rows [h * n / 2, (h + 1) * n / 2) of each of the `groups` equal groups of `in`.
void half_rows(std::span<const std::byte> in, size_t groups, int h, std::vector<std::byte>& out) {
  const size_t per = in.size() / groups, half = per / 2;
  out.resize(groups * half);
  for (size_t g = 0; g < groups; ++g) std::memcpy(out.data() + g * half, in.data() + g * per + size_t(h) * half, half);
}

void run(const Args& a) {
  auto m = bs::read_manifest(a.model);
  const auto& c = m.model_config();
  const Target tg = target_of(c, a.model, a.fuse_gate_up);

  bs::gguf::Writer w(a.out);
  const std::string& arch = tg.arch;
  w.add("general.architecture", Value::str(arch));
  w.add("general.name", Value::str(m.model_id.empty() ? "blueshift export" : m.model_id));
  // llama_ftype (informational): MOSTLY_F16 1, MOSTLY_Q8_0 7, MOSTLY_Q4_K_M 15.
  w.add("general.file_type", Value::u32(m.quantization == "F16" ? 1 : m.quantization == "Q8_0" ? 7 : 15));
  w.add(arch + ".context_length", Value::u32(uint32_t(c.max_seq)));
  w.add(arch + ".embedding_length", Value::u32(uint32_t(c.dim)));
  w.add(arch + ".block_count", Value::u32(uint32_t(c.n_layers)));
  w.add(arch + ".attention.head_count", Value::u32(uint32_t(c.n_heads)));
  const int32_t head_dim = tg.gemma4 ? c.head_dim_of_type(true) : c.head_dim;  // Gemma 4: key_length is the full layers'
  if (tg.gemma4) {
    std::vector<int64_t> ffn, kv;
    std::vector<uint64_t> swa;
    for (int32_t l = 0; l < c.n_layers; ++l) {
      ffn.push_back(c.ffn_dim_of(l));
      kv.push_back(c.kv_heads_of(l));
      swa.push_back(c.sliding(l));
    }
    w.add(arch + ".feed_forward_length", Value::i32_array(std::move(ffn)));
    w.add(arch + ".attention.head_count_kv", Value::i32_array(std::move(kv)));
    w.add(arch + ".attention.sliding_window_pattern", Value{bs::gguf::ValueType::array, bs::gguf::ValueType::boolean, std::move(swa)});
    w.add(arch + ".attention.key_length_swa", Value::u32(uint32_t(c.head_dim_of_type(false))));
    w.add(arch + ".attention.value_length_swa", Value::u32(uint32_t(c.head_dim_of_type(false))));
    w.add(arch + ".rope.dimension_count_swa", Value::u32(uint32_t(c.head_dim_of_type(false))));
    w.add(arch + ".rope.freq_base_swa", Value::f32(c.rope.local_theta > 0 ? c.rope.local_theta : c.rope.theta));
    w.add(arch + ".attention.shared_kv_layers", Value::u32(uint32_t(c.kv_shared_layers)));
    w.add(arch + ".embedding_length_per_layer_input", Value::u32(uint32_t(c.ple_dim)));
    w.add(arch + ".attention.sliding_window", Value::u32(uint32_t(c.sliding_window)));
    if (c.final_softcap > 0) w.add(arch + ".final_logit_softcapping", Value::f32(c.final_softcap));
  } else {
    w.add(arch + ".feed_forward_length", Value::u32(uint32_t(c.ffn_dim)));
  }
  if (tg.shortconv) {  // per layer, 0 for conv layers (llama.cpp's recurrent_layer_arr)
    std::vector<int64_t> kv;
    for (int32_t l = 0; l < c.n_layers; ++l) kv.push_back(c.kind(l) == bs::LayerKind::attention ? c.n_kv_heads : 0);
    w.add(arch + ".attention.head_count_kv", Value::i32_array(std::move(kv)));
    w.add(arch + ".shortconv.l_cache", Value::u32(uint32_t(c.conv_kernel)));
  } else if (!tg.gemma4) {
    w.add(arch + ".attention.head_count_kv", Value::u32(uint32_t(c.n_kv_heads)));
  }
  w.add(arch + ".attention.key_length", Value::u32(uint32_t(head_dim)));
  w.add(arch + ".attention.value_length", Value::u32(uint32_t(head_dim)));
  w.add(arch + ".attention.layer_norm_rms_epsilon", Value::f32(c.norm_eps));
  w.add(arch + ".rope.freq_base", Value::f32(c.rope.theta));
  w.add(arch + ".rope.dimension_count", Value::u32(uint32_t(c.rotary_dim > 0 ? c.rotary_dim : head_dim)));
  w.add(arch + ".vocab_size", Value::u32(uint32_t(c.vocab)));
  if (c.rope.scaling == bs::RopeScaling::linear) {
    w.add(arch + ".rope.scaling.type", Value::str("linear"));
    w.add(arch + ".rope.scaling.factor", Value::f32(c.rope.factor));
  }
  if (tg.qwen35) {
    w.add(arch + ".ssm.conv_kernel", Value::u32(uint32_t(c.linear_conv)));
    w.add(arch + ".ssm.state_size", Value::u32(uint32_t(c.linear_k_dim)));
    w.add(arch + ".ssm.group_count", Value::u32(uint32_t(c.linear_k_heads)));
    w.add(arch + ".ssm.time_step_rank", Value::u32(uint32_t(c.linear_v_heads)));
    w.add(arch + ".ssm.inner_size", Value::u32(uint32_t(c.linear_v_heads * c.linear_v_dim)));
    w.add(arch + ".full_attention_interval", Value::u32(uint32_t(tg.full_interval)));
    w.add(arch + ".rope.dimension_sections", Value::i32_array({11, 11, 10, 0}));  // interleaved MRoPE's default
  }
  if (tg.moe) {
    w.add(arch + ".expert_count", Value::u32(uint32_t(c.n_experts)));
    w.add(arch + ".expert_used_count", Value::u32(uint32_t(c.n_experts_used)));
    if (arch != "llama") w.add(arch + ".expert_feed_forward_length", Value::u32(uint32_t(c.expert_ffn_dim)));
  }
  if (c.rope.scaling == bs::RopeScaling::yarn) {  // GPT-OSS; attn_factor multiplies YaRN's own 0.1 ln(f) + 1
    w.add(arch + ".rope.scaling.type", Value::str("yarn"));
    w.add(arch + ".rope.scaling.factor", Value::f32(c.rope.factor));
    w.add(arch + ".rope.scaling.original_context_length", Value::u32(uint32_t(c.rope.original_max_position)));
    w.add(arch + ".rope.scaling.yarn_beta_fast", Value::f32(c.rope.beta_fast));
    w.add(arch + ".rope.scaling.yarn_beta_slow", Value::f32(c.rope.beta_slow));
    const double own = 0.1 * std::log(double(c.rope.factor)) + 1.0;
    if (float(own) != c.rope.attention_factor)
      w.add(arch + ".rope.scaling.attn_factor", Value::f32(float(c.rope.attention_factor / own)));
  }
  if (arch == "gemma2") {
    w.add(arch + ".attn_logit_softcapping", Value::f32(c.attn_softcap));
    w.add(arch + ".final_logit_softcapping", Value::f32(c.final_softcap));
  }
  // phi3 writes 0 for "no sliding window" (Phi-4), as its converter does.
  if (arch == "gemma2" || arch == "gemma3" || arch == "phi3" || arch == "gpt-oss")
    w.add(arch + ".attention.sliding_window", Value::u32(uint32_t(c.sliding(0) || arch != "phi3" ? c.sliding_window : 0)));
  if (c.rope.scaling == bs::RopeScaling::longrope) {
    w.add(arch + ".rope.scaling.original_context_length", Value::u32(uint32_t(c.rope.original_max_position)));
    w.add(arch + ".rope.scaling.attn_factor", Value::f32(c.rope.attention_factor));
  }
  std::vector<std::string> tokens(size_t(c.vocab));
  std::vector<int64_t> types(tokens.size(), 1);  // normal
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = i < 256 ? byte_token(int(i)) : "<|bs_" + std::to_string(i) + "|>";
  int32_t bos = c.bos_id >= 0 && c.bos_id < c.vocab ? c.bos_id : 0;
  int32_t eos = !c.eos_ids.empty() && c.eos_ids[0] >= 0 && c.eos_ids[0] < c.vocab ? c.eos_ids[0] : 0;
  for (int32_t id : {bos, eos}) types[size_t(id)] = 3;  // control
  w.add("tokenizer.ggml.model", Value::str("gpt2"));
  w.add("tokenizer.ggml.pre", Value::str("llama-bpe"));
  w.add("tokenizer.ggml.tokens", Value::str_array(std::move(tokens)));
  w.add("tokenizer.ggml.token_type", Value::i32_array(std::move(types)));
  w.add("tokenizer.ggml.merges", Value::str_array({}));
  w.add("tokenizer.ggml.bos_token_id", Value::u32(uint32_t(bos)));
  w.add("tokenizer.ggml.eos_token_id", Value::u32(uint32_t(eos)));
  w.add("tokenizer.ggml.add_bos_token", Value::boolean(false));

  // Extra F32 tensors first: llama3's per-frequency divisors, or LongRoPE's long and short factors.
  std::vector<std::vector<float>> extra;
  if (c.rope.scaling == bs::RopeScaling::llama3) {
    extra.push_back(llama3_rope_factors(c));
    w.add_tensor("rope_freqs.weight", {extra.back().size()}, bs::gguf::GgmlType::F32);
  }
  if (tg.gemma4) {  // proportional RoPE on full layers: 1 for each rotated frequency, 1e30 (unrotated) after
    std::vector<float> f(size_t(head_dim / 2), 1e30f);
    const int32_t rotated = int32_t(float(head_dim) * c.rope.partial_factor / 2);
    for (int32_t i = 0; i < rotated; ++i) f[size_t(i)] = 1.0f;
    extra.push_back(f);
    w.add_tensor("rope_freqs.weight", {f.size()}, bs::gguf::GgmlType::F32);
  }
  if (c.rope.scaling == bs::RopeScaling::longrope) {
    for (auto [name, f] : {std::pair{"rope_factors_long.weight", &c.rope.long_factor},
                           std::pair{"rope_factors_short.weight", &c.rope.short_factor}}) {
      extra.push_back(*f);
      w.add_tensor(name, {f->size()}, bs::gguf::GgmlType::F32);
    }
  }
  // The GGUF tensors in the order their last part streams out of the shards; fused ones collect parts.
  std::vector<OutTensor> outs;
  std::map<std::string, std::vector<size_t>> out_of;  // internal name -> its indices in outs
  for (const auto& t : m.tensors) {
    if (t.internal.rfind("blk.", 0) == 0) {
      const size_t dot = t.internal.find('.', 4);
      auto names = moe_gguf_names(t.internal.substr(0, dot + 1), t.internal.substr(dot + 1), tg);
      if (!names.empty() && (tg.moe || tg.arch == "gpt-oss")) {
        for (auto& [name, half] : names) {
          out_of[t.internal].push_back(outs.size());
          outs.push_back(OutTensor{name, {&t}, half});
        }
        continue;
      }
    }
    std::string name = gguf_name(t.internal, tg);
    if (tg.fused) {
      auto dot = t.internal.find('.', 4);
      std::string leaf = t.internal.rfind("blk.", 0) == 0 ? t.internal.substr(dot + 1) : "";
      std::string prefix = t.internal.substr(0, dot + 1);
      if (leaf == "attn_q" || leaf == "attn_k" || leaf == "attn_v") name = prefix + "attn_qkv.weight";
      if (leaf == "ffn_gate" || leaf == "ffn_up") name = prefix + "ffn_up.weight";  // gate|up under llama.cpp's ffn_up
    }
    if (name.empty()) bs::fail("{}: tensor '{}' ({}) has no llama.cpp counterpart", a.model, t.name, t.internal);
    auto it = std::find_if(outs.begin(), outs.end(), [&](const OutTensor& o) { return o.name == name; });
    if (it == outs.end()) it = outs.insert(outs.end(), OutTensor{name, {}});
    it->parts.push_back(&t);
    out_of[t.internal].push_back(size_t(it - outs.begin()));
  }
  std::vector<size_t> order;  // outs by the position of their last part in the manifest
  {
    std::vector<std::pair<size_t, size_t>> last;
    for (size_t i = 0; i < outs.size(); ++i) {
      size_t pos = 0;
      for (size_t j = 0; j < m.tensors.size(); ++j)
        if (&m.tensors[j] == outs[i].parts.back()) pos = j;
      last.push_back({pos, i});
    }
    std::sort(last.begin(), last.end());
    for (auto [pos, i] : last) order.push_back(i);
  }
  for (size_t i : order) {
    const OutTensor& o = outs[i];
    const bs::TensorEntry& first = *o.parts.front();
    auto type = bs::gguf::ggml_type_of(first.dtype);
    if (!type) bs::fail("{}: tensor '{}': dtype {} has no GGML type", a.model, first.name, bs::dtype_name(first.dtype));
    std::vector<int64_t> shape = first.shape;
    if (shape.size() == 3 && shape[1] == 1) shape.erase(shape.begin() + 1);  // LFM2's conv kernel, squeezed
    if (o.half >= 0) shape[1] /= 2;  // [experts, F, ...] of [experts, 2F, ...]
    for (size_t p = 1; p < o.parts.size(); ++p) {
      if (o.parts[p]->dtype != first.dtype || o.parts[p]->shape.size() != 2 || shape.size() != 2 ||
          o.parts[p]->shape[1] != shape[1])
        bs::fail("{}: tensor '{}': its fused parts differ in dtype or row length", a.model, o.name);
      shape[0] += o.parts[p]->shape[0];
    }
    w.add_tensor(o.name, std::vector<uint64_t>(shape.rbegin(), shape.rend()), *type);
  }
  w.write_header();
  for (const auto& f : extra) w.write_tensor(std::as_bytes(std::span(f)));
  std::vector<std::byte> permuted;
  std::map<size_t, std::vector<std::byte>> pending;  // fused tensors' parts so far
  std::vector<std::byte> halved;
  bs::load_tensors(m, a.model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> bytes) {
    const std::vector<size_t>& mine = out_of.at(t.internal);
    if (outs[mine[0]].half >= 0) {  // experts' gate and up halves, in the order they were added
      for (size_t i : mine) {
        half_rows(bytes, size_t(t.shape.at(0)), outs[i].half, halved);
        w.write_tensor(halved);
      }
      return;
    }
    const OutTensor& o = outs[mine[0]];
    bool q = t.internal.ends_with(".attn_q"), k = t.internal.ends_with(".attn_k");
    if (tg.permute_qk && (q || k)) {
      int64_t rows = t.shape.at(0);
      if (rows != int64_t(q ? c.n_heads : c.n_kv_heads) * c.head_dim)
        bs::fail("{}: tensor '{}': expected {} rows, got {}", a.model, t.name, (q ? c.n_heads : c.n_kv_heads) * c.head_dim, rows);
      permute_rope_rows(bytes, permuted, rows, c.head_dim);
      bytes = permuted;
    } else if (std::optional<VLayout> vl = tg.qwen35 ? v_layout(t.internal) : std::nullopt) {
      // -exp(A_log) in f32 as the converter computes it; then the v heads tiled.
      permuted.assign(bytes.begin(), bytes.end());
      if (t.internal.ends_with(".linear_a_log"))
        for (size_t i = 0; i + 4 <= permuted.size(); i += 4) {
          float f;
          std::memcpy(&f, permuted.data() + i, 4);
          f = -std::exp(f);
          std::memcpy(permuted.data() + i, &f, 4);
        }
      if (c.linear_k_heads != c.linear_v_heads) {
        // llama.cpp's converter tiles HF's values, then quantizes. Where a quantized block spans heads (out_proj's
        // columns in 256-value K-quant blocks), so does this: dequantized, tiled, quantized again.
        const bool requant = vl->columns && bs::traits(t.dtype).quantized &&
                             c.linear_v_dim % int32_t(bs::traits(t.dtype).block_elems) != 0;
        std::vector<float> f;
        if (requant) {
          f.resize(size_t(t.shape.at(0) * t.shape.at(1)));
          bs::dequantize_row(t.dtype, permuted.data(), f.data(), int64_t(f.size()));
          permuted.assign(reinterpret_cast<const std::byte*>(f.data()),
                          reinterpret_cast<const std::byte*>(f.data() + f.size()));
        }
        std::vector<std::byte> tiled;
        tile_v_heads(permuted, tiled, size_t(t.shape.at(0)), c.linear_k_heads, c.linear_v_heads,
                     vl->qk_rows ? 2 * c.linear_k_heads * c.linear_k_dim : 0, vl->per_dim ? c.linear_v_dim : 1,
                     vl->columns);
        if (requant) {
          permuted.resize(bytes.size());
          bs::quantize_row(t.dtype, reinterpret_cast<const float*>(tiled.data()), permuted.data(), int64_t(f.size()));
        } else {
          permuted = std::move(tiled);
        }
      }
      bytes = permuted;
    } else if ((tg.norms_plus_one || (tg.qwen35 && !t.internal.ends_with(".linear_norm"))) &&
               o.name.ends_with("norm.weight")) {
      if (t.dtype != bs::DType::F32) bs::fail("{}: tensor '{}': expected an F32 norm, got {}", a.model, t.name, bs::dtype_name(t.dtype));
      permuted.assign(bytes.begin(), bytes.end());
      for (size_t i = 0; i + 4 <= permuted.size(); i += 4) {
        float f;
        std::memcpy(&f, permuted.data() + i, 4);
        f += 1.0f;  // in f32, as HF's Gemma RMSNorm adds it
        std::memcpy(permuted.data() + i, &f, 4);
      }
      bytes = permuted;
    }
    if (o.parts.size() == 1) return w.write_tensor(bytes);
    auto& buf = pending[mine[0]];
    buf.insert(buf.end(), bytes.begin(), bytes.end());
    if (&t == o.parts.back() || t.internal == o.parts.back()->internal) {
      w.write_tensor(buf);
      pending.erase(mine[0]);
    }
  });
  uint64_t size = w.finish();
  if (a.json) {
    nlohmann::ordered_json j = {{"gguf", a.out}, {"bytes", size}, {"tensors", w.tensors().size()},
                                {"architecture", arch}, {"quantization", m.quantization}, {"rope_qk_permuted", tg.permute_qk}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %s, %zu tensors, %.1f MiB\n", a.out.c_str(), arch.c_str(), w.tensors().size(), size / 1048576.0);
  }
}

bs::cli::Command export_gguf_cmd{"export-gguf", "Write an RDRR model (llama.cpp's architectures it maps) as a GGUF file",
                                  [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.group("");  // hidden: a benchmarking aid, not a supported conversion path
  app.add_option("--model", a->model, "RDRR model directory")->required();
  app.add_option("--out", a->out, "GGUF file to write")->required();
  app.add_flag("--json", a->json, "print a JSON summary");
  app.add_flag("--fuse-gate-up", a->fuse_gate_up,
               "write experts' gate and up as one ffn_gate_up_exps (llama.cpp's converter's fused option)");
  app.callback([a] { run(*a); });
}};

}  // namespace
