// export-gguf's names and layouts (cmd_export_gguf.cpp): the GGUF architecture a model is written as,
// llama.cpp's tensor names, and the tensor transforms its converter makes that need more than a name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace bs::export_gguf {

// The GGUF architecture a model is written as, and what its converter does to the tensors.
struct Target {
  std::string arch;             // general.architecture
  bool permute_qk = false;      // llama: q/k rows to adjacent-pair RoPE order
  bool norms_plus_one = false;  // gemma2/3: norm weights stored as 1 + w
  bool fused = false;           // phi3: attn_qkv and gate|up ffn_up
  bool shortconv = false;       // lfm2: conv layers, per-layer KV head counts
  bool moe = false;             // Mixtral (llama), qwen3moe, gpt-oss: stacked experts, ffn_gate_inp router
  bool fuse_gate_up = false;    // experts' gate|up as ffn_gate_up_exps, else ffn_gate_exps + ffn_up_exps
  bool qwen35 = false;          // Gated DeltaNet hybrid: 1 + w norms, -exp(A_log), tiled v heads
  bool gemma4 = false;  // per-layer sizes as arrays, PLE, layer scalars, proportional RoPE as rope_freqs
  int32_t full_interval = 0;  // qwen35: every full_interval-th layer is full attention
};

// llama.cpp's name of a blueshift internal tensor name; empty when the architecture has no such tensor.
std::string gguf_name(const std::string& internal, const Target& t);
// llama.cpp's name(s) of a MoE or GPT-OSS tensor (leaf after "blk.N."), each with the half of the rows per
// expert it takes (-1: all): gate|up experts become ffn_gate_exps and ffn_up_exps unless fused. Empty: none.
std::vector<std::pair<std::string, int>> moe_gguf_names(const std::string& prefix, const std::string& leaf,
                                                        const Target& t);

// Where a Qwen 3.5 DeltaNet tensor holds v heads: after the q and k rows (qk_rows: in_proj_qkv, the conv
// kernel), heads of v_dim rows (per_dim) or of one row (a, b, A_log, dt_bias), or heads of v_dim columns
// (out_proj). nullopt: none (A_log is listed for its -exp too).
struct VLayout {
  bool qk_rows = false, per_dim = false, columns = false;
};
std::optional<VLayout> v_layout(const std::string& internal);
// llama.cpp's converter, where Qwen 3.5 has fewer k heads than v heads, reorders the v heads from HF's
// grouped order to a tiled one: its v head v * nk + g is HF's g * r + v (r = nv / nk). Applied to heads of
// `width` rows (or of columns, when `columns`) after `lead` untouched rows; `in` holds `rows` rows.
void tile_v_heads(std::span<const std::byte> in, std::vector<std::byte>& out, size_t rows, int64_t nk,
                  int64_t nv, int64_t lead, int64_t width, bool columns);

}  // namespace bs::export_gguf
