// A Hugging Face checkpoint as a model source: what `convert --quant f16` would store, without the
// round trip through RDRR (handy for parity runs straight from a checkpoint).
#include <fmt/ranges.h>

#include "rdrr/hf_config.h"
#include "rdrr/moe_tensors.h"
#include "rdrr/safetensors.h"
#include "rdrr/tensor_names.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "runtime/model/source.h"

namespace bs::model {

ModelSource open_hf_dir(const std::filesystem::path& dir) {
  auto ckpt = std::make_shared<Checkpoint>(dir);
  auto cfg_json = read_json_file(dir / "config.json");
  auto arch = hf_arch(cfg_json, (dir / "config.json").string());
  DType wdt = DType::BF16;
  for (auto& t : ckpt->tensors())
    if (t.shape.size() == 2) { wdt = t.dtype; break; }
  ModelSource src;
  src.config = load_hf_config(dir, wdt);
  src.quant = "F16";
  src.dir = dir;
  for (auto& t : ckpt->tensors()) src.weight_bytes += t.elements() * (t.shape.size() == 2 ? 2 : 4);
  auto names = std::make_shared<TensorNames>(arch.model_type, arch.multimodal);
  src.for_each_tensor = [ckpt, names, cfg = src.config, ckpt_dir = dir](const TensorSink& sink, bool /*parts: always whole*/) {
    std::vector<std::byte> buf;
    // MoE experts, stacked [E, rows, cols] (F16) from the per-expert or fused tensors; their biases F32.
    for (auto& st : moe_stacked(cfg, *ckpt, (ckpt_dir / "config.json").string())) {
      const bool bias = st.internal.ends_with("_bias");
      int64_t n = 1;
      for (auto d : st.shape) n *= d;
      const int64_t k = st.shape.back();
      if (st.mxfp4_row) {  // GPT-OSS's MXFP4 experts, as they are
        const uint64_t rb = padded_row_bytes(DType::MXFP4, uint64_t(k));
        buf.resize(size_t(n / k) * rb);
        for (int64_t r = 0; r < n / k; ++r) st.mxfp4_row(r, reinterpret_cast<uint8_t*>(buf.data()) + r * rb);
        sink({st.internal, DType::MXFP4, st.shape, buf});
        continue;
      }
      std::vector<float> row(size_t(k), 0.0f);
      buf.resize(size_t(n) * (bias ? 4 : 2));
      for (int64_t r = 0; r < n / k; ++r) {
        st.row(r, row.data());
        for (int64_t i = 0; i < k; ++i) {
          if (bias) reinterpret_cast<float*>(buf.data())[r * k + i] = row[size_t(i)];
          else reinterpret_cast<uint16_t*>(buf.data())[r * k + i] = float_to_half(row[size_t(i)]);
        }
      }
      sink({st.internal, bias ? DType::F32 : DType::F16, st.shape, buf});
    }
    for (auto& t : ckpt->tensors()) {
      auto r = names->to_internal(t.name);
      if (r.kind == TensorNames::Kind::skipped || r.kind == TensorNames::Kind::expert_part) continue;
      if (r.kind == TensorNames::Kind::unknown) fail("{}: unknown tensor '{}'", t.file, t.name);
      if (t.dtype == DType::U8)
        fail("{}: tensor '{}': dtype U8 is only read for GPT-OSS's MXFP4 experts (*_blocks, *_scales)", t.file, t.name);
      bool matrix = t.shape.size() == 2;
      DType out = matrix ? DType::F16 : DType::F32;
      uint64_t n = t.elements();
      buf.resize(n * (matrix ? 2 : 4));
      auto* in16 = reinterpret_cast<const uint16_t*>(t.data.data());
      auto* in32 = reinterpret_cast<const float*>(t.data.data());
      for (uint64_t i = 0; i < n; ++i) {
        float v = t.dtype == DType::BF16 ? bf16_to_float(in16[i]) : t.dtype == DType::F16 ? half_to_float(in16[i]) : in32[i];
        if (matrix) reinterpret_cast<uint16_t*>(buf.data())[i] = float_to_half(v);
        else reinterpret_cast<float*>(buf.data())[i] = v;
      }
      auto parts = fused_parts(cfg, r.internal);
      if (parts.empty()) {
        sink({r.internal, out, t.shape, buf});
        continue;
      }
      // Phi-3's fused qkv_proj / gate_up_proj: one view per part, by rows.
      auto want = expected_shape(cfg, r.internal);
      if (t.shape != want)
        fail("{}: tensor '{}': expected shape [{}, {}], got [{}]", t.file, t.name, want[0], want[1],
             fmt::join(t.shape, ", "));
      const uint64_t row = uint64_t(t.shape[1]) * 2;
      for (auto& p : parts)
        sink({p.internal, out, {p.rows, t.shape[1]},
              std::span<const std::byte>(buf).subspan(uint64_t(p.row0) * row, uint64_t(p.rows) * row)});
    }
  };
  return src;
}

}  // namespace bs::model
