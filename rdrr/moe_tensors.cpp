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
  for (auto n : {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"}) v.push_back(n);
  if (c.moe_expert_bias)
    for (auto n : {"ffn_gate_exps_bias", "ffn_up_exps_bias", "ffn_down_exps_bias"}) v.push_back(n);
  return v;
}

std::optional<std::vector<int64_t>> moe_tensor_shape(const ModelConfig& c, std::string_view n) {
  const int64_t E = c.n_experts, F = c.expert_ffn_dim, D = c.dim;
  if (n == "ffn_router") return std::vector<int64_t>{E, D};
  if (n == "ffn_router_bias") return std::vector<int64_t>{E};
  if (n == "ffn_gate_exps" || n == "ffn_up_exps") return std::vector<int64_t>{E, F, D};
  if (n == "ffn_down_exps") return std::vector<int64_t>{E, D, F};
  if (n == "ffn_gate_exps_bias" || n == "ffn_up_exps_bias") return std::vector<int64_t>{E, F};
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
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".", hf = "model.layers." + std::to_string(l) + ".mlp.experts.";
    auto add = [&](const char* n, const char* hf_name, DType dt, uint64_t bytes, std::function<void(int64_t, float*)> row) {
      out.push_back({b + n, hf + hf_name, *moe_tensor_shape(c, n), dt, bytes, std::move(row)});
    };
    if (!gpt_oss(c)) {
      // One tensor per expert: row r of [E, rows, cols] is row r % rows of expert r / rows.
      const bool mixtral = c.arch == "mixtral";
      struct Part { const char* internal; const char* hf_name; const char* mixtral; const char* qwen; int64_t rows, cols; };
      for (const Part& p : {Part{"ffn_gate_exps", "gate_proj.weight", "w1", "gate_proj", F, D},
                            Part{"ffn_up_exps", "up_proj.weight", "w3", "up_proj", F, D},
                            Part{"ffn_down_exps", "down_proj.weight", "w2", "down_proj", D, F}}) {
        std::vector<const SafeTensor*> src;
        uint64_t bytes = 0;
        for (int64_t e = 0; e < E; ++e) {
          std::string name = mixtral ? fmt::format("model.layers.{}.block_sparse_moe.experts.{}.{}.weight", l, e, p.mixtral)
                                     : fmt::format("model.layers.{}.mlp.experts.{}.{}.weight", l, e, p.qwen);
          src.push_back(&need(ck, name, {p.rows, p.cols}, label));
          bytes += src.back()->data.size();
        }
        const int64_t rows = p.rows, cols = p.cols;
        add(p.internal, p.hf_name, src[0]->dtype, bytes, [src, rows, cols](int64_t r, float* o) {
          const SafeTensor& t = *src[size_t(r / rows)];
          for (int64_t i = 0; i < cols; ++i) o[i] = element(t, uint64_t((r % rows) * cols + i));
        });
      }
      continue;
    }
    // GPT-OSS: gate_up_proj [E, D, 2F] holds gate in even columns and up in odd ones (x @ W, so columns are
    // outputs); down_proj [E, F, D]. Transposed into [E, out, in] rows here.
    const std::string p = "model.layers." + std::to_string(l) + ".mlp.experts.";
    const SafeTensor& gub = need(ck, p + "gate_up_proj_bias", {E, 2 * F}, label);
    const SafeTensor& dnb = need(ck, p + "down_proj_bias", {E, D}, label);
    for (int64_t odd : {0, 1})
      add(odd ? "ffn_up_exps_bias" : "ffn_gate_exps_bias", odd ? "up_proj.bias" : "gate_proj.bias", gub.dtype,
          gub.data.size() / 2, [&gub, odd, F](int64_t r, float* o) {
            for (int64_t f = 0; f < F; ++f) o[f] = element(gub, uint64_t(r * 2 * F + 2 * f + odd));
          });
    add("ffn_down_exps_bias", "down_proj.bias", dnb.dtype, dnb.data.size(), [&dnb, D](int64_t r, float* o) {
      for (int64_t i = 0; i < D; ++i) o[i] = element(dnb, uint64_t(r * D + i));
    });
    if (ck.find(p + "gate_up_proj_blocks")) {
      // As GPT-OSS ships them: *_blocks [E, out, in / 32, 16] (e2m1 codes, element 2i in the low nibble of
      // byte i, 2i + 1 in the high one) and *_scales [E, out, in / 32] (E8M0), out rows of gate_up interleaved
      // (gate f at 2f, up f at 2f + 1). Each row becomes GGML's 17-byte blocks; nothing is re-quantized.
      if (D % 32 || F % 32) fail("{}: MXFP4 experts need dims that are multiples of 32, got {} and {}", label, D, F);
      auto mx = [&](const char* base, int64_t out, int64_t in) {
        const SafeTensor& bl = need_u8(ck, p + base + "_blocks", {E, out, in / 32, 16}, label);
        const SafeTensor& sc = need_u8(ck, p + base + "_scales", {E, out, in / 32}, label);
        return std::pair{&bl, &sc};
      };
      auto [gb, gs] = mx("gate_up_proj", 2 * F, D);
      auto [db, ds] = mx("down_proj", D, F);
      auto rows = [](const SafeTensor* bl, const SafeTensor* sc, int64_t in, std::function<int64_t(int64_t)> src_row) {
        return [bl, sc, in, src_row](int64_t r, uint8_t* o) { mxfp4_from_gpt_oss(*bl, *sc, src_row(r), in / 32, o); };
      };
      for (int64_t odd : {0, 1}) {
        StackedTensor st{b + (odd ? "ffn_up_exps" : "ffn_gate_exps"), hf + (odd ? "up_proj.weight" : "gate_proj.weight"),
                         *moe_tensor_shape(c, "ffn_gate_exps"), DType::MXFP4, (gb->data.size() + gs->data.size()) / 2, {},
                         rows(gb, gs, D, [F, odd](int64_t r) { return (r / F) * 2 * F + 2 * (r % F) + odd; })};
        out.push_back(std::move(st));
      }
      out.push_back({b + "ffn_down_exps", hf + "down_proj.weight", *moe_tensor_shape(c, "ffn_down_exps"), DType::MXFP4,
                     db->data.size() + ds->data.size(), {}, rows(db, ds, F, [](int64_t r) { return r; })});
      continue;
    }
    const SafeTensor& gu = need(ck, p + "gate_up_proj", {E, D, 2 * F}, label);
    const SafeTensor& dn = need(ck, p + "down_proj", {E, F, D}, label);
    for (int64_t odd : {0, 1})
      add(odd ? "ffn_up_exps" : "ffn_gate_exps", odd ? "up_proj.weight" : "gate_proj.weight", gu.dtype,
          gu.data.size() / 2, [&gu, odd, F, D](int64_t r, float* o) {
            const int64_t e = r / F, f = r % F;
            for (int64_t d = 0; d < D; ++d) o[d] = element(gu, uint64_t((e * D + d) * 2 * F + 2 * f + odd));
          });
    add("ffn_down_exps", "down_proj.weight", dn.dtype, dn.data.size(), [&dn, F, D](int64_t r, float* o) {
      const int64_t e = r / D, i = r % D;
      for (int64_t f = 0; f < F; ++f) o[f] = element(dn, uint64_t((e * F + f) * D + i));
    });
  }
  return out;
}

}  // namespace bs
