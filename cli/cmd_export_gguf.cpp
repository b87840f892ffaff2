// blueshift export-gguf (hidden): writes a Llama-shaped RDRR model as a GGUF v3 file llama.cpp loads,
// so the two engines can be benchmarked on the same weights (benchmarks/peer/run_peer.sh).
//
// Quantized blocks are copied as they are (blueshift's Q4_K/Q6_K/Q8_0 are GGML's bytes). Two things
// change on the way:
//  - dims: GGUF lists ne[0] = the row length first, the reverse of the HF shape [out, in];
//  - attn_q / attn_k rows: HF checkpoints (and so RDRR) rotate the halves (i, i + head_dim/2) of each
//    head, llama.cpp's llama architecture rotates adjacent pairs (2i, 2i+1); its converter permutes
//    the rows of q and k per head, and so does this. Each row is quantized on its own, so the
//    permutation moves whole rows of bytes and works for every type. (For speed it makes no
//    difference; it makes llama.cpp compute what blueshift computes.)
// The vocabulary is a stand-in of the model's size (GPT-2 byte tokens, then placeholders, no merges):
// enough to load and decode given token ids, not to tokenize text.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "rdrr/gguf.h"
#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "sharding/reader.h"

namespace {

namespace fs = std::filesystem;
using bs::gguf::Value;

struct Args {
  std::string model, out;
  bool json = false;
};

// llama.cpp's name of a blueshift internal tensor name; empty when llama has no such tensor.
std::string gguf_name(const std::string& internal) {
  if (internal == "embed") return "token_embd.weight";
  if (internal == "output_norm" || internal == "output") return internal + ".weight";
  if (internal.rfind("blk.", 0) != 0) return {};
  auto dot = internal.find('.', 4);
  std::string prefix = internal.substr(0, dot + 1), leaf = internal.substr(dot + 1);
  for (const char* n : {"attn_norm", "attn_q", "attn_k", "attn_v", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"})
    if (leaf == n) return prefix + leaf + ".weight";
  if (leaf == "attn_out") return prefix + "attn_output.weight";
  return {};
}

// Refuses what llama.cpp's llama architecture would compute differently.
void check_llama_shaped(const bs::ModelConfig& c, const std::string& label) {
  auto refuse = [&](const char* what) {
    bs::fail("{}: export-gguf writes Llama-shaped models only; this one has {}", label, what);
  };
  for (int32_t l = 0; l < c.n_layers; ++l)
    if (c.kind(l) != bs::LayerKind::attention) refuse("layers that are not attention (a hybrid)");
  if (c.qkv_bias) refuse("q/k/v biases");
  if (c.qk_norm) refuse("q/k norms");
  if (c.sandwich_norm) refuse("sandwich norms");
  if (c.norm_offset) refuse("(1 + w) norms");
  if (c.embed_scale != 1.0f) refuse("an embedding scale");
  if (c.act != bs::Activation::silu) refuse("a GELU MLP");
  if (c.attn_softcap != 0 || c.final_softcap != 0) refuse("logit softcaps");
  if (c.attn_scale > 0 && std::abs(c.attn_scale * std::sqrt(float(c.head_dim)) - 1) > 1e-6f) refuse("a custom attention scale");
  for (auto t : c.layer_types)
    if (t != bs::AttentionType::full) refuse("sliding-window layers");
  if (c.head_dim % 2) refuse("an odd head_dim");
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

void run(const Args& a) {
  auto m = bs::read_manifest(a.model);
  const auto& c = m.model_config();
  check_llama_shaped(c, a.model);

  bs::gguf::Writer w(a.out);
  const std::string arch = "llama";
  w.add("general.architecture", Value::str(arch));
  w.add("general.name", Value::str(m.model_id.empty() ? "blueshift export" : m.model_id));
  // llama_ftype (informational): MOSTLY_F16 1, MOSTLY_Q8_0 7, MOSTLY_Q4_K_M 15.
  w.add("general.file_type", Value::u32(m.quantization == "F16" ? 1 : m.quantization == "Q8_0" ? 7 : 15));
  w.add(arch + ".context_length", Value::u32(uint32_t(c.max_seq)));
  w.add(arch + ".embedding_length", Value::u32(uint32_t(c.dim)));
  w.add(arch + ".block_count", Value::u32(uint32_t(c.n_layers)));
  w.add(arch + ".feed_forward_length", Value::u32(uint32_t(c.ffn_dim)));
  w.add(arch + ".attention.head_count", Value::u32(uint32_t(c.n_heads)));
  w.add(arch + ".attention.head_count_kv", Value::u32(uint32_t(c.n_kv_heads)));
  w.add(arch + ".attention.key_length", Value::u32(uint32_t(c.head_dim)));
  w.add(arch + ".attention.value_length", Value::u32(uint32_t(c.head_dim)));
  w.add(arch + ".attention.layer_norm_rms_epsilon", Value::f32(c.norm_eps));
  w.add(arch + ".rope.freq_base", Value::f32(c.rope.theta));
  w.add(arch + ".rope.dimension_count", Value::u32(uint32_t(c.head_dim)));
  w.add(arch + ".vocab_size", Value::u32(uint32_t(c.vocab)));
  if (c.rope.scaling == bs::RopeScaling::linear) {
    w.add(arch + ".rope.scaling.type", Value::str("linear"));
    w.add(arch + ".rope.scaling.factor", Value::f32(c.rope.factor));
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

  std::vector<float> rope_factors;
  if (c.rope.scaling == bs::RopeScaling::longrope)
    bs::fail("{}: LongRoPE (Phi-3 128k) is not written to GGUF yet (llama.cpp keeps its factors as rope_factors_long/"
             "short tensors)", a.model);
  if (c.rope.scaling == bs::RopeScaling::llama3) {
    rope_factors = llama3_rope_factors(c);
    w.add_tensor("rope_freqs.weight", {rope_factors.size()}, bs::gguf::GgmlType::F32);
  }
  for (const auto& t : m.tensors) {
    std::string name = gguf_name(t.internal);
    if (name.empty()) bs::fail("{}: tensor '{}' ({}) has no llama.cpp counterpart", a.model, t.name, t.internal);
    auto type = bs::gguf::ggml_type_of(t.dtype);
    if (!type) bs::fail("{}: tensor '{}': dtype {} has no GGML type", a.model, t.name, bs::dtype_name(t.dtype));
    std::vector<uint64_t> ne(t.shape.rbegin(), t.shape.rend());
    w.add_tensor(name, std::move(ne), *type);
  }
  w.write_header();
  if (!rope_factors.empty()) w.write_tensor(std::as_bytes(std::span(rope_factors)));
  std::vector<std::byte> permuted;
  bs::load_tensors(m, a.model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> bytes) {
    bool q = t.internal.ends_with(".attn_q"), k = t.internal.ends_with(".attn_k");
    if (!q && !k) return w.write_tensor(bytes);
    int64_t rows = t.shape.at(0);
    if (rows != int64_t(q ? c.n_heads : c.n_kv_heads) * c.head_dim)
      bs::fail("{}: tensor '{}': expected {} rows, got {}", a.model, t.name, (q ? c.n_heads : c.n_kv_heads) * c.head_dim, rows);
    permute_rope_rows(bytes, permuted, rows, c.head_dim);
    w.write_tensor(permuted);
  });
  uint64_t size = w.finish();
  if (a.json) {
    nlohmann::ordered_json j = {{"gguf", a.out}, {"bytes", size}, {"tensors", w.tensors().size()},
                                {"quantization", m.quantization}, {"rope_qk_permuted", true}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %zu tensors, %.1f MiB\n", a.out.c_str(), w.tensors().size(), size / 1048576.0);
  }
}

bs::cli::Command export_gguf_cmd{"export-gguf", "Write a Llama-shaped RDRR model as a GGUF file (benchmarks)",
                                  [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.group("");  // hidden: a benchmarking aid, not a supported conversion path
  app.add_option("--model", a->model, "RDRR model directory")->required();
  app.add_option("--out", a->out, "GGUF file to write")->required();
  app.add_flag("--json", a->json, "print a JSON summary");
  app.callback([a] { run(*a); });
}};

}  // namespace
