// Synthetic exporter input for the CSL tests: a random hidden state, a random f16 output head of a
// full vocabulary (>= 32k rows, generated row by row on demand) from which the selected tokens' rows
// are taken, and a float64 CPU
// reference of the untiled head (RMSNorm, then dot products without f16 rounding of the activation).
// These exercise the exporter core alone; test_cli_models.cpp runs the real engine through the CLI.
#pragma once
#include <cstdint>
#include <vector>

#include "cli/csl/exporter.h"

namespace bs::csl::testing {

struct SynthSpec {
  int dim = 320;
  int vocab = 32768;
  int n_tokens = 5;
  bool norm_offset = false;
  float norm_eps = 1e-6f;
};

struct Synth {
  HeadExportInput input;
  uint64_t head_seed = 0;  // row t of the synthetic [vocab][dim] head is synth_head_row(head_seed, t, dim)
};

// Row `token` of a synthetic f16 head: a pure function of (seed, token), so a 32k-row head exists
// without materializing it; only the selected rows are ever generated.
std::vector<uint16_t> synth_head_row(uint64_t seed, int32_t token, int dim);

// Tokens always include 0 and vocab - 1 (the edges of the head); the rest are random.
Synth make_synth(const SynthSpec& spec);

// float64 reference of the untiled math, from an input's own fields.
std::vector<double> reference_logits_f64(const HeadExportInput& in);
std::vector<double> reference_normed_f64(const HeadExportInput& in);

}  // namespace bs::csl::testing
