#include "rdrr/gguf_import.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "rdrr/gguf_dequant.h"
#include "rdrr/gguf_import_arch.h"
#include "rdrr/hf_config.h"
#include "rdrr/partial_dir.h"
#include "rdrr/safetensors.h"
#include "rdrr/tensor_names.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The architectures an import knows: GGUF's general.architecture, the HF model_type and class it
// stands for, whether llama.cpp's converter permuted q/k rows (its non-NEOX RoPE families), and whether
// it stored every RMSNorm weight as 1 + w (Gemma: convert_hf_to_gguf.py adds 1 to each "*norm.weight",
// so llama.cpp's plain RMSNorm computes HF's x * (1 + w)).
struct ArchSpec {
  std::string_view gguf, model_type, hf_class;
  bool permuted_qk;
  bool norms_plus_one = false;
  bool moe = false;  // stacked experts (gguf_import_moe.cpp); llama's when expert_count > 0
};
constexpr ArchSpec kArchs[] = {
    {"llama", "llama", "LlamaForCausalLM", true},  // Llama 1-3, Mistral (llama.cpp writes Mistral as llama)
    {"qwen2", "qwen2", "Qwen2ForCausalLM", false},
    {"qwen3", "qwen3", "Qwen3ForCausalLM", false},
    {"phi3", "phi3", "Phi3ForCausalLM", false},  // fused attn_qkv and gate|up ffn_up, split at import
    {"gemma2", "gemma2", "Gemma2ForCausalLM", false, true},
    {"gemma3", "gemma3_text", "Gemma3ForCausalLM", false, true},
    // Per-layer sizes, KV sharing, per-layer inputs, proportional RoPE (gguf_import_gemma.cpp); norms as w.
    {"gemma4", "gemma4_text", "Gemma4ForCausalLM", false, false},
    // Short-conv hybrid: per-layer head_count_kv (0 = a conv layer), shortconv.* tensors; NEOX RoPE.
    {"lfm2", "lfm2", "Lfm2ForCausalLM", false},
    // Mixture of experts: Mixtral is llama.cpp's llama with expert_count (q/k rows permuted as Llama's).
    {"llama", "mixtral", "MixtralForCausalLM", true, false, true},
    {"qwen3moe", "qwen3_moe", "Qwen3MoeForCausalLM", false, false, true},
    {"gpt-oss", "gpt_oss", "GptOssForCausalLM", false, false, true},
    // Gated DeltaNet hybrid (gguf_import_qwen35.cpp); its norms are 1 + w as Gemma's (but not the gated one).
    {"qwen35", "qwen3_5_text", "Qwen3_5ForCausalLM", false, true},
};

using gguf_import::internal_name;
using gguf_import::Meta;
using gguf_import::mtp_block;
using gguf_import::per_layer_counts;
using gguf_import::positive;
using gguf_import::read_longrope;

std::string quantization_name(const std::set<DType>& matrices) {
  if (matrices.count(DType::Q4_K)) return "Q4_K_M";
  if (matrices.size() == 1) return std::string(dtype_name(*matrices.begin()));
  std::string s;
  for (DType d : matrices) s += (s.empty() ? "" : "+") + std::string(dtype_name(d));
  return s.empty() ? "F16" : s;
}

}  // namespace

bool is_gguf_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && std::memcmp(magic, gguf::kMagic, 4) == 0;
}

