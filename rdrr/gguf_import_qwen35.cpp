// The GGUF import of Qwen 3.5 / 3.6 (llama.cpp's 'qwen35'): Gated DeltaNet linear-attention layers around
// gated full attention. What llama.cpp's converter (its Qwen3Next and V-head-reorder classes) changes, and
// how the import takes it back to the HF checkpoint's values:
//  - every RMSNorm weight but the DeltaNet's gated norm (linear_attn.norm) is stored as 1 + w: 1 is
//  subtracted,
//    as for Gemma (the runtime's 1 + w then gives llama.cpp's value back bit for bit);
//  - A_log is stored as A = -exp(A_log) (ssm_a, F32): A_log = log(-A), snapped to the bf16 value whose exp
//    gives the file's A within 2 f32 ulps (Qwen ships A_log in bf16; the converter's exp ran in f32), else
//    log(-A) rounded to f32 (within an ulp or two of the original);
//  - where the q/k heads are fewer than the v heads, the v heads are reordered from HF's grouped order (v
//    heads of k head 0, then of k head 1, ...) to a tiled one (the first v head of every k head, then the
//    second ...), in the v rows of in_proj_qkv and the conv kernel, the rows of in_proj_z / a / b, A_log,
//    dt_bias and the columns of out_proj: the import moves them back (whole rows of bytes; out_proj's
//    columns by head, which needs head_v_dim to be whole blocks of the file's type);
//  - the conv kernel [channels, 1, width] is stored squeezed, [channels, width]; dt_bias is ssm_dt.bias.
// The layer kinds come from attention.recurrent_layers or full_attention_interval (every interval-th layer
// full attention); partial rotary from rope.dimension_count. Multi-token-prediction layers
// (nextn_predict_layers blocks after the decoder's) are not run by blueshift and are left out.
#include <cmath>

#include "rdrr/gguf_import_arch.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs::gguf_import {

using nlohmann::json;

void qwen35_config(const Meta& m, int64_t n_layers, int64_t head_dim, json& c) {
  const std::string a = m.arch + ".";
  auto size = [&](const char* key) { return positive(m.uint(a + key), a + key, m.label); };
  const int64_t k_heads = size("ssm.group_count"), v_heads = size("ssm.time_step_rank");
  const int64_t k_dim = size("ssm.state_size"), inner = size("ssm.inner_size"),
                conv = size("ssm.conv_kernel");
  if (v_heads % k_heads || inner % v_heads)
    fail(
        "{}: metadata '{}ssm.time_step_rank' {} / ssm.group_count {} / ssm.inner_size {}: expected v heads a "
        "multiple of k heads and inner size a multiple of v heads",
        m.label, a, v_heads, k_heads, inner);
  if (conv > 64) fail("{}: metadata '{}ssm.conv_kernel': expected 1 .. 64, got {}", m.label, a, conv);
  c["linear_num_key_heads"] = k_heads;
  c["linear_num_value_heads"] = v_heads;
  c["linear_key_head_dim"] = k_dim;
  c["linear_value_head_dim"] = inner / v_heads;
  c["linear_conv_kernel_dim"] = conv;
  c["attn_output_gate"] = true;
  // Layer kinds: recurrent_layers (one flag per layer) where the file has it, else llama.cpp's rule.
  json types = json::array();
  if (const gguf::Value* rl = m.find(a + "attention.recurrent_layers")) {
    std::vector<int64_t> flags;
    if (const auto* i = std::get_if<std::vector<int64_t>>(&rl->v)) flags = *i;
    if (const auto* u = std::get_if<std::vector<uint64_t>>(&rl->v))
      for (uint64_t x : *u) flags.push_back(x > 1 ? 2 : int64_t(x));
    if (int64_t(flags.size()) < n_layers)
      fail("{}: metadata '{}attention.recurrent_layers': expected {} flags (one per layer), got {}", m.label,
           a, n_layers, flags.size());
    for (int64_t l = 0; l < n_layers; ++l) {
      if (flags[size_t(l)] != 0 && flags[size_t(l)] != 1)
        fail("{}: metadata '{}attention.recurrent_layers[{}]': expected 0 or 1, got {}", m.label, a, l,
             flags[size_t(l)]);
      types.push_back(flags[size_t(l)] ? "linear_attention" : "full_attention");
    }
  } else {
    const uint64_t interval = m.uint(a + "full_attention_interval", 4);
    if (interval < 1 || interval > uint64_t(n_layers))
      fail("{}: metadata '{}full_attention_interval': expected 1 .. {} (block_count), got {}", m.label, a,
           n_layers, interval);
    for (int64_t l = 0; l < n_layers; ++l)
      types.push_back((uint64_t(l) + 1) % interval ? "linear_attention" : "full_attention");
  }
  c["layer_types"] = types;
  // Partial rotary: llama.cpp's rope.dimension_count is head_dim * partial_rotary_factor.
  const uint64_t rot = m.uint(a + "rope.dimension_count", uint64_t(head_dim));
  if (rot < 2 || rot > uint64_t(head_dim) || rot % 2)
    fail("{}: metadata '{}rope.dimension_count': expected an even count of 2 .. {} (key_length), got {}",
         m.label, a, head_dim, rot);
  c["partial_rotary_factor"] = double(rot) / double(head_dim);
}

