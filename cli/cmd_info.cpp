// blueshift info MODEL_DIR [--json]: architecture, tensors, sizes, quantization, hashes.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "rdrr/hf_config.h"
#include "rdrr/manifest.h"

namespace {

struct Args {
  std::string dir;
  bool json = false, tensors = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("MODEL_DIR", a->dir, "RDRR model directory")->required();
  app.add_flag("--json", a->json, "print as JSON");
  app.add_flag("--tensors", a->tensors, "list every tensor");
  app.callback([a] {
    bs::Manifest m = bs::read_manifest(a->dir);
    // The manifest's tensors: not the entries the parser adds for bytes named outside "tensors" (an int4
    // table's row scales, TensorEntry::implied), which the shard hashes still cover.
    std::vector<const bs::TensorEntry*> listed;
    for (auto& t : m.tensors)
      if (!t.implied) listed.push_back(&t);
    std::map<std::string, std::pair<size_t, uint64_t>> by_dtype;  // dtype -> (count, bytes)
    for (const bs::TensorEntry* tp : listed) {
      const bs::TensorEntry& t = *tp;
      auto& e = by_dtype[std::string(bs::dtype_name(t.dtype))];
      e.first++;
      e.second += t.size;
    }
    uint64_t stored = 0;
    for (auto& s : m.shards) stored += s.file_size();
    // A supported config whose tensors do not all have blueshift names cannot be loaded either.
    std::vector<std::string> unnamed;
    if (m.config)
      for (const bs::TensorEntry* t : listed)
        if (t->internal.empty() && !t->skipped && t->companion_of.empty()) unnamed.push_back(t->name);
    if (a->json) {
      nlohmann::ordered_json j;
      j["modelId"] = m.model_id;
      j["modelType"] = m.model_type;
      j["quantization"] = m.quantization;
      if (m.config) j["config"] = bs::config_to_json(*m.config);
      else j["configError"] = m.config_error;
      if (!unnamed.empty()) j["unnamedTensors"] = unnamed;
      j["rawBytes"] = m.total_size;
      j["storedBytes"] = stored;
      auto& dt = j["dtypes"] = nlohmann::ordered_json::object();
      for (auto& [k, v] : by_dtype) dt[k] = {{"tensors", v.first}, {"bytes", v.second}};
      auto& sh = j["shards"] = nlohmann::ordered_json::array();
      for (auto& s : m.shards)
        sh.push_back({{"file", s.filename}, {"size", s.size}, {"storedSize", s.file_size()}, {"hash", s.hash}});
      if (a->tensors) {
        auto& ts = j["tensors"] = nlohmann::ordered_json::array();
        for (const bs::TensorEntry* tp : listed) {
          const bs::TensorEntry& t = *tp;
          nlohmann::ordered_json o = {{"name", t.name}, {"internal", t.internal}, {"dtype", bs::dtype_name(t.dtype)},
                                      {"shape", t.shape}, {"size", t.size}, {"shard", t.spans[0].shard}};
          if (!t.requested_dtype.empty()) o["requested"] = t.requested_dtype;
          if (!t.fallback.empty()) o["fallback"] = t.fallback;
          ts.push_back(std::move(o));
        }
      }
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    std::printf("model      %s (%s), %s\n", m.model_id.c_str(), m.model_type.c_str(), m.quantization.c_str());
    if (m.config) {
      const bs::ModelConfig& c = *m.config;
      int sliding = 0;
      for (auto t : c.layer_types) sliding += t == bs::AttentionType::sliding;
      std::printf("shape      %d layers, dim %d, ffn %d, heads %d/%d kv, head_dim %d, vocab %d, max_seq %d\n", c.n_layers,
                  c.dim, c.ffn_dim, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab, c.max_seq);
      if (!c.layer_kinds.empty()) {  // hybrids: which layers are not attention
        int n[3] = {};
        for (int32_t l = 0; l < c.n_layers; ++l) ++n[int(c.kind(l))];
        std::printf("mixers     %d attention%s%s\n", n[0],
                    n[1] ? fmt::format(", {} linear-attention", n[1]).c_str() : "",
                    n[2] ? fmt::format(", {} short-conv (width {})", n[2], c.conv_kernel).c_str() : "");
      }
      std::printf("features   %s%s%s%s%s%s act=%s rope=%.0f%s%s\n", c.norm_offset ? "norm(1+w) " : "",
                  c.qk_norm ? "qk_norm " : "", c.qkv_bias ? "qkv_bias " : "", c.sandwich_norm ? "sandwich " : "",
                  c.tied_embeddings ? "tied " : "", sliding ? fmt::format("sliding({} layers, window {}) ", sliding, c.sliding_window).c_str() : "",
                  c.act == bs::Activation::silu ? "silu" : "gelu_tanh", double(c.rope.theta),
                  c.rope.local_theta > 0 ? fmt::format("/local {:.0f}", c.rope.local_theta).c_str() : "",
                  c.rope.scaling == bs::RopeScaling::llama3     ? " llama3"
                  : c.rope.scaling == bs::RopeScaling::linear   ? " linear"
                  : c.rope.scaling == bs::RopeScaling::longrope ? " longrope"
                  : c.rope.scaling == bs::RopeScaling::yarn     ? " yarn"
                                                                : "");
      if (c.moe())  // issue 16
        std::printf("experts    %d of %d per token, width %d, weights %s%s%s%s\n", c.n_experts_used, c.n_experts,
                    c.expert_ffn_dim, c.moe_norm_topk ? "softmax over the top k" : "full softmax",
                    c.moe_router_bias ? ", router and expert biases" : "",
                    c.swiglu_limit > 0 ? fmt::format(", clamped SwiGLU (alpha {}, limit {})", c.swiglu_alpha,
                                                     c.swiglu_limit).c_str() : "",
                    c.attn_sinks ? ", attention sinks" : "");
      if (auto linear = std::count(c.layer_kinds.begin(), c.layer_kinds.end(), bs::LayerKind::linear_attention))
        std::printf("hybrid     %ld Gated DeltaNet layers (q/k heads %d, v heads %d, k %d, v %d, conv %d), %ld attention%s%s\n",
                    long(linear), c.linear_k_heads, c.linear_v_heads, c.linear_k_dim, c.linear_v_dim, c.linear_conv,
                    long(c.n_layers - linear), c.attn_output_gate ? " (output-gated)" : "",
                    c.rotary_dim ? fmt::format(", rotary {} of {}", c.rotary_dim, c.head_dim).c_str() : "");
      // Gemma 4: full layers with a shape of their own, v from k, proportional RoPE, KV sharing, per-layer inputs.
      if (!c.layer_head_dims.empty() || !c.layer_ffn_dims.empty() || c.kv_shared_layers || c.ple_dim || c.v_from_k ||
          c.rope.partial_factor != 1.0f) {
        std::string s;
        for (int32_t l = 0; l < c.n_layers; ++l)
          if (!c.sliding(l)) {
            s = fmt::format("full layers head_dim {}, {} kv heads", c.head_dim_of(l), c.kv_heads_of(l));
            break;
          }
        auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
        if (c.v_from_k) add("v = k");
        if (c.v_norm) add("v norm");
        if (c.rope.partial_factor != 1.0f) add(fmt::format("proportional RoPE {:g}", double(c.rope.partial_factor)));
        int32_t wide = 0;
        for (int32_t l = 0; l < c.n_layers; ++l) wide += c.ffn_dim_of(l) != c.ffn_dim;
        if (wide) add(fmt::format("{} layers with other FFN widths", wide));
        if (c.kv_shared_layers) add(fmt::format("last {} layers share KV", c.kv_shared_layers));
        if (c.ple_dim) add(fmt::format("per-layer inputs {}", c.ple_dim));
        std::printf("per-layer  %s\n", s.c_str());
      }
      std::printf("scales     softmax %.6g, embed %.6g, softcap %g attn / %g logits, norm eps %g\n",
                  double(c.softmax_scale()), double(c.embed_scale), double(c.attn_softcap),
                  double(c.final_softcap), double(c.norm_eps));
      if (!unnamed.empty())
        std::printf("names      %zu tensors have no blueshift name, e.g. %s: the model cannot load\n",
                    unnamed.size(), unnamed[0].c_str());
    } else {
      std::printf("config     not runnable: %s\n", m.config_error.c_str());
    }
    std::printf("size       %.1f MB raw, %.1f MB on disk, %zu shards, %zu tensors\n", double(m.total_size) / 1e6,
                double(stored) / 1e6, m.shards.size(), listed.size());
    for (auto& [k, v] : by_dtype) std::printf("  %-6s   %4zu tensors %10.1f MB\n", k.c_str(), v.first, double(v.second) / 1e6);
    size_t fallbacks = 0;
    for (const bs::TensorEntry* t : listed) fallbacks += !t->fallback.empty();
    if (fallbacks) std::printf("fallbacks  %zu tensors stored at another dtype than requested (see --tensors)\n", fallbacks);
    if (a->tensors)
      for (const bs::TensorEntry* tp : listed) {
        const bs::TensorEntry& t = *tp;
        std::printf("  %-52s %-22s %-5s %12llu B shard %u%s%s\n", t.name.c_str(), t.internal.c_str(),
                    std::string(bs::dtype_name(t.dtype)).c_str(), (unsigned long long)t.size, t.spans[0].shard,
                    t.fallback.empty() ? "" : "  requested ", t.fallback.empty() ? "" : (t.requested_dtype + ": " + t.fallback).c_str());
      }
  });
}

bs::cli::Command info_cmd{"info", "Show an RDRR model's architecture, tensors, sizes and shards", setup};

}  // namespace