GgufImportPlan plan_gguf_import(const gguf::Header& h, const std::string& label, std::span<const std::byte> file) {
  GgufImportPlan p;
  const gguf::Value* av = h.find("general.architecture");
  if (!av || !av->as_string()) fail("{}: metadata 'general.architecture' is missing or not a string", label);
  p.gguf_arch = *av->as_string();
  Meta m{h, label, p.gguf_arch};
  const std::string a = p.gguf_arch + ".";
  // llama's GGUF is Mixtral when it has experts (llama.cpp reads expert_count for its llama too).
  const bool has_experts = h.find(a + "expert_count") && m.uint(a + "expert_count") > 0;
  const ArchSpec* spec = nullptr;
  for (const auto& s : kArchs)
    if (s.gguf == p.gguf_arch && (!spec || s.moe == has_experts)) spec = &s;
  if (!spec)
    fail("{}: general.architecture '{}': import reads llama (and Mixtral as llama with experts), qwen2, qwen3, "
         "qwen3moe, qwen35, gpt-oss, phi3, gemma2, gemma3, gemma4 and lfm2 GGUFs",
         label, p.gguf_arch);

  const int64_t n_blocks = positive(m.uint(a + "block_count"), a + "block_count", label);
  // Qwen 3.5's multi-token-prediction blocks follow the decoder's; blueshift does not run them.
  const uint64_t n_nextn = spec->model_type == "qwen3_5_text" ? m.uint(a + "nextn_predict_layers", 0) : 0;
  if (n_nextn >= uint64_t(n_blocks))
    fail("{}: metadata '{}nextn_predict_layers': expected fewer than block_count {}, got {}", label, a, n_blocks,
         n_nextn);
  const int64_t n_layers = n_blocks - int64_t(n_nextn);
  const int64_t dim = positive(m.uint(a + "embedding_length"), a + "embedding_length", label);
  const int64_t n_heads = positive(m.uint(a + "attention.head_count"), a + "attention.head_count", label);
  // LFM2 gives head_count_kv per layer, 0 for its conv layers: those become HF's layer_types.
  std::vector<int64_t> kv_per_layer;
  const bool gemma4 = spec->model_type == "gemma4_text";
  if (const gguf::Value* kv = h.find(a + "attention.head_count_kv"); kv && kv->type == gguf::ValueType::array) {
    if (gemma4) {  // per layer, checked by gemma4_config; the largest bounds the checks below
      int64_t most = 1;
      if (const auto* u = std::get_if<std::vector<uint64_t>>(&kv->v))
        for (uint64_t x : *u) most = std::max<int64_t>(most, int64_t(std::min<uint64_t>(x, 1u << 30)));
      if (const auto* i = std::get_if<std::vector<int64_t>>(&kv->v))
        for (int64_t x : *i) most = std::max<int64_t>(most, std::min<int64_t>(x, 1 << 30));
      kv_per_layer.assign(size_t(n_layers), most);
    } else if (spec->model_type != "lfm2")
      fail("{}: metadata '{}attention.head_count_kv': expected an integer, got an array", label, a);
    else
      kv_per_layer = per_layer_counts(*kv, uint64_t(n_layers), a + "attention.head_count_kv", label);
  }
  const int64_t n_kv =
      kv_per_layer.empty()
          ? positive(m.uint(a + "attention.head_count_kv", uint64_t(n_heads)), a + "attention.head_count_kv", label)
          : *std::max_element(kv_per_layer.begin(), kv_per_layer.end());
  const int64_t head_dim = positive(m.uint(a + "attention.key_length", uint64_t(dim / n_heads)),
                                    a + "attention.key_length", label);
  if (m.uint(a + "attention.value_length", uint64_t(head_dim)) != uint64_t(head_dim))
    fail("{}: metadata '{}attention.value_length': expected {} (= key_length), got {}", label, a, head_dim,
         m.uint(a + "attention.value_length"));
  if (uint64_t rot = m.uint(a + "rope.dimension_count", uint64_t(head_dim));
      rot != uint64_t(head_dim) && spec->model_type != "qwen3_5_text")
    fail("{}: metadata '{}rope.dimension_count': expected {} (RoPE over the whole head), got {}", label, a,
         head_dim, rot);
  const gguf::TensorInfo* embd = h.tensor("token_embd.weight");
  if (!embd) fail("{}: tensor 'token_embd.weight' is missing", label);
  // Sizes the tensors themselves bound, checked before anything is sized from them: a hostile
  // block_count must not make the plan list billions of tensors.
  if (embd->ne.size() != 2 || embd->ne[0] != uint64_t(dim))
    fail("{}: tensor 'token_embd.weight': expected ne [{}, vocab] ({}embedding_length), got ne {}", label,
         dim, a, json(embd->ne).dump());
  if (uint64_t(n_layers) > h.tensors.size())
    fail("{}: metadata '{}block_count' {}: the file has only {} tensors", label, a, n_layers,
         h.tensors.size());
  if (n_heads > dim || n_kv > n_heads || n_heads % n_kv)
    fail(
        "{}: metadata '{}attention.head_count' {} / head_count_kv {}: expected kv <= heads <= {} "
        "(embedding_length), "
        "heads a multiple of kv",
        label, a, n_heads, n_kv, dim);
  if (uint64_t(n_heads) * uint64_t(head_dim) > (1u << 30))
    fail("{}: metadata '{}attention.key_length' {}: heads x key_length is over 2^30", label, a, head_dim);
  uint64_t vocab = embd->ne.size() == 2 ? embd->ne[1] : 0;
  if (const gguf::Value* tokens = h.find("tokenizer.ggml.tokens"))
    if (auto* list = std::get_if<std::vector<std::string>>(&tokens->v)) vocab = list->size();
  vocab = m.uint(a + "vocab_size", vocab);

  json c = {
      {"model_type", spec->model_type},
      {"architectures", {spec->hf_class}},
      {"hidden_size", dim},
      // Gemma 4's may be per layer (gemma4_config reads it).
      {"intermediate_size", gemma4 && h.find(a + "feed_forward_length") &&
                                    h.find(a + "feed_forward_length")->type == gguf::ValueType::array
                                ? 1
                                : positive(m.uint(a + "feed_forward_length"), a + "feed_forward_length", label)},
      {"num_hidden_layers", n_layers},
      {"num_attention_heads", n_heads},
      {"num_key_value_heads", n_kv},
      {"head_dim", head_dim},
      {"rms_norm_eps", m.number(a + "attention.layer_norm_rms_epsilon")},
      {"rope_theta", m.number(a + "rope.freq_base", 10000.0)},
      {"max_position_embeddings", positive(m.uint(a + "context_length", 4096), a + "context_length", label)},
      {"vocab_size", positive(vocab, a + "vocab_size", label)},
      {"tie_word_embeddings", h.tensor("output.weight") == nullptr},
      {"hidden_act", "silu"}};
  if (spec->model_type == "qwen3" || spec->model_type == "qwen3_moe") c["attention_bias"] = false;
  if (spec->moe) gguf_import::moe_config(m, std::string(spec->model_type), c);
  const bool gemma = spec->model_type.starts_with("gemma");
  if (gemma && spec->model_type != "gemma4_text") gguf_import::gemma_config(m, c);
  if (spec->model_type == "gemma4_text") gguf_import::gemma4_config(m, file, c);
  if (spec->model_type == "qwen3_5_text") gguf_import::qwen35_config(m, n_layers, head_dim, c);
  if (spec->model_type == "lfm2") {
    if (kv_per_layer.empty())
      fail("{}: metadata '{}attention.head_count_kv': expected one count per layer (0 for conv layers)", label, a);
    json types = json::array();
    for (int64_t kv : kv_per_layer) types.push_back(kv ? "full_attention" : "conv");
    c["layer_types"] = types;
    const uint64_t l_cache = m.uint(a + "shortconv.l_cache");
    if (l_cache < 1 || l_cache > 64)
      fail("{}: metadata '{}shortconv.l_cache': expected 1 .. 64, got {}", label, a, l_cache);
    c["conv_L_cache"] = l_cache;
    c["norm_eps"] = c["rms_norm_eps"];
    c["block_auto_adjust_ff_dim"] = false;  // feed_forward_length is the adjusted width already
  }
  for (auto [key, hf] : {std::pair{"tokenizer.ggml.bos_token_id", "bos_token_id"},
                         {"tokenizer.ggml.eos_token_id", "eos_token_id"}})
    if (h.find(key)) c[hf] = m.uint(key);
  if (const gguf::Value* st = h.find(a + "rope.scaling.type")) {
    const std::string* type = st->as_string();
    if (!type)
      fail("{}: metadata '{}rope.scaling.type': expected a string, got {}", label, a, Meta::describe(*st));
    if (*type == "linear") {
      c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", m.number(a + "rope.scaling.factor")}};
    } else if (*type == "yarn" && spec->model_type == "gpt_oss") {
      // GPT-OSS. llama.cpp never truncates the ramp's ends (HF truncate false) and multiplies its attn_factor
      // (default 1) into YaRN's 0.1 ln(factor) + 1, as HF's attention_factor.
      const double factor = m.number(a + "rope.scaling.factor");
      if (!(factor >= 1 && factor < 1e6))
        fail("{}: metadata '{}rope.scaling.factor': expected 1 .. 1e6 for yarn, got {}", label, a, factor);
      const double af = m.number(a + "rope.scaling.attn_factor", 1.0);
      if (!(af > 0 && af < 1e6))
        fail("{}: metadata '{}rope.scaling.attn_factor': expected a positive factor, got {}", label, a, af);
      c["rope_scaling"] = {
          {"rope_type", "yarn"},
          {"factor", factor},
          {"original_max_position_embeddings",
           positive(m.uint(a + "rope.scaling.original_context_length"), a + "rope.scaling.original_context_length",
                    label)},
          {"beta_fast", m.number(a + "rope.scaling.yarn_beta_fast", 32.0)},
          {"beta_slow", m.number(a + "rope.scaling.yarn_beta_slow", 1.0)},
          {"truncate", false},
          {"attention_factor", af * (0.1 * std::log(factor) + 1.0)}};
    } else if (*type != "none") {
      fail("{}: metadata '{}rope.scaling.type': '{}' is not imported for {} (none or linear; yarn for gpt-oss)",
           label, a, *type, p.gguf_arch);
    }
  }
  if (h.tensor("rope_freqs.weight") && !gemma4)
    fail("{}: tensor 'rope_freqs.weight' (llama3-style per-frequency RoPE scaling): not imported yet", label);
  const bool longrope = read_longrope(m, h, file, c, head_dim);
  if (spec->model_type == "phi3") {
    // Phi-3: every layer slides when the window is set; the converter writes 0 for none (Phi-4).
    uint64_t sw = h.find(a + "attention.sliding_window") ? m.uint(a + "attention.sliding_window") : 0;
    c["sliding_window"] = sw ? json(positive(sw, a + "attention.sliding_window", label)) : json(nullptr);
  }
  p.hf_config = c;
  DType embed_type = dtype_of(embd->type).value_or(DType::F16);
  // Gemma scales the embedding by sqrt(dim) rounded to the checkpoint's dtype (HF's normalizer); every Gemma
  // is released in BF16, so that is the rounding an imported one gets (llama.cpp multiplies by the f32 root).
  if (gemma) embed_type = DType::BF16;
  p.config = config_from_hf(c, nullptr, embed_type, label + " (metadata as config.json)");
  const ModelConfig& cfg = p.config;

  // Every GGUF tensor must map; every tensor the config needs must be there.
  TensorNames names(std::string(spec->model_type), false);
  std::map<std::string, const gguf::TensorInfo*> by_internal;
  // Parts of fused tensors (Phi-3): the internal name of each part -> the fused one's and its rows.
  std::map<std::string, std::pair<std::string, FusedPart>> part_of;
  for (const auto& t : h.tensors) {
    if (longrope && t.name.starts_with("rope_factors_")) continue;  // read into the config above
    if (n_nextn && mtp_block(t.name, n_layers, n_blocks)) {
      ++p.mtp_tensors;
      continue;
    }
    if (gemma4 && t.name == "rope_freqs.weight") continue;  // read into the config (proportional RoPE)
    std::string internal = internal_name(t.name, uint64_t(cfg.n_layers), p.gguf_arch);
    if (internal.empty()) {
      // llama.cpp's first Mixtral files held one tensor per expert (blk.N.ffn_gate.E.weight); it still reads them.
      const std::string_view n = t.name;
      for (auto leaf : {".ffn_gate.", ".ffn_up.", ".ffn_down."})
        if (spec->moe && n.starts_with("blk.") && n.find(leaf) != std::string_view::npos && n.ends_with(".weight") &&
            n.find(leaf) + std::strlen(leaf) < n.size() - 7)
          fail("{}: tensor '{}': one tensor per expert (llama.cpp's early Mixtral layout) is not imported; a file "
               "with stacked ffn_gate_exps / ffn_up_exps / ffn_down_exps (any llama.cpp conversion since 2024) is",
               label, t.name);
      fail("{}: tensor '{}' is not part of a {} model (no mapping)", label, t.name, p.gguf_arch);
    }
    // Gemma 4's KV-shared layers read an earlier layer's cache: their own k / v weights are never used.
    if (gemma4 && tensor_layer(internal) >= cfg.n_layers - cfg.kv_shared_layers &&
        (internal.ends_with(".attn_k") || internal.ends_with(".attn_v") || internal.ends_with(".attn_k_norm"))) {
      ++p.unused_kv_tensors;
      continue;
    }
    by_internal[internal] = &t;
    for (const FusedPart& part : fused_parts(cfg, internal)) part_of[part.internal] = {internal, part};
  }
  std::set<std::string> fused_used;
  std::set<DType> matrix_types;
  for (const std::string& internal : expected_tensors(cfg)) {
    auto it = by_internal.find(internal);
    const FusedPart* part = nullptr;
    if (it == by_internal.end()) {
      auto pit = part_of.find(internal);
      if (pit != part_of.end()) {
        it = by_internal.find(pit->second.first);
        part = &pit->second.second;
        fused_used.insert(pit->second.first);
      }
    }
    // Experts whose gate and up are stored apart (llama.cpp's default): joined per expert, gate rows first.
    const gguf::TensorInfo* up = nullptr;
    if (it == by_internal.end() && (internal.ends_with(".ffn_gate_up_exps") || internal.ends_with(".ffn_gate_up_exps_bias"))) {
      std::string gate_name = internal, up_name = internal;
      gate_name.replace(gate_name.find("gate_up"), 7, "gate");
      up_name.replace(up_name.find("gate_up"), 7, "up");
      auto g = by_internal.find(gate_name), u = by_internal.find(up_name);
      if (g != by_internal.end() && u != by_internal.end()) {
        it = g;
        up = u->second;
        by_internal.erase(u);
      } else if (g != by_internal.end() || u != by_internal.end()) {
        std::string there = (g != by_internal.end() ? g : u)->second->name, missing = there;
        const bool gate_there = g != by_internal.end();
        missing.replace(missing.find(gate_there ? "ffn_gate_exps" : "ffn_up_exps"), gate_there ? 13 : 11,
                        gate_there ? "ffn_up_exps" : "ffn_gate_exps");
        fail("{}: tensor '{}' is missing (its pair '{}' is there; the experts' gate and up come together)", label,
             missing, there);
      }
    }
    if (it == by_internal.end())
      fail("{}: no tensor for '{}' (a {} model with this metadata has one)", label, internal, p.gguf_arch);
    const gguf::TensorInfo& t = *it->second;
    GgufImportPlan::Tensor pt{&t, internal, names.to_hf(internal), {}, DType::F32, DType::F32, 0};
    // The router's HF name by family (TensorNames gives Mixtral's for every MoE).
    if (size_t at = pt.hf_name.find("block_sparse_moe.gate"); at != std::string::npos && spec->model_type != "mixtral")
      pt.hf_name.replace(at, 21, spec->model_type == "gpt_oss" ? "mlp.router" : "mlp.gate");
    // The 1 + w norms (Qwen 3.5's gated DeltaNet norm, ssm_norm, is plain w).
    if (spec->norms_plus_one && t.name.ends_with("norm.weight") && !t.name.ends_with("ssm_norm.weight"))
      pt.add = -1.0f;
    if (spec->model_type == "qwen3_5_text") {
      const std::string leaf = internal.substr(internal.find('.', 4) + 1);
      int64_t group = 1;
      bool columns = false;
      pt.row_order = gguf_import::qwen35_v_order(cfg, leaf, group, columns);
      if (columns) pt.col_group = group;
      pt.a_log = leaf == "linear_a_log";
    }
    std::optional<DType> src = dtype_of(t.type);
    auto traits = gguf::ggml_traits(t.type);
    const std::string type_name = traits ? std::string(traits->name) : "#" + std::to_string(uint32_t(t.type));
    if (!src && gguf::converted_dtype(t.type)) {
      pt.convert = t.type;
      src = gguf::converted_dtype(t.type);
    }
    if (!src || *src == DType::I32)
      fail("{}: tensor '{}': type {} is not imported (F32, F16, BF16, Q8_0, Q4_K, Q6_K, MXFP4 experts as they are; "
           "Q4_0, Q5_0 as Q8_0; Q4_1, Q5_1, Q2_K, Q3_K, Q5_K as F16)",
           label, t.name, type_name);
    pt.source = *src;
    pt.shape.assign(t.ne.rbegin(), t.ne.rend());
    std::vector<int64_t> want = expected_shape(cfg, part ? it->first : internal);
    if (up) {  // each half holds [experts, F, ...] of the joined [experts, 2F, ...]
      std::vector<int64_t> half = want;
      half[1] /= 2;
      for (const gguf::TensorInfo* ti : {&t, up}) {
        std::vector<int64_t> got(ti->ne.rbegin(), ti->ne.rend());
        if (got != half)
          fail("{}: tensor '{}': expected shape {} (ne {}), got {} (ne {})", label, ti->name, json(half).dump(),
               json(std::vector<int64_t>(half.rbegin(), half.rend())).dump(), json(got).dump(), json(ti->ne).dump());
      }
      if (up->type != t.type)
        fail("{}: tensor '{}': type {} differs from its pair '{}' ({}); blueshift keeps gate|up as one tensor of "
             "one type",
             label, up->name, gguf::ggml_traits(up->type) ? gguf::ggml_traits(up->type)->name : "?", t.name,
             type_name);
      pt.up = up;
      pt.shape = want;
    }
    // LFM2's conv kernel [dim, 1, L] is stored squeezed, [dim, L]: the same bytes.
    std::vector<int64_t> squeezed;
    for (int64_t d : want)
      if (d != 1) squeezed.push_back(d);
    if (want.size() == 3 && pt.shape == squeezed) pt.shape = want;
    if (pt.shape != want)
      fail("{}: tensor '{}': expected shape {} (ne {}), got {} (ne {})", label, t.name, json(want).dump(),
           json(std::vector<int64_t>(want.rbegin(), want.rend())).dump(), json(pt.shape).dump(),
           json(t.ne).dump());
    pt.total_rows = pt.shape[0];
    if (!pt.row_order.empty()) {  // Qwen 3.5's v heads: whole rows, or whole blocks of columns
      const int64_t units = pt.col_group ? pt.shape.back() / pt.col_group : pt.shape[0];
      if (int64_t(pt.row_order.size()) != units)
        fail("{}: tensor '{}': {} v-head units expected, the shape gives {}", label, t.name, pt.row_order.size(), units);
      // Columns move by whole blocks; where a block spans two heads (Q4_K's 256 values over heads of 128),
      // the tensor is dequantized to F16 first (the rounding measured and stated, as for Q5_K).
      pt.to_f16 = pt.col_group % bs::traits(pt.source).block_elems != 0;
    }
    if (part) {  // this part's rows of the fused tensor
      pt.row0 = part->row0;
      pt.shape[0] = part->rows;
    }
    // Matrices: 2-D ones and the experts' [experts, rows, cols]; the rest (norms, biases, the experts' [experts,
    // n] biases, conv kernels) are stored F32, as convert stores them.
    const bool experts = internal.ends_with("_exps");
    if ((pt.shape.size() != 2 && !experts) || internal.ends_with("_bias")) {
      if (traits->block_elems != 1)
        fail("{}: tensor '{}': a {}-D tensor of type {} (expected F32, F16 or BF16)", label, t.name,
             pt.shape.size(), type_name);
      pt.stored = DType::F32;
    } else if (internal.ends_with(".ffn_router")) {
      // The router kernel reads F16 (and convert keeps routers F16: their logits pick the experts).
      if (traits->block_elems != 1)
        fail("{}: tensor '{}': type {} (expected F32, F16 or BF16: the router is kept F16)", label, t.name,
             type_name);
      pt.stored = DType::F16;
      matrix_types.insert(pt.stored);
    } else {
      if (pt.source == DType::MXFP4 && !experts)
        fail("{}: tensor '{}': type MXFP4 is imported for expert tensors only (blueshift's kernels read MXFP4 "
             "experts)",
             label, t.name);
      pt.stored = pt.source == DType::F32 || pt.to_f16 ? DType::F16 : pt.source;
      matrix_types.insert(pt.stored);
    }
    bool q = internal.ends_with(".attn_q"), k = internal.ends_with(".attn_k");
    if (spec->permuted_qk && (q || k)) {
      if (cfg.head_dim % 2)
        fail("{}: tensor '{}': head_dim {} is odd, so its rows cannot be un-permuted", label, t.name,
             cfg.head_dim);
      pt.unpermute_heads = q ? cfg.n_heads : cfg.n_kv_heads;
    }
    p.tensors.push_back(std::move(pt));
    if (!part) by_internal.erase(it);
  }
  for (const std::string& f : fused_used) by_internal.erase(f);
  if (!by_internal.empty())
    fail("{}: tensor '{}' ('{}') is not used by a model of this metadata", label,
         by_internal.begin()->second->name, by_internal.begin()->first);
  p.quantization = quantization_name(matrix_types);
  if (const gguf::Value* ct = h.find("tokenizer.chat_template"); ct && ct->as_string())
    p.chat_template = *ct->as_string();
  return p;
}

