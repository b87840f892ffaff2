// The GGUF round trip the family tests share (round_trip.h).
#include "tests/gguf/round_trip.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "rdrr/manifest.h"
#include "runtime/base/npy.h"
#include "sharding/reader.h"

namespace bs::testing {

namespace fs = std::filesystem;

namespace {

RunResult run(const std::vector<std::string>& args) { return run_blueshift(args); }

std::map<std::string, std::vector<std::byte>> tensor_bytes(const fs::path& model) {
  std::map<std::string, std::vector<std::byte>> out;
  auto m = bs::read_manifest(model);
  bs::load_tensors(m, model, {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    out[t.internal].assign(b.begin(), b.end());
  });
  return out;
}

std::vector<float> floats(const std::vector<std::byte>& b) {
  std::vector<float> f(b.size() / 4);
  std::memcpy(f.data(), b.data(), f.size() * 4);
  return f;
}

}  // namespace

// hf -> convert (quant) -> export-gguf -> convert back; checks config, bytes and logits. Returns the GGUF
// path.
fs::path expect_round_trip(const fs::path& hf, const std::string& quant, const fs::path& work,
                           const std::string& arch, const std::string& tokens,
                           const std::vector<std::string>& export_args) {
  SCOPED_TRACE(hf.filename().string() + " " + quant);
  fs::create_directories(work);
  const fs::path orig = work / ("orig_" + quant), gguf = work / (quant + ".gguf"),
                 back = work / ("back_" + quant);
  auto r = run({"convert", hf.string(), orig.string(), "--quant", quant});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ex = {"export-gguf", "--model", orig.string(), "--out", gguf.string(), "--json"};
  ex.insert(ex.end(), export_args.begin(), export_args.end());
  r = run(ex);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"architecture\":\"" + arch + "\""), std::string::npos) << r.out;
  EXPECT_EQ(*bs::gguf::read_header(gguf.string()).find("general.architecture")->as_string(), arch);
  r = run({"convert", gguf.string(), back.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return gguf;

  auto a = bs::read_manifest(orig), b = bs::read_manifest(back);
  const auto &ca = a.model_config(), &cb = b.model_config();
  EXPECT_EQ(cb.arch, ca.arch);
  EXPECT_EQ(cb.n_layers, ca.n_layers);
  EXPECT_EQ(cb.head_dim, ca.head_dim);
  EXPECT_EQ(cb.n_kv_heads, ca.n_kv_heads);
  EXPECT_EQ(cb.norm_offset, ca.norm_offset);
  EXPECT_EQ(cb.qk_norm, ca.qk_norm);
  EXPECT_EQ(cb.sandwich_norm, ca.sandwich_norm);
  EXPECT_EQ(cb.act, ca.act);
  EXPECT_EQ(cb.tied_embeddings, ca.tied_embeddings);
  EXPECT_FLOAT_EQ(cb.embed_scale, ca.embed_scale);
  EXPECT_FLOAT_EQ(cb.softmax_scale(), ca.softmax_scale());
  EXPECT_FLOAT_EQ(cb.attn_softcap, ca.attn_softcap);
  EXPECT_FLOAT_EQ(cb.final_softcap, ca.final_softcap);
  EXPECT_EQ(cb.layer_types, ca.layer_types);
  EXPECT_EQ(cb.sliding_window, ca.sliding_window);
  EXPECT_FLOAT_EQ(cb.rope.theta, ca.rope.theta);
  EXPECT_FLOAT_EQ(cb.rope.local_theta, ca.rope.local_theta);
  EXPECT_EQ(cb.rope.scaling, ca.rope.scaling);
  EXPECT_EQ(cb.rope.short_factor, ca.rope.short_factor);
  EXPECT_EQ(cb.rope.long_factor, ca.rope.long_factor);
  EXPECT_EQ(cb.rope.original_max_position, ca.rope.original_max_position);
  EXPECT_FLOAT_EQ(cb.rope.attention_factor, ca.rope.attention_factor);
  EXPECT_EQ(cb.max_seq, ca.max_seq);
  EXPECT_EQ(cb.n_experts, ca.n_experts);
  EXPECT_EQ(cb.n_experts_used, ca.n_experts_used);
  EXPECT_EQ(cb.expert_ffn_dim, ca.expert_ffn_dim);
  EXPECT_EQ(cb.moe_norm_topk, ca.moe_norm_topk);
  EXPECT_EQ(cb.moe_router_bias, ca.moe_router_bias);
  EXPECT_EQ(cb.moe_expert_bias, ca.moe_expert_bias);
  EXPECT_EQ(cb.attn_sinks, ca.attn_sinks);
  EXPECT_EQ(cb.attn_out_bias, ca.attn_out_bias);
  EXPECT_EQ(cb.qkv_bias, ca.qkv_bias);
  EXPECT_FLOAT_EQ(cb.swiglu_limit, ca.swiglu_limit);
  EXPECT_FLOAT_EQ(cb.swiglu_alpha, ca.swiglu_alpha);
  EXPECT_FLOAT_EQ(cb.rope.factor, ca.rope.factor);
  EXPECT_FLOAT_EQ(cb.rope.beta_fast, ca.rope.beta_fast);
  EXPECT_FLOAT_EQ(cb.rope.beta_slow, ca.rope.beta_slow);
  EXPECT_EQ(cb.rope.yarn_truncate, ca.rope.yarn_truncate);

  auto ta = tensor_bytes(orig), tb = tensor_bytes(back);
  EXPECT_EQ(ta.size(), tb.size());
  for (const auto& [internal, bytes] : ta) {
    const bs::TensorEntry *ea = a.find(internal), *eb = b.find(internal);
    if (!ea || !eb || !tb.count(internal)) {
      ADD_FAILURE() << internal << " is missing after the round trip";
      continue;
    }
    // (synth names every MoE router as Mixtral's block_sparse_moe.gate; the import gives the family's HF
    // name)
    if (!internal.ends_with(".ffn_router") || ea->name.find("block_sparse_moe") == std::string::npos) {
      EXPECT_EQ(eb->name, ea->name);
    }
    EXPECT_EQ(eb->dtype, ea->dtype) << internal;
    EXPECT_EQ(eb->shape, ea->shape) << internal;
    if (ca.norm_offset && internal.ends_with("norm")) {
      // The GGUF held fl(1 + w); the import stored fl(fl(1 + w) - 1), which the runtime's 1 + w turns back
      // into the same fl(1 + w) the original model computes.
      auto fa = floats(bytes), fb = floats(tb[internal]);
      EXPECT_EQ(fa.size(), fb.size()) << internal;
      for (size_t i = 0; i < std::min(fa.size(), fb.size()); ++i)
        EXPECT_EQ(1.0f + fb[i], 1.0f + fa[i]) << internal << "[" << i << "]";
    } else {
      EXPECT_TRUE(tb[internal] == bytes) << internal << ": bytes differ";
    }
  }
  for (auto [model, npy] : {std::pair{orig, "a.npy"}, std::pair{back, "b.npy"}}) {
    r = run({"logits", "--model", model.string(), "--tokens", tokens, "--out", (work / npy).string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  auto la = bs::read_npy_f32(work / "a.npy"), lb = bs::read_npy_f32(work / "b.npy");
  EXPECT_EQ(la.shape, lb.shape);
  if (la.data.size() != lb.data.size() || la.shape.size() != 2) return gguf;
  double num = 0, den = 0;
  for (size_t i = 0; i < la.data.size(); ++i) {
    num += std::pow(double(la.data[i]) - lb.data[i], 2);
    den += std::pow(double(la.data[i]), 2);
  }
  EXPECT_GT(den, 0);
  EXPECT_LE(std::sqrt(num / den), 1e-6) << "rel L2 of the logits";
  const size_t vocab = size_t(la.shape[1]);
  for (size_t row = 0; row < size_t(la.shape[0]); ++row) {
    auto ia = std::max_element(la.data.begin() + row * vocab, la.data.begin() + (row + 1) * vocab);
    auto ib = std::max_element(lb.data.begin() + row * vocab, lb.data.begin() + (row + 1) * vocab);
    EXPECT_EQ(ia - la.data.begin(), ib - lb.data.begin()) << "argmax of row " << row;
  }
  return gguf;
}

fs::path synth(const fs::path& dir, const nlohmann::json& cfg) {
  fs::create_directories(dir);
  auto r = synth_into(dir, cfg.dump());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir / "hf";
}

// `src` written again with metadata `key` set to `v` (or dropped when v is null) and, where `tensor` is
// named, its first 4 bytes set to `first`.
void rewrite(const fs::path& src, const fs::path& dst, const std::string& key,
             std::optional<bs::gguf::Value> v, const std::string& tensor, float first) {
  auto h = bs::gguf::read_header(src.string());
  const std::vector<uint8_t> bytes = file_bytes(src);
  bs::gguf::Writer w(dst.string(), h.alignment);
  bool set = false;
  for (const auto& kv : h.metadata) {
    if (kv.key == "general.alignment") continue;
    if (kv.key == key) {
      set = true;
      if (v) w.add(kv.key, *v);
    } else {
      w.add(kv.key, kv.value);
    }
  }
  if (!set && v) w.add(key, *v);
  for (const auto& t : h.tensors) w.add_tensor(t.name, t.ne, t.type);
  w.write_header();
  for (const auto& t : h.tensors) {
    std::vector<std::byte> b(t.size);
    std::memcpy(b.data(), bytes.data() + h.data_offset + t.offset, t.size);
    if (t.name == tensor) std::memcpy(b.data(), &first, 4);
    w.write_tensor(b);
  }
  w.finish();
}

void drop_tensor(const fs::path& src, const fs::path& dst, const std::string& tensor,
                 const std::string& rename) {
  auto h = bs::gguf::read_header(src.string());
  const std::vector<uint8_t> bytes = file_bytes(src);
  bs::gguf::Writer w(dst.string(), h.alignment);
  for (const auto& kv : h.metadata)
    if (kv.key != "general.alignment") w.add(kv.key, kv.value);
  for (const auto& t : h.tensors)
    if (t.name != tensor || !rename.empty()) w.add_tensor(t.name == tensor ? rename : t.name, t.ne, t.type);
  w.write_header();
  for (const auto& t : h.tensors)
    if (t.name != tensor || !rename.empty())
      w.write_tensor(std::as_bytes(std::span(bytes.data() + h.data_offset + t.offset, t.size)));
  w.finish();
}

void expect_convert_refused(const fs::path& file, const fs::path& out, const std::string& what) {
  auto r = run({"convert", file.string(), out.string()});
  EXPECT_EQ(r.exit_code, 3) << what << ": " << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

std::vector<uint8_t> file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace bs::testing

int fuzz_gguf(const uint8_t* data, size_t size);

void bs::testing::fuzz_mutations(const std::vector<uint8_t>& good, size_t end, std::span<const uint32_t> words,
                                 std::mt19937_64& r, int iterations) {
  for (int i = 0; i < iterations; ++i) {
    auto b = good;
    for (int k = 1 + int(r() % 3); k > 0; --k) {
      size_t at = r() % end;
      if (r() % 2) {
        b[at] ^= uint8_t(1 << (r() % 8));
      } else if (at + 4 <= b.size()) {
        std::memcpy(b.data() + at, &words[r() % words.size()], 4);
      }
    }
    fuzz_gguf(b.data(), b.size());
  }
}
