// Where the exporter's input comes from: one Vulkan run of the model over a prompt.
//
// run_model_for_export is the single seam between `blueshift export-csl` and the model engine. It
// must: load the RDRR model (verifying shard hashes), tokenize the prompt (or take the ids), run the
// prefill on Vulkan, and return, at the last prompt position, the final hidden state before the
// final norm, the final norm weight, the f16 lm_head rows of the selected tokens, and the logits
// (and, for the rmsnorm plan, the final-norm output) the engine computed — see HeadExportInput.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/csl/exporter.h"

namespace bs::csl {

struct ExportArgs {
  std::string model_dir;             // --model
  std::string prompt;                // --prompt (exclusive with prompt_ids)
  std::vector<int32_t> prompt_ids;   // --prompt-tokens
  std::vector<int32_t> tokens;       // --tokens: ids whose logits are exported
  std::string kernel = "lm_head";    // --kernel
};

// Throws bs::Error naming the model directory or flag on bad input; gpu errors when no Vulkan device.
HeadExportInput run_model_for_export(const ExportArgs& args);

}  // namespace bs::csl
