// The recurrent and conv state of Qwen 3.5's Gated DeltaNet layers through the Model API, on a synthesized
// model (no ../shared): a forward at position 0 starts a new sequence whatever the previous one left in the
// state; a decode step continues exactly where a prefill left off; and prefill split over several forwards
// carries the state between them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/model/model.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]), den += double(b[i]) * b[i];
  return std::sqrt(num / den);
}

TEST(RecurrentState, ResetsAtPositionZeroAndCarriesAcrossForwards) {
  TempDir tmp;
  nlohmann::json cfg = {{"model_type", "qwen3_5_text"}, {"hidden_size", 128}, {"intermediate_size", 192},
                        {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"head_dim", 64},
                        {"num_hidden_layers", 2}, {"vocab_size", 97}, {"max_position_embeddings", 512},
                        {"layer_types", {"linear_attention", "full_attention"}}, {"linear_num_key_heads", 1},
                        {"linear_num_value_heads", 2}, {"linear_key_head_dim", 32}, {"linear_value_head_dim", 24},
                        {"partial_rotary_factor", 0.25}, {"rope_theta", 10000.0}, {"tie_word_embeddings", true}};
  auto r = synth_into(tmp.path, cfg.dump(), {"--seed", "11"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  gpu::Device device;
  model::ModelOptions opts;
  opts.max_ctx = 128;
  opts.max_batch = 8;  // prefills of more than 8 tokens take several forwards
  model::Model m(device, model::open_model(tmp / "hf"), opts);
  std::vector<int32_t> a = {5, 17, 3, 90, 41, 8, 8, 60, 2, 33, 71}, b = {12, 4, 66, 9, 1, 50, 23, 7, 19, 88, 30, 11, 45};

  auto fresh_b = m.prefill(b, 0, false);
  m.prefill(a, 0, false);  // leaves a's state behind
  auto again_b = m.prefill(b, 0, false);
  EXPECT_EQ(again_b, fresh_b) << "a forward at position 0 must not see the previous sequence's state";

  // Decode after a prefill = the last row of one prefill over both (13 tokens: two forwards of <= 8).
  m.prefill(std::span(a).first(10), 0, false);
  auto step = m.decode(a[10], 10);
  auto whole = m.prefill(a, 0, false);
  EXPECT_LT(rel_l2(step, whole), 1e-4);

  // Prefill in forwards of 8 rows = token-by-token decode from position 0.
  std::vector<float> by_steps;
  for (size_t i = 0; i < b.size(); ++i) by_steps = m.decode(b[i], int32_t(i));
  EXPECT_LT(rel_l2(by_steps, fresh_b), 1e-4);
}

}  // namespace
}  // namespace bs::testing
