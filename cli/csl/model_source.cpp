// The seam between the CSL exporter and the engine: runs the prompt through the Vulkan forward pass
// and collects the final hidden state, the final norm, the selected lm_head rows and their logits.
#include "cli/csl/model_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rdrr/manifest.h"
#include "runtime/base/dtype.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"
#include "runtime/model/model.h"
#include "runtime/tokenizer/tokenizer.h"
#include "sharding/hash.h"

namespace bs::csl {

HeadExportInput run_model_for_export(const ExportArgs& args) {
  namespace fs = std::filesystem;
  fs::path dir = args.model_dir;
  if (!fs::exists(dir / "manifest.json"))
    fail("{}: export-csl needs an RDRR model (manifest.json): the proof binds the manifest and shard hashes",
         dir.string());
  HeadExportInput in;
  auto manifest = read_manifest(dir);
  {
    std::ifstream f(dir / "manifest.json", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    auto text = ss.str();
    in.manifest_sha256 = sha256_hex(std::as_bytes(std::span(text.data(), text.size())));
  }
  // The hash of each shard file as it lies on disk (for a zstd shard, of the .zst file, not of the
  // bytes inside), so `sha256sum` on the model directory checks the proof's model identity.
  for (auto& s : manifest.shards) in.shards.push_back({s.filename, s.file_hash()});

  in.prompt = args.prompt;
  in.prompt_ids = args.prompt_ids;
  if (in.prompt_ids.empty()) {
    if (!fs::exists(dir / "tokenizer.json")) fail("{}: no tokenizer.json; pass --prompt-tokens", dir.string());
    in.prompt_ids = tok::Tokenizer::from_dir(dir).encode(args.prompt, true);
  }
  auto source = model::open_model(dir);
  gpu::Device device;
  model::ModelOptions mo;
  mo.max_ctx = int32_t(in.prompt_ids.size()) + 1;
  mo.max_batch = int32_t(in.prompt_ids.size());
  mo.logits_rows = 1;
  model::Model m(device, source, mo);
  in.cfg = m.config();
  in.device_name = device.adapter().name;
  auto logits = m.prefill(in.prompt_ids, 0, false);
  in.hidden = m.last_hidden();
  in.reference_normed = m.last_normed();
  // The final norm weight travels to the PEs as f32; the converter stores norms as f32 (DESIGN.md).
  const auto* nw = m.find("output_norm");
  if (!nw) fail("{}: the model has no output_norm tensor; the exporter starts at the final norm", dir.string());
  if (nw->dtype != DType::F32 || nw->shape != std::vector<int64_t>{in.cfg.dim})
    fail("{}: output_norm is {} [{}], expected F32 [{}]", dir.string(), dtype_name(nw->dtype),
         nw->shape.empty() ? -1 : nw->shape[0], in.cfg.dim);
  in.norm_weight.resize(in.cfg.dim);
  device.queue().readBuffer(nw->buffer, 0, in.norm_weight.data(), in.norm_weight.size() * 4);
  std::string head = in.cfg.tied_embeddings ? "embed" : "output";
  for (int32_t t : args.tokens) {
    if (t < 0 || t >= in.cfg.vocab) fail_kind(ErrorKind::usage, "--tokens: {} is outside the vocabulary of {}", t, in.cfg.vocab);
    in.tokens.push_back(t);
    auto row = m.weight_row(head, t);
    std::vector<uint16_t> r16(row.size());
    for (size_t i = 0; i < row.size(); ++i) r16[i] = float_to_half(row[i]);
    in.head_rows_f16.push_back(std::move(r16));
    in.reference_logits.push_back(logits[size_t(t)]);
  }
  return in;
}

}  // namespace bs::csl
