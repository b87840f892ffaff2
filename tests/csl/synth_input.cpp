#include "tests/csl/synth_input.h"

#include <cmath>
#include <random>

#include "runtime/base/half.h"
#include "tests/common/testing.h"

namespace bs::csl::testing {

std::vector<double> reference_normed_f64(const HeadExportInput& in) {
  const size_t dim = in.hidden.size();
  double ss = 0;
  for (float h : in.hidden) ss += double(h) * double(h);
  double scale = 1.0 / std::sqrt(ss / double(dim) + double(in.cfg.norm_eps));
  std::vector<double> x(dim);
  for (size_t d = 0; d < dim; ++d)
    x[d] = double(in.hidden[d]) * scale * ((in.cfg.norm_offset ? 1.0 : 0.0) + double(in.norm_weight[d]));
  return x;
}

std::vector<double> reference_logits_f64(const HeadExportInput& in) {
  std::vector<double> x = reference_normed_f64(in);
  std::vector<double> out;
  for (const auto& row : in.head_rows_f16) {
    double acc = 0;
    for (size_t d = 0; d < x.size(); ++d) acc += x[d] * double(half_to_float(row[d]));
    out.push_back(acc);
  }
  return out;
}

std::vector<uint16_t> synth_head_row(uint64_t seed, int32_t token, int dim) {
  std::mt19937_64 row_rng(seed ^ (uint64_t(token) * 0x9e3779b97f4a7c15ull));
  std::normal_distribution<float> nd(0.0f, 0.05f);
  std::vector<uint16_t> row(static_cast<size_t>(dim));
  for (auto& h : row) h = float_to_half(nd(row_rng));
  return row;
}

Synth make_synth(const SynthSpec& spec) {
  auto& rng = bs::testing::rng();
  Synth s;
  HeadExportInput& in = s.input;
  in.cfg.arch = "synthetic";
  in.cfg.dim = spec.dim;
  in.cfg.vocab = spec.vocab;
  in.cfg.norm_eps = spec.norm_eps;
  in.cfg.norm_offset = spec.norm_offset;
  in.manifest_sha256 = std::string(64, 'a');
  in.shards = {{"shard_00000.bin", std::string(64, 'b')}, {"shard_00001.bin", std::string(64, 'c')}};
  in.prompt = "The capital of France is";
  in.prompt_ids = {1, 450, 7483, 310, 3444, 338};
  in.device_name = "synthetic (no Vulkan run)";
  // Residual-stream-like magnitudes; norm weights around 1 (or around 0 with the 1 + w offset).
  in.hidden = bs::testing::random_floats(size_t(spec.dim), -4.0f, 4.0f);
  in.norm_weight = spec.norm_offset ? bs::testing::random_floats(size_t(spec.dim), -0.5f, 0.5f)
                                    : bs::testing::random_floats(size_t(spec.dim), 0.5f, 1.5f);
  s.head_seed = rng();
  std::uniform_int_distribution<int32_t> pick(1, spec.vocab - 2);
  in.tokens = {0};
  while (int(in.tokens.size()) < spec.n_tokens - 1) in.tokens.push_back(pick(rng));
  if (spec.n_tokens > 1) in.tokens.push_back(spec.vocab - 1);
  for (int32_t t : in.tokens) in.head_rows_f16.push_back(synth_head_row(s.head_seed, t, spec.dim));
  for (double v : reference_logits_f64(in)) in.reference_logits.push_back(float(v));
  for (double v : reference_normed_f64(in)) in.reference_normed.push_back(float(v));
  return s;
}

}  // namespace bs::csl::testing
