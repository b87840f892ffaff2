// proof.json: what ran here (model identity, prompt, Vulkan reference), what was generated (every
// file with its SHA-256, the CSL plan) and how they agree (host emulation of the exact tiled plan vs
// the reference), plus device status, pending until a trace comes back.
//
// The document is sealed: "proof_sha256" is the SHA-256 of the document's canonical JSON (sorted
// keys, compact, without that field). It detects edits, not forgery: anyone can recompute it.
// parse_proof() treats the text as untrusted: every field is type-checked and bounded.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/csl/plan.h"

namespace bs::csl {

inline constexpr int kProofSchemaVersion = 1;
inline constexpr std::string_view kProofSchema = "blueshift.csl-proof";

struct ShardHash {
  std::string file;    // shard file name in the model directory
  std::string sha256;  // SHA-256 of that file as stored (a .zst shard: of the compressed file)
};

struct TensorDigest {
  std::string dtype;            // "f32"
  std::vector<int64_t> shape;   // [dim]
  std::string sha256;           // of the raw little-endian values
  std::vector<float> preview;   // the first few values
};

struct FileRecord {
  std::string name;    // relative to the bundle directory, no '/'
  std::string role;    // csl | host | input | trace
  uint64_t bytes = 0;
  std::string sha256;
};

// Status of one kind of device run (simulator or hardware), updated by verify-proof --trace.
struct DeviceStatus {
  std::string status = "pending";  // pending | match | no_match
  int revision = 0;                // proof revision that recorded it
  std::string trace;               // the trace file inside the bundle
  double max_abs_error_vs_reference = 0;
  double max_abs_error_vs_emulation = 0;
};

struct Proof {
  int schema_version = kProofSchemaVersion;
  int revision = 1;
  // model identity
  std::string manifest_sha256;
  std::vector<ShardHash> shards;
  std::string arch;
  int64_t vocab = 0;
  // what was run
  std::string prompt;
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> tokens;      // selected token ids (lm_head)
  std::string blueshift_version;
  std::string vulkan_device;
  // reference output from the Vulkan run
  TensorDigest hidden;
  std::vector<float> reference;     // logits of the selected tokens, or the normalized state
  // what was generated
  Plan plan;
  std::vector<FileRecord> files;
  // host emulation of the plan vs the reference
  std::vector<float> emulated;
  double max_abs_error = 0;
  double tolerance = 0;
  bool passed = false;
  DeviceStatus simulator, hardware;
  nlohmann::json history = nlohmann::json::array();  // earlier revisions: {revision, proof_sha256, ...}

  // Filled by parse_proof.
  std::string proof_sha256;         // as written in the file
  bool seal_ok = false;             // proof_sha256 matches the content
};

// Serializes and seals (sets proof.proof_sha256).
std::string write_proof(Proof& proof);
// Parses untrusted text; throws bs::Error(input) naming the field. Does not judge the seal, it
// reports it (seal_ok).
Proof parse_proof(std::string_view text);
// SHA-256 of the canonical form of a proof document without its "proof_sha256" field.
std::string proof_seal(nlohmann::json doc);

}  // namespace bs::csl
