#include "rdrr/moe_tensors.h"

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "rdrr/safetensors.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

namespace {

bool gpt_oss(const ModelConfig& c) { return c.moe_expert_bias; }

float element(const SafeTensor& t, uint64_t i) {
  uint16_t h;
  switch (t.dtype) {
    case DType::F32: { float f; std::memcpy(&f, t.data.data() + 4 * i, 4); return f; }
    case DType::F16: std::memcpy(&h, t.data.data() + 2 * i, 2); return half_to_float(h);
    default: std::memcpy(&h, t.data.data() + 2 * i, 2); return bf16_to_float(h);
  }
}

const SafeTensor& need(const Checkpoint& ck, const std::string& name, const std::vector<int64_t>& shape,
                       const std::string& label) {
  const SafeTensor* t = ck.find(name);
  if (!t) fail("{}: checkpoint has no tensor '{}' (a MoE layer's expert weights)", label, name);
  if (t->shape != shape)
    fail("{}: tensor '{}': expected shape {}, got {}", t->file, name, nlohmann::json(shape).dump(),
         nlohmann::json(t->shape).dump());
  if (t->dtype != DType::F32 && t->dtype != DType::F16 && t->dtype != DType::BF16)
    fail("{}: tensor '{}': expected F32, F16 or BF16, got {}", t->file, name, dtype_name(t->dtype));
  return *t;
}

const SafeTensor& need_u8(const Checkpoint& ck, const std::string& name, const std::vector<int64_t>& shape,
                          const std::string& label) {
  const SafeTensor* t = ck.find(name);
  if (!t) fail("{}: checkpoint has no tensor '{}' (GPT-OSS's MXFP4 experts come as *_blocks and *_scales)", label, name);
  if (t->shape != shape || t->dtype != DType::U8)
    fail("{}: tensor '{}': expected U8 {}, got {} {}", t->file, name, nlohmann::json(shape).dump(), dtype_name(t->dtype),
         nlohmann::json(t->shape).dump());
  return *t;
}

// Row `row` of GPT-OSS's blocks [rows, nb, 16] and scales [rows, nb] as nb GGML block_mxfp4 (17 bytes each):
// the scale byte, then element j in the low nibble of byte j and j + 16 in the high one.
void mxfp4_from_gpt_oss(const SafeTensor& blocks, const SafeTensor& scales, int64_t row, int64_t nb, uint8_t* out) {
  const auto* b = reinterpret_cast<const uint8_t*>(blocks.data.data()) + row * nb * 16;
  const auto* s = reinterpret_cast<const uint8_t*>(scales.data.data()) + row * nb;
  for (int64_t k = 0; k < nb; ++k, b += 16, out += 17) {
    auto nib = [&](int m) { return (b[m >> 1] >> ((m & 1) * 4)) & 15; };
    out[0] = s[k];
    for (int j = 0; j < 16; ++j) out[1 + j] = uint8_t(nib(j) | (nib(j + 16) << 4));
  }
}

}  // namespace

std::vector<std::string> moe_layer_tensors(const ModelConfig& c) {
  std::vector<std::string> v{"ffn_router"};
  if (c.moe_router_bias) v.push_back("ffn_router_bias");
  for (auto n : {"ffn_gate_up_exps", "ffn_down_exps"}) v.push_back(n);
  if (c.moe_expert_bias)
    for (auto n : {"ffn_gate_up_exps_bias", "ffn_down_exps_bias"}) v.push_back(n);
  return v;
}

std::optional<std::vector<int64_t>> moe_tensor_shape(const ModelConfig& c, std::string_view n) {
  const int64_t E = c.n_experts, F = c.expert_ffn_dim, D = c.dim;
  if (n == "ffn_router") return std::vector<int64_t>{E, D};
  if (n == "ffn_router_bias") return std::vector<int64_t>{E};
  if (n == "ffn_gate_up_exps") return std::vector<int64_t>{E, 2 * F, D};
  if (n == "ffn_down_exps") return std::vector<int64_t>{E, D, F};
  if (n == "ffn_gate_up_exps_bias") return std::vector<int64_t>{E, 2 * F};
  if (n == "ffn_down_exps_bias") return std::vector<int64_t>{E, D};
  return std::nullopt;
}

bool is_expert_source(std::string_view model_type, std::string_view rest) {
  auto has = [&](std::string_view s) { return rest.find(s) != std::string_view::npos; };
  if (!rest.starts_with("layers.")) return false;
  if (model_type == "mixtral") return has(".block_sparse_moe.experts.");
  if (model_type == "qwen3_moe") return has(".mlp.experts.");
  if (model_type == "gpt_oss")
    for (auto s : {".mlp.experts.gate_up_proj", ".mlp.experts.down_proj"})
      for (auto suffix : {"", "_bias", "_blocks", "_scales"})
        if (rest.ends_with(std::string(s) + suffix)) return true;
  return false;
}

