#include "rdrr/convert.h"

#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "rdrr/hf_config.h"
#include "rdrr/moe_tensors.h"
#include "rdrr/quant.h"
#include "rdrr/safetensors.h"
#include "rdrr/tensor_names.h"
#include "rdrr/partial_dir.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Output bytes per parallel chunk of rows: large enough to keep threads busy, small enough to bound memory.
constexpr uint64_t kChunkBytes = 16ull << 20;

float load_value(DType t, const std::byte* p, uint64_t i) {
  uint16_t h;
  switch (t) {
    case DType::F32: { float f; std::memcpy(&f, p + 4 * i, 4); return f; }
    case DType::F16: std::memcpy(&h, p + 2 * i, 2); return half_to_float(h);
    default: std::memcpy(&h, p + 2 * i, 2); return bf16_to_float(h);
  }
}

// Runs fn(begin, end) over [0, n) on up to `threads` threads.
void parallel_for(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  int t = int(std::min<int64_t>(threads, n));
  if (t <= 1) return fn(0, n);
  std::vector<std::thread> pool;
  std::exception_ptr err;
  std::mutex mu;
  for (int k = 0; k < t; ++k)
    pool.emplace_back([&, k] {
      try {
        fn(n * k / t, n * (k + 1) / t);
      } catch (...) {
        std::lock_guard lock(mu);
        err = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  if (err) std::rethrow_exception(err);
}

// Rows [row0, row0 + rows) of a checkpoint tensor: all of it, or one part of a fused one (Phi-3).
struct Slice {
  const SafeTensor* src;
  int64_t row0 = 0, rows = -1;  // -1: every row
  std::string name;             // the manifest name: the tensor's own, or the part's unfused HF name
  const StackedTensor* stacked = nullptr;  // MoE experts made from several checkpoint tensors (moe_tensors.h)
};

struct Planned {
  const SafeTensor* src;
  const StackedTensor* stacked;
  int64_t row0, rows;
  std::string name;
  std::string internal;
  DType requested, stored;
  std::string fallback;
};

json tokenizer_block(const fs::path& hf_dir, const fs::path& tmp, const ModelConfig& c) {
  json tok;
  for (auto f : {"tokenizer.json", "tokenizer_config.json", "tokenizer.model", "special_tokens_map.json"})
    if (fs::exists(hf_dir / f)) fs::copy_file(hf_dir / f, tmp / f);
  if (fs::exists(hf_dir / "tokenizer.json")) tok = {{"type", "bundled"}, {"file", "tokenizer.json"}};
  else if (fs::exists(hf_dir / "tokenizer.model")) tok = {{"type", "sentencepiece"}, {"file", "tokenizer.model"}};
  else return json();
  tok["vocabSize"] = c.vocab;
  if (fs::exists(hf_dir / "tokenizer_config.json")) {
    json tc = read_json_file(hf_dir / "tokenizer_config.json");
    if (tc.contains("add_bos_token") && tc["add_bos_token"].is_boolean()) tok["addBosToken"] = tc["add_bos_token"];
    if (tc.contains("add_eos_token") && tc["add_eos_token"].is_boolean()) tok["addEosToken"] = tc["add_eos_token"];
  }
  return tok;
}

}  // namespace

QuantMode parse_quant_mode(const std::string& s) {
  if (s == "f16") return QuantMode::f16;
  if (s == "q8_0") return QuantMode::q8_0;
  if (s == "q4_k_m") return QuantMode::q4_k_m;
  if (s == "mxfp4") return QuantMode::mxfp4;
  fail_kind(ErrorKind::usage, "--quant: expected f16, q8_0, q4_k_m or mxfp4, got '{}'", s);
}

bool promoted_layer(int32_t i, int32_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

DType requested_dtype(QuantMode mode, const ModelConfig& c, const std::string& internal, size_t rank) {
  // MoE: the experts [E, rows, cols] are matrices like any other; their biases [E, n] and the router bias stay
  // F32, and the router F16 (its logits pick the experts: a quantized router moves near-ties across).
  const bool experts = internal.ends_with("_exps");
  if (internal.ends_with("_bias")) return DType::F32;
  if (internal.ends_with(".ffn_router")) return DType::F16;
  if (rank != 2 && !experts) return DType::F32;  // vectors, and the conv kernels of LFM2 and Qwen 3.5 ([channels, 1, width])
  if (mode == QuantMode::mxfp4) return experts ? DType::MXFP4 : DType::F16;
  if (mode == QuantMode::f16) return DType::F16;
  if (mode == QuantMode::q8_0) return DType::Q8_0;
  if (internal == "embed" || internal == "output" || internal == "ple_embed") return DType::Q6_K;
  // Qwen 3.5's a / b projections ([v_heads, dim], a few KB) feed exp / softplus / sigmoid per head: F16, as
  // DOPPLER keeps them.
  if (internal.ends_with(".linear_a") || internal.ends_with(".linear_b")) return DType::F16;
  int32_t layer = tensor_layer(internal);
  bool sensitive = internal.ends_with(".attn_v") || internal.ends_with(".ffn_down") || internal.ends_with(".ffn_down_exps");
  return sensitive && promoted_layer(layer, c.n_layers) ? DType::Q6_K : DType::Q4_K;
}

ConvertResult convert_model(const fs::path& hf_dir, const fs::path& out_dir, const ConvertOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (fs::exists(out_dir) && !opt.force)
    fail_kind(ErrorKind::usage, "{}: already exists (use --force to replace it)", out_dir.string());
  const int threads = opt.threads > 0 ? opt.threads : std::max(1, int(std::thread::hardware_concurrency()));

  json config_json = read_json_file(hf_dir / "config.json");
  json gen;
  bool has_gen = fs::exists(hf_dir / "generation_config.json");
  if (has_gen) gen = read_json_file(hf_dir / "generation_config.json");
  const std::string label = (hf_dir / "config.json").string();
  HfArch arch = hf_arch(config_json, label);
  TensorNames names(arch.model_type, arch.multimodal);
  Checkpoint ck(hf_dir);

  // The embedding's dtype is the checkpoint's dtype (it rounds Gemma's embedding scale).
  DType weight_dtype = DType::BF16;
  for (auto& t : ck.tensors()) {
    auto r = names.to_internal(t.name);
    if (r.kind == TensorNames::Kind::mapped && r.internal == "embed") weight_dtype = t.dtype;
  }
  ModelConfig cfg = config_from_hf(config_json, has_gen ? &gen : nullptr, weight_dtype, label);

  // Map every checkpoint tensor, then check the set against what the config needs.
  std::map<std::string, Slice> by_internal;
  const std::vector<StackedTensor> stacked = moe_stacked(cfg, ck, label);
  for (auto& st : stacked) by_internal.emplace(st.internal, Slice{nullptr, 0, -1, st.name, &st});
  for (auto& t : ck.tensors()) {
    auto r = names.to_internal(t.name);
    if (r.kind == TensorNames::Kind::skipped || r.kind == TensorNames::Kind::expert_part) continue;
    if (r.kind == TensorNames::Kind::unknown)
      fail("{}: tensor '{}' is not part of a {} model (no mapping)", t.file, t.name, cfg.arch);
    if (t.dtype == DType::U8)  // raw bytes are GPT-OSS's MXFP4 experts only (moe_tensors.h)
      fail("{}: tensor '{}': dtype U8 is only read for GPT-OSS's MXFP4 experts (*_blocks, *_scales)", t.file, t.name);
    if (r.internal == "output" && cfg.tied_embeddings) continue;  // tied: HF ignores lm_head too
    std::vector<std::pair<std::string, Slice>> slices;
    if (auto parts = fused_parts(cfg, r.internal); !parts.empty()) {
      // Split by rows: each part quantizes exactly as the unfused tensor would (quantization is per row).
      auto want = expected_shape(cfg, r.internal);
      if (t.shape != want)
        fail("{}: tensor '{}': expected shape {}, got {}", t.file, t.name, json(want).dump(), json(t.shape).dump());
      for (auto& part : parts) slices.push_back({part.internal, Slice{&t, part.row0, part.rows, names.to_hf(part.internal)}});
    } else {
      slices.push_back({r.internal, Slice{&t, 0, -1, t.name}});
    }
    for (auto& [internal, slice] : slices)
      if (!by_internal.emplace(internal, slice).second)
        fail("{}: tensors '{}' and '{}' both map to '{}'", t.file, by_internal[internal].name, t.name, internal);
  }
  std::vector<Planned> plan;
  uint64_t source_bytes = 0;
  for (auto& internal : expected_tensors(cfg)) {
    auto it = by_internal.find(internal);
    if (it == by_internal.end())
      fail("{}: checkpoint has no tensor for '{}' ({})", hf_dir.string(), internal, names.to_hf(internal));
    const Slice& sl = it->second;
    auto want = expected_shape(cfg, internal);
    if (sl.stacked) {
      // GPT-OSS's MXFP4 experts stay MXFP4 whatever --quant says (no re-quantization).
      plan.push_back({nullptr, sl.stacked, 0, -1, sl.name, internal,
                      sl.stacked->mxfp4_row ? DType::MXFP4 : requested_dtype(opt.quant, cfg, internal, want.size()),
                      DType::F32, {}});
      plan.back().stored = storable_dtype(plan.back().requested, want.back(), &plan.back().fallback);
      source_bytes += sl.stacked->source_bytes;
      by_internal.erase(it);
      continue;
    }
    const SafeTensor* t = sl.src;
    auto shape = t->shape;
    if (sl.rows >= 0) shape[0] = sl.rows;
    if (shape != want)
      fail("{}: tensor '{}': expected shape {}, got {}", t->file, t->name, json(want).dump(), json(shape).dump());
    Planned p{t, nullptr, sl.row0, sl.rows, sl.name, internal, requested_dtype(opt.quant, cfg, internal, shape.size()),
              DType::F32, {}};
    p.stored = storable_dtype(p.requested, t->shape.back(), &p.fallback);
    plan.push_back(std::move(p));
    source_bytes += sl.rows >= 0 ? t->data.size() / uint64_t(t->shape[0]) * uint64_t(sl.rows) : t->data.size();
    by_internal.erase(it);
  }
  if (!by_internal.empty())
    fail("{}: tensor '{}' ('{}') is not used by this config", hf_dir.string(), by_internal.begin()->second.src->name,
         by_internal.begin()->first);

  SignalGuard signals;
  PartialDir tmp(out_dir, opt.keep_partial);
  Manifest m;
  {
    ShardWriterOptions so = opt.shards;
    if (so.threads <= 0) so.threads = threads;
    ShardWriter writer(tmp.path(), so);
    uint64_t done = 0;
    std::vector<std::byte> out;
    for (auto& p : plan) {
      // A stacked MoE tensor has no one source: its rows come from p.stacked->row (row_in is then what a
      // row cost in the checkpoint, for the progress count).
      const std::vector<int64_t>& src_shape = p.stacked ? p.stacked->shape : p.src->shape;
      const DType src_dtype = p.stacked ? p.stacked->source_dtype : p.src->dtype;
      int64_t elems = 1;
      for (auto d : src_shape) elems *= d;
      const int64_t k = src_shape.back();
      const int64_t rows = p.rows >= 0 ? p.rows : elems / std::max<int64_t>(k, 1);
      const uint64_t row_out = *row_bytes(p.stored, uint64_t(k));
      const uint64_t row_in = uint64_t(k) * traits(src_dtype).block_bytes;
      const std::span<const std::byte> data =
          p.stacked ? std::span<const std::byte>() : p.src->data.subspan(uint64_t(p.row0) * row_in, uint64_t(rows) * row_in);
      TensorEntry e;
      e.name = p.name;
      e.internal = p.internal;
      e.dtype = p.stored;
      e.shape = src_shape;
      if (p.rows >= 0) e.shape[0] = p.rows;
      e.size = uint64_t(rows) * row_out;
      e.spans = writer.begin_tensor(e.size);
      e.role = tensor_role(p.internal);
      e.group = tensor_group(p.internal);
      e.source_dtype = std::string(dtype_name(src_dtype));
      e.requested_dtype = std::string(dtype_name(p.requested));
      e.fallback = p.fallback;
      const int64_t chunk_rows = std::max<int64_t>(1, int64_t(kChunkBytes / std::max<uint64_t>(row_out, 1)));
      for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
        signals.check();
        int64_t n = std::min(chunk_rows, rows - r0);
        out.resize(uint64_t(n) * row_out);
        parallel_for(n, threads, [&](int64_t a, int64_t b) {
          std::vector<float> row(static_cast<size_t>(k));
          for (int64_t r = a; r < b; ++r) {
            if (p.stacked && p.stacked->mxfp4_row) {
              p.stacked->mxfp4_row(r0 + r, reinterpret_cast<uint8_t*>(out.data()) + uint64_t(r) * row_out);
              continue;
            }
            if (p.stacked) {
              p.stacked->row(r0 + r, row.data());
            } else {
              const std::byte* in = data.data() + uint64_t(r0 + r) * row_in;
              for (int64_t i = 0; i < k; ++i) row[size_t(i)] = load_value(src_dtype, in, uint64_t(i));
            }
            quantize_row(p.stored, row.data(), out.data() + uint64_t(r) * row_out, k);
          }
        });
        writer.write(out);
        if (!p.stacked) release_pages(data.subspan(uint64_t(r0) * row_in, uint64_t(n) * row_in));  // bounded RSS
        done += uint64_t(n) * row_in;
        if (opt.progress) opt.progress(done, source_bytes);
      }
      m.tensors.push_back(std::move(e));
    }
    m.shards = writer.finish();
  }
  m.hash_algorithm = std::string(hash_algorithm_name(opt.shards.hash));
  signals.check();
  for (auto& s : m.shards) m.total_size += s.size;
  m.model_id = hf_dir.filename().empty() ? hf_dir.parent_path().filename().string() : hf_dir.filename().string();
  m.model_type = config_json["model_type"].get<std::string>();
  const char* qname[] = {"F16", "Q8_0", "Q4_K_M", "MXFP4"};
  m.quantization = qname[int(opt.quant)];
  std::string embed_dtype = std::string(dtype_name(plan.front().stored));
  m.quantization_info = {{"weights", m.quantization}, {"embeddings", embed_dtype},
                         {"lmHead", cfg.tied_embeddings ? embed_dtype : std::string(dtype_name(plan.back().stored))},
                         {"compute", "f32"}, {"layout", "row"}};
  m.config = cfg;
  m.eos_ids = cfg.eos_ids;
  m.tokenizer = tokenizer_block(hf_dir, tmp.path(), cfg);
  m.metadata = {{"source", fs::absolute(hf_dir).lexically_normal().string()},
                {"convertedAt", std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch()).count()},
                {"converter", "blueshift 0.1.0"},
                {"zstdLevel", opt.shards.compress ? json(opt.shards.zstd_level) : json(nullptr)},
                {"zstdMinSaving", opt.shards.compress ? json(opt.shards.min_saving) : json(nullptr)}};
  write_manifest(m, tmp.path() / "manifest.json");
  signals.check();

  tmp.commit();  // an existing OUT_DIR (the caller checked --force) is replaced

  ConvertResult res;
  res.manifest = read_manifest(out_dir);  // what a reader sees, re-validated
  res.source_bytes = source_bytes;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace bs
