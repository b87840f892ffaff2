// The exporter core: from a model's final hidden state and the Vulkan reference to a CSL bundle with
// a sealed proof.json. It knows nothing of the engine; cmd_export_csl.cpp fills HeadExportInput
// (through run_model_for_export, model_source.h) and tests fill it with synthetic data.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/csl/proof.h"
#include "runtime/model/config.h"

namespace bs::csl {

// Everything the exporter needs from one Vulkan run over a prompt. The engine must supply:
struct HeadExportInput {
  ModelConfig cfg;                  // dim, vocab, norm_eps, norm_offset, final_softcap (must be 0), arch
  // model identity (from the RDRR manifest)
  std::string manifest_sha256;      // SHA-256 of the manifest file, hex
  std::vector<ShardHash> shards;    // every shard's file name and SHA-256 as the manifest lists them
  // what ran
  std::string prompt;               // the prompt text ("" when ids were given directly)
  std::vector<int32_t> prompt_ids;  // token ids fed to the model
  std::string device_name;          // Vulkan device (VkPhysicalDeviceProperties::deviceName)
  // model state at the last prompt position
  std::vector<float> hidden;        // [dim] final hidden state BEFORE the final norm
  std::vector<float> norm_weight;   // [dim] final norm weight as stored (no 1 + w applied)
  // the output head, for the selected tokens only
  std::vector<int32_t> tokens;                       // selected token ids, each < cfg.vocab
  std::vector<std::vector<uint16_t>> head_rows_f16;  // [tokens][dim] lm_head rows as f16 bits
                                                     // (dequantize Q4_K/Q8_0/BF16 rows, round to f16)
  // the Vulkan reference
  std::vector<float> reference_logits;  // [tokens] logits of the selected tokens (lm_head plan)
  std::vector<float> reference_normed;  // [dim] final-norm output (rmsnorm plan; optional otherwise)
};

struct ExportOptions {
  std::string kernel = "lm_head";   // a name from kernel_table()
  int grid_width = 0;               // PE columns
  int grid_height = 0;              // PE rows
  int tile_width = 0;               // 0: ceil(dim / width) rounded up to even
  double tolerance = 0;             // 0: the kernel's default
  std::filesystem::path out_dir;
  bool overwrite = false;           // replace an existing bundle in out_dir
};

struct ExportResult {
  Proof proof;                      // as written (sealed)
  std::filesystem::path proof_path;
};

// Validates the input (sizes, finite values, token ids), plans, emits every file, emulates the plan,
// and writes proof.json last. Throws bs::Error naming the field or flag on bad input. The emulation
// may miss the tolerance: the bundle is still written and result.proof.passed says so.
ExportResult export_bundle(const HeadExportInput& in, const ExportOptions& opt);

// Recomputes every file record of proof.files from the bundle directory and re-seals proof.json.
// For tools and tests that edit a bundle on purpose; verify-proof never calls it.
void reseal_bundle(const std::filesystem::path& dir);

// Reads a whole file; throws bs::Error naming it.
std::string read_file_bytes(const std::filesystem::path& path);
// Writes a file (replacing it); throws bs::Error naming it.
void write_file_bytes(const std::filesystem::path& path, std::string_view bytes);

}  // namespace bs::csl