std::vector<HfExpertTensor> moe_hf_tensors(const ModelConfig& c, int32_t l) {
  const int64_t E = c.n_experts, F = c.expert_ffn_dim, D = c.dim;
  std::vector<HfExpertTensor> v;
  const std::string p = "model.layers." + std::to_string(l) + ".";
  if (gpt_oss(c)) {
    v.push_back({p + "mlp.experts.gate_up_proj", {E, D, 2 * F}});
    v.push_back({p + "mlp.experts.gate_up_proj_bias", {E, 2 * F}, true});
    v.push_back({p + "mlp.experts.down_proj", {E, F, D}});
    v.push_back({p + "mlp.experts.down_proj_bias", {E, D}, true});
    return v;
  }
  const bool mixtral = c.arch == "mixtral";
  for (int64_t e = 0; e < E; ++e)
    for (auto [mx, qw, rows, cols] : {std::tuple{"w1", "gate_proj", F, D}, std::tuple{"w3", "up_proj", F, D},
                                      std::tuple{"w2", "down_proj", D, F}})
      v.push_back({mixtral ? fmt::format("{}block_sparse_moe.experts.{}.{}.weight", p, e, mx)
                           : fmt::format("{}mlp.experts.{}.{}.weight", p, e, qw),
                   {rows, cols}});
  return v;
}

