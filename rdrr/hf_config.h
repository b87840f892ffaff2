// Hugging Face config.json -> ModelConfig. Every architecture quirk is resolved here into the flags of
// ModelConfig; the runtime never sees an architecture name.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/dtype.h"
#include "runtime/model/config.h"

namespace bs {

// model_type values we convert; "gemma3" is the multimodal checkpoint whose text model we take.
const std::vector<std::string>& supported_architectures();

// Which architecture family a config.json describes, after unwrapping a multimodal text_config.
struct HfArch {
  std::string model_type;       // the text model's type: llama, mistral, qwen2, qwen3, gemma3_text
  bool multimodal = false;      // gemma3: tensors live under a language-model prefix
};

// `config` is the parsed config.json, `generation` the parsed generation_config.json (or null).
// `weight_dtype` is the checkpoint's dtype (its embedding's): Gemma multiplies embeddings by
// sqrt(hidden) cast to that dtype, so the scale is rounded the same way here.
// `label` names the file in messages. Throws bs::Error(input) for unsupported or inconsistent configs.
ModelConfig config_from_hf(const nlohmann::json& config, const nlohmann::json* generation, DType weight_dtype,
                           const std::string& label = "config.json");

HfArch hf_arch(const nlohmann::json& config, const std::string& label = "config.json");

// Reads DIR/config.json and DIR/generation_config.json (optional).
nlohmann::json read_json_file(const std::filesystem::path& path);
ModelConfig load_hf_config(const std::filesystem::path& dir, DType weight_dtype);

// ModelConfig <-> JSON, as stored in manifest.json under x-blueshift.config (every field, by name).
nlohmann::ordered_json config_to_json(const ModelConfig& c);
ModelConfig config_from_json(const nlohmann::json& j, const std::string& label);

// Checks the invariants the runtime relies on (positive sizes, GQA divisibility, layer_types length,
// sliding layers have a window). Throws bs::Error naming `label` and the field.
void validate_config(const ModelConfig& c, const std::string& label);

}  // namespace bs
