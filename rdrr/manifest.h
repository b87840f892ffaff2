// manifest.json of an RDRR model directory (../shared/docs/RDRR.md): DOPPLER's version 1 with
// blueshift's extension (zstd shards with storedSize/storedHash, x-blueshift). The manifest is
// untrusted input: parse_manifest checks every field and rejects what RDRR.md lists, naming the file
// and field with expected vs actual.
#pragma once
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/dtype.h"
#include "runtime/model/config.h"

namespace bs {

struct ShardInfo {
  uint32_t index = 0;
  std::string filename;     // a plain name inside the model directory
  uint64_t size = 0;        // raw (decompressed) bytes
  std::string hash;         // lowercase hex SHA-256 of the raw bytes
  uint64_t offset = 0;      // global offset of the shard's first raw byte
  bool compressed = false;  // "compression": "zstd"
  uint64_t stored_size = 0; // bytes of the file on disk (compressed only)
  std::string stored_hash;  // SHA-256 of the file (compressed only)
  uint64_t file_size() const { return compressed ? stored_size : size; }
  const std::string& file_hash() const { return compressed ? stored_hash : hash; }
};

// Where a tensor's bytes lie: one span, or several (in any shard order; DOPPLER splits large tensors
// into many spans, several of them in one shard).
struct TensorSpan {
  uint32_t shard = 0;
  uint64_t offset = 0;  // within the shard's raw bytes
  uint64_t size = 0;
};

struct TensorEntry {
  std::string name;              // HF name: the manifest key
  std::string internal;          // blueshift name (runtime/model/config.h); empty when unknown
  bool skipped = false;          // not part of the text model (a vision or audio tower, an MTP head): never bound
  DType dtype = DType::F32;      // as stored (I4 for DOPPLER's int4 table, whose manifest dtype says F16)
  std::vector<int64_t> shape;    // HF shape, [out, in] for linear weights
  Layout layout = Layout::row;   // blocked dtypes: how elements fill blocks (dtype.h)
  uint64_t size = 0;             // bytes
  std::vector<TensorSpan> spans; // the bytes in order: span i holds bytes [sum of sizes before i, + size)
  // DOPPLER's companions, other entries of this manifest: a W4A16 tensor's group scales [rows, groups]
  // and I64 logical shape, an I4 table's F32 row scales (an entry named NAME#scales that the parser
  // makes from sourceTransform.scaleSource). A companion names the tensor it serves in companion_of.
  std::string scales, shape_tensor, companion_of;
  // An entry the parser adds for bytes the manifest names outside "tensors" (the I4 table's NAME#scales):
  // loaded, bounds-checked and hash-verified with its shard like any tensor, but not one of the
  // manifest's tensors, so `info` and `verify --deep` neither count nor list it.
  bool implied = false;
  std::string role, group;       // DOPPLER's role (matmul, norm, ...) and group (embed, layer.N, head)
  // Conversion record (x-blueshift per tensor); empty for DOPPLER manifests.
  std::string source_dtype;      // dtype in the checkpoint
  std::string requested_dtype;   // what the quantization policy asked for
  std::string fallback;          // why the stored dtype differs from the requested one
};

struct Manifest {
  int version = 1;
  std::string model_id, model_type, quantization;
  std::string hash_algorithm = "sha256";
  std::vector<ShardInfo> shards;
  std::vector<TensorEntry> tensors;  // sorted by (first shard, offset): the order loading delivers them
  // The model description: x-blueshift.config when present, else mapped from DOPPLER's
  // architecture/inference blocks. Empty when that is impossible; config_error says why.
  std::optional<ModelConfig> config;
  std::string config_error;
  nlohmann::json tokenizer;          // as in the file (null when absent)
  nlohmann::json metadata;           // as in the file (object)
  nlohmann::json quantization_info;  // as in the file (object or null)
  std::vector<int32_t> eos_ids;
  uint64_t total_size = 0;           // sum of raw shard sizes

  const TensorEntry* find(std::string_view name) const;  // by HF or internal name
  // The model config, or bs::Error(input) with config_error.
  const ModelConfig& model_config() const;
};

// Parses and validates a manifest. `label` names the file in messages.
Manifest parse_manifest(std::string_view text, const std::string& label);
Manifest parse_manifest_json(const nlohmann::json& j, const std::string& label);
Manifest read_manifest(const std::filesystem::path& model_dir);

// The manifest as JSON, DOPPLER's fields first, then blueshift's extension. Needs m.config.
nlohmann::ordered_json manifest_to_json(const Manifest& m);
void write_manifest(const Manifest& m, const std::filesystem::path& file);

// DOPPLER's architecture and inference blocks for a config, and back (doppler_config.cpp).
nlohmann::ordered_json doppler_architecture(const ModelConfig& c);
nlohmann::ordered_json doppler_inference(const ModelConfig& c);
ModelConfig config_from_doppler(const nlohmann::json& manifest, const std::string& label);

// Expected bytes of a tensor: for Layout::row, rows of the last dimension each padded to whole blocks;
// for flat, all elements in whole blocks; for col (2-D only), the columns as padded rows. nullopt on
// overflow, a negative dimension, or a blocked scalar.
std::optional<uint64_t> tensor_bytes(DType t, const std::vector<int64_t>& shape, Layout layout = Layout::row);

// Bytes of one row (the last dimension) of a row-layout tensor, padding included.
inline uint64_t tensor_row_bytes(const TensorEntry& t) {
  return t.shape.empty() ? traits(t.dtype).block_bytes : padded_row_bytes(t.dtype, uint64_t(t.shape.back()));
}

}  // namespace bs