std::vector<StackedTensor> moe_stacked(const ModelConfig& c, const Checkpoint& ck, const std::string& label) {
  std::vector<StackedTensor> out;
  if (!c.moe()) return out;
  const int64_t E = c.n_experts, F = c.expert_ffn_dim, D = c.dim;
  // Row j < 2F of an expert's fused gate_up: gate row j below F, up row j - F above. gate(f, up) names the
  // source of that row for each checkpoint form.
  auto gate_up = [F](int64_t r, auto&& gate, auto&& up) {
    const int64_t e = r / (2 * F), j = r % (2 * F);
    return j < F ? gate(e, j) : up(e, j - F);
  };
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".", hf = "model.layers." + std::to_string(l) + ".mlp.experts.";
    auto add = [&](const char* n, const char* hf_name, DType dt, uint64_t bytes, std::function<void(int64_t, float*)> row) {
      out.push_back({b + n, hf + hf_name, *moe_tensor_shape(c, n), dt, bytes, std::move(row)});
    };
    if (!gpt_oss(c)) {
      // One tensor per expert (w1 / w3 / w2, or gate / up / down_proj).
      const bool mixtral = c.arch == "mixtral";
      auto experts = [&](const char* mx, const char* qw, int64_t rows, int64_t cols, uint64_t& bytes) {
        std::vector<const SafeTensor*> src;
        for (int64_t e = 0; e < E; ++e) {
          std::string name = mixtral ? fmt::format("model.layers.{}.block_sparse_moe.experts.{}.{}.weight", l, e, mx)
                                     : fmt::format("model.layers.{}.mlp.experts.{}.{}.weight", l, e, qw);
          src.push_back(&need(ck, name, {rows, cols}, label));
          bytes += src.back()->data.size();
        }
        return src;
      };
      uint64_t gu_bytes = 0, dn_bytes = 0;
      auto g = experts("w1", "gate_proj", F, D, gu_bytes), u = experts("w3", "up_proj", F, D, gu_bytes);
      auto d = experts("w2", "down_proj", D, F, dn_bytes);
      add("ffn_gate_up_exps", "gate_up_proj", g[0]->dtype, gu_bytes, [g, u, gate_up, D](int64_t r, float* o) {
        auto row = [&](const std::vector<const SafeTensor*>& t) {
          return [&t, o, D](int64_t e, int64_t j) {
            for (int64_t i = 0; i < D; ++i) o[i] = element(*t[size_t(e)], uint64_t(j * D + i));
          };
        };
        gate_up(r, row(g), row(u));
      });
      add("ffn_down_exps", "down_proj", d[0]->dtype, dn_bytes, [d, D, F](int64_t r, float* o) {
        for (int64_t f = 0; f < F; ++f) o[f] = element(*d[size_t(r / D)], uint64_t((r % D) * F + f));
      });
      continue;
    }
    // GPT-OSS: gate_up_proj [E, D, 2F] holds gate in even columns and up in odd ones (x @ W, so columns are
    // outputs); down_proj [E, F, D]. Transposed into [E, out, in] rows here, gate_up's halves de-interleaved.
    const std::string p = hf;
    const SafeTensor& gub = need(ck, p + "gate_up_proj_bias", {E, 2 * F}, label);
    const SafeTensor& dnb = need(ck, p + "down_proj_bias", {E, D}, label);
    add("ffn_gate_up_exps_bias", "gate_up_proj_bias", gub.dtype, gub.data.size(), [&gub, F](int64_t e, float* o) {
      for (int64_t j = 0; j < 2 * F; ++j) o[j] = element(gub, uint64_t(e * 2 * F + (j < F ? 2 * j : 2 * (j - F) + 1)));
    });
    add("ffn_down_exps_bias", "down_proj_bias", dnb.dtype, dnb.data.size(), [&dnb, D](int64_t r, float* o) {
      for (int64_t i = 0; i < D; ++i) o[i] = element(dnb, uint64_t(r * D + i));
    });
    bool shipped_mxfp4 = false;  // any of the four: then all four must be there
    for (auto n : {"gate_up_proj_blocks", "gate_up_proj_scales", "down_proj_blocks", "down_proj_scales"})
      shipped_mxfp4 = shipped_mxfp4 || ck.find(p + n);
    if (shipped_mxfp4) {
      // As GPT-OSS ships them: *_blocks [E, out, in / 32, 16] (e2m1 codes, element 2i in the low nibble of
      // byte i, 2i + 1 in the high one) and *_scales [E, out, in / 32] (E8M0), out rows of gate_up interleaved
      // (gate f at 2f, up f at 2f + 1). Each row becomes GGML's 17-byte blocks; nothing is re-quantized.
      if (D % 32 || F % 32) fail("{}: MXFP4 experts need dims that are multiples of 32, got {} and {}", label, D, F);
      auto mx = [&](const char* base, int64_t rows, int64_t in) {
        const SafeTensor& bl = need_u8(ck, p + base + "_blocks", {E, rows, in / 32, 16}, label);
        const SafeTensor& sc = need_u8(ck, p + base + "_scales", {E, rows, in / 32}, label);
        return std::pair{&bl, &sc};
      };
      auto [gb, gs] = mx("gate_up_proj", 2 * F, D);
      auto [db, ds] = mx("down_proj", D, F);
      auto rows = [](const SafeTensor* bl, const SafeTensor* sc, int64_t in, std::function<int64_t(int64_t)> src_row) {
        return [bl, sc, in, src_row](int64_t r, uint8_t* o) { mxfp4_from_gpt_oss(*bl, *sc, src_row(r), in / 32, o); };
      };
      auto interleaved = [F, gate_up](int64_t r) {
        return gate_up(r, [F](int64_t e, int64_t f) { return e * 2 * F + 2 * f; },
                       [F](int64_t e, int64_t f) { return e * 2 * F + 2 * f + 1; });
      };
      out.push_back({b + "ffn_gate_up_exps", hf + "gate_up_proj", *moe_tensor_shape(c, "ffn_gate_up_exps"), DType::MXFP4,
                     gb->data.size() + gs->data.size(), {}, rows(gb, gs, D, interleaved)});
      out.push_back({b + "ffn_down_exps", hf + "down_proj", *moe_tensor_shape(c, "ffn_down_exps"), DType::MXFP4,
                     db->data.size() + ds->data.size(), {}, rows(db, ds, F, [](int64_t r) { return r; })});
      continue;
    }
    const SafeTensor& gu = need(ck, p + "gate_up_proj", {E, D, 2 * F}, label);
    const SafeTensor& dn = need(ck, p + "down_proj", {E, F, D}, label);
    add("ffn_gate_up_exps", "gate_up_proj", gu.dtype, gu.data.size(), [&gu, gate_up, F, D](int64_t r, float* o) {
      auto col = [&](int64_t odd) {
        return [&gu, o, odd, F, D](int64_t e, int64_t f) {
          for (int64_t d = 0; d < D; ++d) o[d] = element(gu, uint64_t((e * D + d) * 2 * F + 2 * f + odd));
        };
      };
      gate_up(r, col(0), col(1));
    });
    add("ffn_down_exps", "down_proj", dn.dtype, dn.data.size(), [&dn, F, D](int64_t r, float* o) {
      const int64_t e = r / D, i = r % D;
      for (int64_t f = 0; f < F; ++f) o[f] = element(dn, uint64_t((e * F + f) * D + i));
    });
  }
  return out;
}

}  // namespace bs