using gguf_import::stored_bytes;

ConvertResult import_gguf(const fs::path& gguf_file, const fs::path& out_dir, const ConvertOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (fs::exists(out_dir) && !opt.force)
    fail_kind(ErrorKind::usage, "{}: already exists (use --force to replace it)", out_dir.string());
  const std::string label = gguf_file.string();
  gguf::Header h = gguf::read_header(label);
  MappedFile file(gguf_file);
  if (file.bytes().size() < h.data_offset) fail("{}: changed while being read", label);
  GgufImportPlan plan = plan_gguf_import(h, label, file.bytes());
  std::string tokenizer_why;
  std::optional<GgufTokenizer> tok =
      gguf_tokenizer(h, label, tokenizer_why);  // a malformed vocabulary fails here
  uint64_t source_bytes = 0;
  // A part of a fused tensor counts its rows' share.
  auto part_bytes = [](const GgufImportPlan::Tensor& t) {
    if (t.up) return t.info->size + t.up->size;
    return t.total_rows > 0 ? t.info->size / uint64_t(t.total_rows) * uint64_t(t.shape[0]) : t.info->size;
  };
  for (const auto& t : plan.tensors) source_bytes += part_bytes(t);

  struct Conversion {
    int count = 0;
    double worst_rel = 0, worst_abs = 0;
  };
  std::map<std::string, Conversion> conversions;  // "Q5_K -> F16" -> how many tensors, the worst loss
  SignalGuard signals;
  PartialDir tmp(out_dir, opt.keep_partial);
  Manifest m;
  {
    ShardWriterOptions so = opt.shards;
    if (so.threads <= 0)
      so.threads = opt.threads > 0 ? opt.threads : std::max(1, int(std::thread::hardware_concurrency()));
    ShardWriter writer(tmp.path(), so);
    uint64_t done = 0;
    std::vector<std::byte> out, dequantized, joined;
    for (const auto& t : plan.tensors) {
      signals.check();
      std::span<const std::byte> in = file.bytes().subspan(h.data_offset + t.info->offset, t.info->size);
      if (t.up) {  // gate and up experts: expert e's gate rows, then its up rows
        std::span<const std::byte> u = file.bytes().subspan(h.data_offset + t.up->offset, t.up->size);
        const size_t experts = size_t(t.shape[0]), per = in.size() / experts;
        joined.resize(2 * in.size());
        for (size_t e = 0; e < experts; ++e) {
          std::memcpy(joined.data() + 2 * e * per, in.data() + e * per, per);
          std::memcpy(joined.data() + (2 * e + 1) * per, u.data() + e * per, per);
        }
        release_pages(in);
        release_pages(u);
        in = joined;
      }
      gguf::ConversionLoss loss;
      std::span<const std::byte> bytes = stored_bytes(t, in, plan.config.head_dim, out, dequantized, loss);
      std::string converted;  // what the conversion did, for the manifest and the summary
      if (t.to_f16) {  // dequantized to move v-head columns that share blocks
        const std::string from(dtype_name(t.source));
        if (!(loss.max_abs_error < 1e30))
          fail("{}: tensor '{}': {} values overflow F16 (max |w| {})", label, t.info->name, from, loss.max_abs);
        converted = fmt::format("GGUF {}, its v-head columns tiled by llama.cpp inside {} blocks; dequantized to F16 "
                                "to move them back: f16 rounding changed values by at most {:.3g} ({:.3g} of max |w| "
                                "{:.3g})",
                                from, from, loss.max_abs_error,
                                loss.max_abs > 0 ? loss.max_abs_error / loss.max_abs : 0.0, loss.max_abs);
        auto& c = conversions[from + " -> F16 (v-head columns)"];
        c.count += 1;
        c.worst_rel = std::max(c.worst_rel, loss.max_abs > 0 ? loss.max_abs_error / loss.max_abs : 0.0);
        c.worst_abs = std::max(c.worst_abs, loss.max_abs_error);
      }
      if (t.convert) {
        const std::string from(gguf::ggml_traits(*t.convert)->name), to(dtype_name(t.stored));
        if (!(loss.max_abs_error < 1e30))
          fail("{}: tensor '{}': {} values overflow F16 (max |w| {})", label, t.info->name, from, loss.max_abs);
        converted = t.stored == DType::Q8_0
                        ? fmt::format("GGUF {}; stored as Q8_0 with the same scales and quants (exact)", from)
                        : fmt::format("GGUF {}; dequantized to {}: f16 rounding changed values by at most {:.3g} "
                                      "({:.3g} of max |w| {:.3g})",
                                      from, to, loss.max_abs_error,
                                      loss.max_abs > 0 ? loss.max_abs_error / loss.max_abs : 0.0, loss.max_abs);
        auto& c = conversions[from + " -> " + to];
        c.count += 1;
        c.worst_rel = std::max(c.worst_rel, loss.max_abs > 0 ? loss.max_abs_error / loss.max_abs : 0.0);
        c.worst_abs = std::max(c.worst_abs, loss.max_abs_error);
      }
      TensorEntry e;
      e.name = t.hf_name;
      e.internal = t.internal;
      e.dtype = t.stored;
      e.shape = t.shape;
      e.size = bytes.size();
      e.spans = writer.begin_tensor(e.size);
      e.role = tensor_role(t.internal);
      e.group = tensor_group(t.internal);
      e.source_dtype = std::string(dtype_name(t.source));
      e.requested_dtype = std::string(dtype_name(t.stored));
      if (t.stored != t.source)
        e.fallback = "GGUF " + e.source_dtype + "; stored as convert stores this tensor";
      if (t.add != 0) e.fallback = "GGUF holds 1 + w (llama.cpp's Gemma norms); stored as w";
      if (t.a_log) e.fallback = "GGUF holds A = -exp(A_log) (llama.cpp's ssm_a); stored as A_log";
      if (!t.row_order.empty()) e.fallback = "GGUF holds llama.cpp's tiled v-head order; stored in HF's grouped order";
      if (t.up) e.fallback = "GGUF " + t.info->name + " and " + t.up->name + ", joined per expert (gate rows, then up)";
      if (t.convert || t.to_f16) e.fallback = converted;
      if (t.convert) e.source_dtype = std::string(gguf::ggml_traits(*t.convert)->name);
      writer.write(bytes);
      if (!t.up) release_pages(in);  // joined experts: `in` is our copy, their pages were released above
      done += part_bytes(t);
      if (opt.progress) opt.progress(done, source_bytes);
      m.tensors.push_back(std::move(e));
    }
    m.shards = writer.finish();
  }
  signals.check();
  if (plan.unused_kv_tensors)
    std::fprintf(stderr, "%s: %d k/v tensors of KV-shared layers left out (those layers read an earlier layer's cache)\n",
                 label.c_str(), plan.unused_kv_tensors);
  if (plan.mtp_tensors)
    std::fprintf(stderr, "%s: %d tensors of multi-token-prediction blocks left out (blueshift does not run them)\n",
                 label.c_str(), plan.mtp_tensors);
  for (const auto& [what, c] : conversions)
    std::fprintf(stderr, "%s: %d tensor%s %s%s\n", label.c_str(), c.count, c.count == 1 ? "" : "s", what.c_str(),
                 what.ends_with("Q8_0") ? " (exact: the same scales and quants)"
                                        : fmt::format(" (dequantized; f16 rounding: worst {:.3g} absolute, {:.3g} of "
                                                      "a tensor's max |w|)",
                                                      c.worst_abs, c.worst_rel)
                                              .c_str());
  m.hash_algorithm = std::string(hash_algorithm_name(opt.shards.hash));
  for (auto& s : m.shards) m.total_size += s.size;
  const gguf::Value* name = h.find("general.name");
  m.model_id = name && name->as_string() && !name->as_string()->empty() ? *name->as_string()
                                                                        : gguf_file.stem().string();
  m.model_type = plan.hf_config["model_type"].get<std::string>();
  m.quantization = plan.quantization;
  std::string embed = std::string(dtype_name(plan.tensors.front().stored));
  m.quantization_info = {
      {"weights", m.quantization},
      {"embeddings", embed},
      {"lmHead", plan.config.tied_embeddings ? embed : std::string(dtype_name(plan.tensors.back().stored))},
      {"compute", "f32"},
      {"layout", "row"}};
  m.config = plan.config;
  m.eos_ids = plan.config.eos_ids;
  m.tokenizer = json();
  if (tok) {
    for (auto [file, j] :
         {std::pair{"tokenizer.json", &tok->tokenizer}, {"tokenizer_config.json", &tok->config}}) {
      std::ofstream f(tmp.path() / file, std::ios::binary);
      f << j->dump(1) << "\n";
      if (!f) fail("{}: cannot write {}", tmp.path().string(), file);
    }
    m.tokenizer = {{"type", "bundled"},
                   {"file", "tokenizer.json"},
                   {"vocabSize", plan.config.vocab},
                   {"addBosToken", tok->add_bos}};
  } else {
    std::fprintf(stderr, "%s: the vocabulary is not converted: %s\n", label.c_str(), tokenizer_why.c_str());
  }
  m.metadata = {{"source", fs::absolute(gguf_file).lexically_normal().string()},
                {"sourceFormat", "gguf"},
                {"ggufArchitecture", plan.gguf_arch},
                {"convertedAt", std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count()},
                {"converter", "blueshift 0.1.0"},
                {"zstdLevel", opt.shards.compress ? json(opt.shards.zstd_level) : json(nullptr)},
                {"zstdMinSaving", opt.shards.compress ? json(opt.shards.min_saving) : json(nullptr)}};
  if (!tok) {
    m.metadata["tokenizerNotConverted"] = tokenizer_why;
    if (!plan.chat_template.empty())
      m.metadata["chatTemplate"] = plan.chat_template;  // kept for a later tokenizer
  }
  write_manifest(m, tmp.path() / "manifest.json");
  signals.check();
  tmp.commit();

  ConvertResult res;
  res.manifest = read_manifest(out_dir);
  res.source_bytes = source_bytes;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace bs