std::string_view qwen35_leaf(std::string_view leaf) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"attn_qkv.weight", "linear_qkv"},    {"attn_gate.weight", "linear_z"},
      {"ssm_beta.weight", "linear_b"},      {"ssm_alpha.weight", "linear_a"},
      {"ssm_conv1d.weight", "linear_conv"}, {"ssm_a", "linear_a_log"},
      {"ssm_dt.bias", "linear_dt_bias"},    {"ssm_norm.weight", "linear_norm"},
      {"ssm_out.weight", "linear_out"},     {"post_attention_norm.weight", "ffn_norm"},
  };
  for (auto [g, i] : kNames)
    if (leaf == g) return i;
  return {};
}

std::vector<int64_t> qwen35_v_order(const ModelConfig& c, std::string_view leaf, int64_t& group,
                                    bool& columns) {
  const int64_t nk = c.linear_k_heads, nv = c.linear_v_heads, r = nk ? nv / nk : 1;
  columns = false;
  group = 1;
  if (nk == 0 || nk == nv) return {};
  // Units (heads of `group` rows or columns) before the v heads, and the v heads' width.
  int64_t lead = 0, width = 1;
  if (leaf == "linear_qkv" || leaf == "linear_conv") {
    lead = 2 * nk * c.linear_k_dim;
    width = c.linear_v_dim;
  } else if (leaf == "linear_z") {
    width = c.linear_v_dim;
  } else if (leaf == "linear_out") {
    width = c.linear_v_dim;
    columns = true;
  } else if (leaf != "linear_a" && leaf != "linear_b" && leaf != "linear_a_log" && leaf != "linear_dt_bias") {
    return {};
  }
  // Stored (HF) head h = g * r + v is the file's head v * nk + g; order[i] = the file's unit for unit i.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < lead; ++i) order.push_back(i);
  for (int64_t h = 0; h < nv; ++h)
    for (int64_t i = 0; i < width; ++i) order.push_back(lead + ((h % r) * nk + h / r) * width + i);
  if (columns) {  // whole heads of columns: one unit per head
    order.clear();
    for (int64_t h = 0; h < nv; ++h) order.push_back((h % r) * nk + h / r);
    group = width;
  }
  return order;
}

float a_log_of(float a) {
  const float x = float(std::log(-double(a)));
  const float b = bf16_to_float(float_to_bf16(x));
  const float back = -std::exp(b);
  const float ulp = std::nextafter(std::abs(a), INFINITY) - std::abs(a);
  return std::abs(back - a) <= 2 * ulp ? b : x;
}

}  // namespace bs::gguf_import
