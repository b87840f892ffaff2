// The persistent decode kernel (runtime/model/persistent.cpp) against the per-phase decode path on
// synthesized models: the same tokens decoded one by one through both, logits compared row by row.
// On lavapipe the grid is 1 (one workgroup needs no other to make progress, and the barrier never
// waits): lavapipe runs a dispatch's workgroups on its thread pool, so 2 are resident at once, but it
// does not honour the legacy memory barriers across them (grid-2 decode went wrong in some steps; see
// decode_persistent.comp). Grids > 1 are checked on GPUs (benchmarks/results/2026-11-24-h100-persistent.md).
// Several context chunks per head (the partial-softmax merge) are exercised on the one workgroup.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "runtime/gpu/gpu.h"
#include "runtime/model/model.h"
#include "runtime/model/persistent.h"
#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Case {
  const char* name;
  json config;
  const char* quant;  // nullptr: the HF checkpoint itself (F16 matrices)
  std::vector<std::pair<const char*, const char*>> env;  // set while the persistent model is created
  int positions = 70;  // past 2 chunks of the 32-position minimum and the sliding window
  // Worst row's rel L2 against the per-phase path. Q4_K rows on packed f16 (decode_persistent_h16, the default
  // where a layer has Q4_K) round x to f16 and sum in f16: 2.0e-3 to 4.3e-3 on lavapipe over 30 runs, x's rounding
  // alone 1.3e-3. Their top-1 may differ where these random models' logits nearly tie: 0 to 2 of 70 positions in
  // those runs (the f32 forms: at most 1), so they may miss 4 (kHalfTol's cases).
  double tol = 1e-3;
  // Column passes of the down projection expected for these dtypes (PersistentDecode::down_passes; unchecked if empty).
  std::map<std::string, uint32_t> passes = {};
  // Whether the all-Q4_K phases take RMSNorm straight into the slots (PersistentDecode::norm_slots; unchecked if -1).
  int norm_slots = -1;
  // Whether the kernel ends with the output norm in the Q6_K head's int8 form (PersistentDecode::head_norm; where the
  // device has integer dot products; unchecked if -1).
  int head_norm = -1;
};
constexpr double kHalfTol = 1e-2;
size_t top1_misses(double tol) { return tol >= kHalfTol ? 4 : 1; }

json llama(int hidden, int ffn, int heads, int kv, int head_dim) {
  return {{"model_type", "llama"}, {"architectures", {"LlamaForCausalLM"}}, {"hidden_size", hidden},
          {"intermediate_size", ffn}, {"num_attention_heads", heads}, {"num_key_value_heads", kv},
          {"head_dim", head_dim}, {"num_hidden_layers", 2}, {"vocab_size", 300}, {"max_position_embeddings", 2048},
          {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", true}, {"hidden_act", "silu"},
          {"rope_parameters", {{"rope_type", "llama3"}, {"rope_theta", 500000.0}, {"factor", 32.0},
                               {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                               {"original_max_position_embeddings", 64}}}};
}

std::vector<Case> cases() {
  json qwen2 = {{"model_type", "qwen2"}, {"architectures", {"Qwen2ForCausalLM"}}, {"hidden_size", 200},
                {"intermediate_size", 344}, {"num_attention_heads", 5}, {"num_key_value_heads", 1},
                {"head_dim", 40}, {"num_hidden_layers", 2}, {"vocab_size", 317}, {"max_position_embeddings", 512},
                {"rms_norm_eps", 1e-6}, {"rope_theta", 10000.0}, {"tie_word_embeddings", true}, {"hidden_act", "silu"}};
  json phi3 = {{"model_type", "phi3"}, {"architectures", {"Phi3ForCausalLM"}}, {"hidden_size", 256},
               {"intermediate_size", 320}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
               {"num_hidden_layers", 2}, {"vocab_size", 290}, {"max_position_embeddings", 4096},
               {"original_max_position_embeddings", 4096}, {"rms_norm_eps", 1e-5}, {"hidden_act", "silu"},
               {"rope_theta", 10000.0}, {"sliding_window", 7}, {"tie_word_embeddings", false}};
  return {
      // Odd F16 shapes: hidden 136, head_dim 36, GQA 2/1, FFN 344.
      {"f16_odd", llama(136, 344, 2, 1, 36), nullptr, {}},
      // ... with 3 context chunks per head, merged in the o-projection's staging.
      {"f16_splits", llama(136, 344, 2, 1, 36), nullptr, {{"BLUESHIFT_PERSISTENT_SPLITS", "3"}}},
      // ... 6 chunks at 200 positions: the merge folds them in two rounds of 4 (kMF).
      {"f16_splits6", llama(136, 344, 2, 1, 36), nullptr, {{"BLUESHIFT_PERSISTENT_SPLITS", "6"}}, 200},
      {"q8_0", llama(160, 224, 5, 1, 32), "q8_0", {}},
      // Q4_K with Q6_K where q4_k_m puts it, 2 chunks per head.
      {"q4_k_m", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_SPLITS", "2"}}, 70, kHalfTol, {}, 1, 1},
      // ... with its RMSNorms into the floats first, then the slots (NORM_SLOTS 0; the default, 2, takes every phase
      // with a Q4_K matrix straight into the slots where dim's 16 slots fit the workgroup, P1's floats beside them in
      // the layers with a Q6_K v: here layer 1 of 2).
      {"q4_k_m_norm_floats", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_NORM_SLOTS", "0"}}, 70,
       kHalfTol, {}, 0},
      // ... with only the all-Q4_K phases' norms straight into the slots (NORM_SLOTS 1: the Q6_K v layers' P1 through
      // the floats first).
      {"q4_k_m_norm_slots_pure", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_NORM_SLOTS", "1"}}, 70,
       kHalfTol, {}, 1},
      // Q4_K rows of 5 blocks (40 parts: 5 per lane on lavapipe's 8 lanes, the last step partial), with
      // one fence per workgroup at the grid barriers (NVIDIA's default; every invocation fences elsewhere).
      // Its Q6_K head's norm at the kernel's end takes 80 slots, past a grid of 64 invocations on lavapipe.
      {"q4_k_wide", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_FENCE_ALL", "0"}}, 70, kHalfTol, {},
       -1, 1},
      // ... with that norm in a dispatch of its own (rms_norm_q8x) after the kernel.
      {"q4_k_wide_head_rms", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_HEAD_NORM", "0"}}, 70,
       kHalfTol, {}, -1, 0},
      // ... an FFN longer than lavapipe's staging area (4368 floats of 32 KiB): the down projections take the whole
      // shared array in one pass, layer 0's Q4_K one its f16 slots alone (47 blocks of 256), layer 1's Q6_K one its
      // floats alone (7076) ...
      {"q4_k_passes", llama(256, 6144, 4, 2, 64), "q4_k_m", {}, 70, kHalfTol, {{"Q4_K", 1}, {"Q6_K", 1}}},
      // ... and longer than the floats there: both on their f16 slots in two passes (49 blocks: 25 + 24), the second
      // again from record 0.
      {"q4_k_slot_passes", llama(256, 12544, 4, 2, 64), "q4_k_m", {}, 70, kHalfTol, {{"Q4_K", 2}, {"Q6_K", 2}}},
      // The float form (BLUESHIFT_Q4K_DOT=float), held to 1e-3.
      {"q4_k_m_float", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_SPLITS", "2"}, {"BLUESHIFT_Q4K_DOT", "float"}}},
      {"q4_k_wide_float", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_Q4K_DOT", "float"}}},
      // Q4_K rows on integer dot products (decode_persistent_i8, BLUESHIFT_Q4K_DOT=int) against the float
      // per-phase path: x's two-level int8 error (<= 2^-16 of each 16 values' largest) stays inside 1e-3.
      {"q4_k_m_int", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_SPLITS", "2"}, {"BLUESHIFT_Q4K_DOT", "int"}}},
      {"q4_k_wide_int", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_Q4K_DOT", "int"}}},
      // ... with an FFN longer than the int8 staging holds on lavapipe (4368 floats of 32 KiB): each down projection
      // in one pass over the whole shared array, layer 0's Q4_K one on its int8 slots alone, layer 1's Q6_K one on its
      // floats alone (7076).
      {"q4_k_passes_int", llama(256, 6144, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_Q4K_DOT", "int"}}},
      // ... the high nibbles in place in mixed-signedness dot products (decode_persistent_i8mx).
      {"q4_k_m_intmx", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_Q4K_DOT", "intmx"}}},
      // The residual rows read after the o and down projections' dot products, not before (the default).
      {"q4_k_wide_x_late", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_X_EARLY", "0"}}, 70, kHalfTol},
      // The gate/up phase's Q4_K tasks through dot2 one at a time (STREAM 0; the default streams them, 5 steps a task
      // here), and streamed with the first loads after the grid barrier, before the staging (EARLY 1; the default
      // issues them between the barrier's arrival and its wait).
      {"q4_k_wide_no_stream", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_STREAM", "0"}}, 70, kHalfTol},
      {"q4_k_wide_early1", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_EARLY", "1"}}, 70, kHalfTol},
      // Grid-stride tasks dealt a workgroup's subgroups (or teams) at a time (SPREAD 0; the default deals them across
      // the workgroups first), with TEAM 2's column passes too.
      {"q4_k_wide_no_spread", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_SPREAD", "0"}}, 70, kHalfTol},
      // Grid barriers released by the last arriver through a word of their own (POLL_COUNT 0; the default polls the
      // arrival count).
      {"q4_k_m_release_word", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_POLL_COUNT", "0"}}, 70,
       kHalfTol},
      // The layer table read from binding 0 at each use (TBL_SMEM 0; the default copies the running layer's row into
      // shared memory at the grid barrier before the layer).
      {"q4_k_m_tbl_binding", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_TBL_SMEM", "0"}}, 70,
       kHalfTol},
      // The q/k/v tasks in plain order (QKV_ORDER 0; the default deals q tasks to the places of the first round whose
      // subgroups take a second).
      {"q4_k_m_qkv_plain_order", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_QKV_ORDER", "0"}}, 70,
       kHalfTol},
      // No K/V rows touched in the wait after q/k/v (TOUCH 0); and 16 touches a lane 512 bytes apart, which reach
      // past the rows' end even from one subgroup of 8 lanes (8 x 16 x 512 = 64 KiB against the 35 KiB of 70 rows of
      // K and V): the bound on the touches' count is what stops them there.
      {"q4_k_m_no_touch", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_TOUCH", "0"}}, 70, kHalfTol},
      {"q4_k_m_touch_past_end", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_PERSISTENT_TOUCH", "16"}, {"BLUESHIFT_PERSISTENT_TOUCH_STEP", "512"}}, 70, kHalfTol},
      // The o projection as its own phase after a grid barrier (FOLD_O 0; the default folds it into the attention
      // phase where W_o is Q4_K), in the f16 and float forms; and folded with 3 chunks a head and W_o's rows in 5
      // parts a group (heads of 32: 8 a group), and with two groups (8 heads of 64) in 3 parts each.
      {"q4_k_m_no_fold", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_PERSISTENT_SPLITS", "2"}, {"BLUESHIFT_PERSISTENT_FOLD_O", "0"}}, 70, kHalfTol},
      {"q4_k_m_float_no_fold", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_Q4K_DOT", "float"}, {"BLUESHIFT_PERSISTENT_FOLD_O", "0"}}},
      {"q4_k_fold_hd32", llama(256, 512, 8, 2, 32), "q4_k_m",
       {{"BLUESHIFT_PERSISTENT_SPLITS", "3"}, {"BLUESHIFT_PERSISTENT_FOLD_PARTS", "5"}}, 70, kHalfTol},
      {"q4_k_fold_groups2", llama(512, 512, 8, 4, 64), "q4_k_m",
       {{"BLUESHIFT_PERSISTENT_SPLITS", "2"}, {"BLUESHIFT_PERSISTENT_FOLD_PARTS", "3"}}, 70, kHalfTol},
      {"q4_k_passes_team2_no_spread", llama(256, 6144, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_PERSISTENT_TEAM", "2"}, {"BLUESHIFT_PERSISTENT_SPREAD", "0"}}, 70, kHalfTol},
      // A width that is no power of 2 (20 subgroups of 8 on lavapipe, as 640 gives 20 of 32 on NVIDIA): the attention
      // merge's one element an invocation and the attention items' position blocks of 40.
      {"q4_k_wide_wg160", llama(1280, 512, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_WG", "160"}}, 70, kHalfTol},
      // Teams of subgroups sharing an o or down task's columns (add_matvec's TEAM; lavapipe's 8 subgroups): with 4,
      // the FFN's 3 blocks leave member 0 without columns; with 2, two column passes a team, and F16 rows of 72 and
      // 344 columns (one block), all with member 1.
      {"q4_k_m_team4", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_TEAM", "4"}}, 70, kHalfTol},
      {"q4_k_passes_team2", llama(256, 6144, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_TEAM", "2"}}, 70, kHalfTol},
      {"f16_odd_team2", llama(136, 344, 2, 1, 36), nullptr, {{"BLUESHIFT_PERSISTENT_TEAM", "2"}}},
      // Attention items of several blocks (200 positions in one chunk a head: blocks of wg / TPP, 96-192 on lavapipe),
      // the online softmax carried across them: at the default's TPP 2 (head_dim 64), at TPP 4, and at TPP 1.
      {"q4_k_m_long_items", llama(256, 768, 4, 2, 64), "q4_k_m", {{"BLUESHIFT_PERSISTENT_SPLITS", "1"}}, 200, kHalfTol},
      {"q4_k_m_tpp4", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_PERSISTENT_ATTN_TPP", "4"}, {"BLUESHIFT_PERSISTENT_SPLITS", "1"}}, 200, kHalfTol},
      {"f16_odd_tpp1", llama(136, 344, 2, 1, 36), nullptr,
       {{"BLUESHIFT_PERSISTENT_ATTN_TPP", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "1"}}, 200},
      {"qwen2_bias", qwen2, nullptr, {}},
      {"phi3_sliding", phi3, nullptr, {{"BLUESHIFT_PERSISTENT_SPLITS", "2"}}},
      // The long-context form (attention items of a kv head's query heads together, ATTN_GQA), taken from position 1
      // (BLUESHIFT_LONG_DECODE_FROM): 2 heads of 64 an item, in 2 chunks a kv head, in 3 (LONG_CHUNKS), and in 6 with
      // the o projection not folded; 4 heads of 32 (G 4; one fold group of 8 heads takes two items' counts); odd F16 heads
      // of 36 in 6 chunks at 200 positions (the staging area's float form, the merge in two rounds); and the sliding
      // window.
      {"q4_k_m_long", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_LONG_DECODE_FROM", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "1"}}, 70, kHalfTol},
      {"q4_k_m_long_no_fold", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_LONG_DECODE_FROM", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "3"}, {"BLUESHIFT_PERSISTENT_FOLD_O", "0"}},
       70, kHalfTol},
      {"q4_k_m_long_chunks3", llama(256, 768, 4, 2, 64), "q4_k_m",
       {{"BLUESHIFT_LONG_DECODE_FROM", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "1"},
        {"BLUESHIFT_PERSISTENT_LONG_CHUNKS", "3"}},
       70, kHalfTol},
      {"q4_k_m_long_g4", llama(256, 512, 8, 2, 32), "q4_k_m",
       {{"BLUESHIFT_LONG_DECODE_FROM", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "2"}}, 70, kHalfTol},
      {"f16_long_splits6", llama(136, 344, 2, 1, 36), nullptr,
       {{"BLUESHIFT_LONG_DECODE_FROM", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "3"}}, 200},
      {"phi3_sliding_long", phi3, nullptr, {{"BLUESHIFT_LONG_DECODE_FROM", "1"}, {"BLUESHIFT_PERSISTENT_SPLITS", "2"}}},
  };
}

// n token ids drawn from a vocabulary of `vocab` (fresh each run: rng()).
std::vector<int32_t> random_ids(int n, uint64_t vocab) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(int32_t(rng()() % vocab));
  return ids;
}

// The config of the case named `name`.
json case_config(const std::string& name) {
  for (const Case& c : cases())
    if (name == c.name) return c.config;
  throw std::out_of_range("no test case named " + name);
}

struct ScopedEnv {
  explicit ScopedEnv(const std::vector<std::pair<const char*, const char*>>& e) : env(e) {
    for (auto [k, v] : env) setenv(k, v, 1);
  }
  ~ScopedEnv() {
    for (auto [k, v] : env) unsetenv(k);
  }
  std::vector<std::pair<const char*, const char*>> env;
};

// Logits of every step of a token-by-token decode (position = step).
std::vector<std::vector<float>> decode_all(model::Model& m, const std::vector<int32_t>& ids) {
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < ids.size(); ++i) out.push_back(m.decode(ids[i], int32_t(i)));
  return out;
}

gpu::Device& device() {
  static std::unique_ptr<gpu::Device> d = std::make_unique<gpu::Device>();
  return *d;
}

class Persistent : public ::testing::TestWithParam<size_t> {};

TEST_P(Persistent, DecodeMatchesPerPhaseDispatches) {
  const auto c = cases()[GetParam()];
  TempDir tmp;
  auto r = synth_into(tmp.path, c.config.dump(), {"--seed", "11"});
  fs::path dir = tmp / "hf";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (c.quant) {
    fs::path out = tmp / "rdrr";
    auto cv = run_blueshift({"convert", dir.string(), out.string(), "--quant", c.quant});
    ASSERT_EQ(cv.exit_code, 0) << cv.err;
    dir = out;
  }
  const int vocab = c.config["vocab_size"];
  const std::vector<int32_t> ids = random_ids(c.positions, uint64_t(vocab));
  model::ModelOptions opts;
  opts.max_ctx = std::max(96, c.positions + 8);
  opts.max_batch = 8;
  auto src = model::open_model(dir);

  std::vector<std::vector<float>> fast, slow;
  {
    auto env_list = c.env;
    env_list.push_back({"BLUESHIFT_PERSISTENT", "1"});  // off by default on CPU devices and small dims
    ScopedEnv env(env_list);
    model::Model m(device(), src, opts);
    std::string why;
    auto pk = model::PersistentDecode::create(m, &why);
    ASSERT_TRUE(pk) << "persistent decode not taken: " << why;
    const std::string dot = std::getenv("BLUESHIFT_Q4K_DOT") ? std::getenv("BLUESHIFT_Q4K_DOT") : "half";
    const bool q4k = c.quant && std::string(c.quant) == "q4_k_m";  // the variants serve layers with Q4_K rows
    std::string kernel = !q4k                                        ? "decode_persistent"
                         : dot == "half"                             ? "decode_persistent_h16"
                         : dot == "float" || !device().has_int_dot() ? "decode_persistent"
                         : dot == "int"                              ? "decode_persistent_i8"
                                                                     : "decode_persistent_i8mx";
    // q4_k_m's W_o is Q4_K: the o projection folds into the attention phase where the device adds floats atomically
    // (lavapipe does), unless the case turns it off; the integer forms have no folded variant.
    const char* fold = std::getenv("BLUESHIFT_PERSISTENT_FOLD_O");
    if (q4k && kernel.find("_i8") == std::string::npos && device().has_atomic_float_add() &&
        !(fold && std::string(fold) == "0"))
      kernel += "_fold";
    EXPECT_EQ(pk->kernel(), kernel);
    if (std::ranges::any_of(c.env, [](const auto& e) { return std::string(e.first) == "BLUESHIFT_LONG_DECODE_FROM"; })) {
      EXPECT_TRUE(pk->has_long()) << c.name;
      EXPECT_EQ(m.long_context_from(), 1) << c.name;
    }
    for (const auto& [dtype, passes] : c.passes) {
      auto it = pk->down_passes().find(dtype);
      ASSERT_NE(it, pk->down_passes().end()) << c.name << ": no " << dtype << " down projection";
      EXPECT_EQ(it->second, passes) << c.name << ": " << dtype << " down projection passes";
    }
    if (c.norm_slots >= 0) {
      EXPECT_EQ(pk->norm_slots(), c.norm_slots != 0) << c.name << ": norm_slots";
    }
    if (c.head_norm >= 0) {
      EXPECT_EQ(pk->head_norm(), c.head_norm != 0 && device().has_int_dot()) << c.name << ": head_norm";
    }
    if (pk->head_norm()) {
      // The head's int8 x goes out through a binding the kernel writes, so the host's hazard tracker orders the head's
      // dispatch after the kernel. (lavapipe runs dispatches in order and would not show a missing barrier: on the
      // H200 a kernel writing it through an address let the head read it early.)
      const auto& bindings = m.kernels().get(pk->kernel(), pk->spec()).bindings();
      auto b7 = std::ranges::find_if(bindings, [](const auto& b) { return b.set == 0 && b.binding == 7; });
      ASSERT_NE(b7, bindings.end()) << c.name;
      EXPECT_TRUE(b7->writes) << c.name;
      auto entries = pk->entries();
      auto e7 = std::ranges::find_if(entries, [](const auto& e) { return e.binding == 7; });
      ASSERT_NE(e7, entries.end()) << c.name;
      EXPECT_EQ(e7->buffer->label(), "x q8") << c.name << ": binding 7 is not the head's input";
    }
    fast = decode_all(m, ids);
  }
  {
    ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"}});
    model::Model m(device(), src, opts);
    ASSERT_FALSE(model::PersistentDecode::create(m));
    slow = decode_all(m, ids);
  }
  double worst = 0;
  size_t top1 = 0;
  for (size_t s = 0; s < ids.size(); ++s) {
    ASSERT_EQ(fast[s].size(), size_t(vocab));
    double num = 0, den = 0;
    for (int i = 0; i < vocab; ++i) {
      double d = double(fast[s][i]) - slow[s][i];
      num += d * d;
      den += double(slow[s][i]) * slow[s][i];
    }
    worst = std::max(worst, std::sqrt(num / den));
    top1 += std::max_element(fast[s].begin(), fast[s].end()) - fast[s].begin() ==
            std::max_element(slow[s].begin(), slow[s].end()) - slow[s].begin();
  }
  std::printf("%s: persistent vs per-phase decode, worst row rel L2 %.2e, top-1 %zu/%zu\n", c.name, worst, top1, ids.size());
  EXPECT_LE(worst, c.tol) << c.name;
  EXPECT_GE(top1, ids.size() - top1_misses(c.tol)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Synth, Persistent, ::testing::Range<size_t>(0, cases().size()),
                         [](const auto& info) { return std::string(cases()[info.param].name); });

// The down projection's pass plan, shared by the kernel and the host (kernels_glsl/persistent.h), at the H200's shapes
// (benchmarks/results/2026-11-30-h200-session32.md) and over every staging size: what a pass stages fits the array.
TEST(PersistentPlan, DownProjectionPasses) {
  using namespace kparams;
  auto passes = [](uint32_t ffn, uint32_t cap) { return (ffn + pk_pass_cols(ffn, cap) - 1) / pk_pass_cols(ffn, cap); };
  // 8B at 640 wide: 5,344 staging floats; 14,336 columns in 3 passes of floats, 1 of slots (56 blocks fill the array).
  EXPECT_EQ(PK_SMEM_WORDS(5344u), 2260u);
  EXPECT_EQ(pk_pass_cols(14336, 5344), 4864u);
  EXPECT_EQ(passes(14336, pk_down_cap(5344, 14336, true, false)), 3u);
  EXPECT_TRUE(pk_down_on_slots(5344, 14336, true, true, kPkQ4K));
  EXPECT_TRUE(pk_down_on_slots(5344, 14336, true, true, kPkQ6K));    // 14,336 floats > 8,504
  EXPECT_FALSE(pk_down_on_slots(5344, 14336, true, false, kPkQ6K));  // the int8 slots: no Q6_K form
  EXPECT_EQ(pk_down_cap(5344, 14336, true, true), 14336u);
  // 1B at 512 wide: 5,664; 8,192 columns in one pass of floats over the whole array (9,124), Q6_K not on slots.
  EXPECT_EQ(pk_smem_floats(5664), 9124u);
  EXPECT_FALSE(pk_down_on_slots(5664, 8192, true, true, kPkQ6K));
  EXPECT_EQ(passes(8192, pk_down_cap(5664, 8192, true, false)), 1u);
  // The float form stages in its sx alone.
  EXPECT_FALSE(pk_down_on_slots(5664, 8192, false, true, kPkQ4K));
  EXPECT_EQ(pk_down_cap(5664, 8192, false, false), 5664u);
  for (uint32_t sh = 256; sh <= 16384; sh += 4) {
    const uint32_t words = PK_SMEM_WORDS(sh), floats = pk_smem_floats(sh);
    ASSERT_LE((floats - 1) / 4 + (floats - 1) / 64 + 1, words) << sh;  // the last float's vec4 (sx_at) is in the array
    ASSERT_GE(floats, sh) << sh;
    ASSERT_LE(pk_down_cap(sh, 1u << 20, true, true) / 256 * kPkSlotRec, words) << sh;  // the slots' records fit
    for (uint32_t ffn : {256u, 4096u, 14336u, 28672u}) {
      const uint32_t cols = pk_pass_cols(ffn, pk_down_cap(sh, ffn, true, true));
      ASSERT_EQ(cols % 256, 0u) << sh << " " << ffn;
      ASSERT_LE(cols, pk_down_cap(sh, ffn, true, true)) << sh << " " << ffn;
    }
  }
}

// ModelOptions::deterministic (`--deterministic`) keeps the o projection as a phase of its own: no float atomics
// add into x in any order, so decode is bitwise the same from run to run. Without it, the fold is taken where the
// device adds floats atomically (lavapipe does).
TEST(PersistentFold, DeterministicKeepsTheOPhase) {
  TempDir tmp;
  auto r = synth_into(tmp.path, llama(256, 768, 4, 2, 64).dump(), {"--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto cv = run_blueshift({"convert", (tmp / "hf").string(), (tmp / "rdrr").string(), "--quant", "q4_k_m"});
  ASSERT_EQ(cv.exit_code, 0) << cv.err;
  ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_PERSISTENT", "1"}});
  for (bool deterministic : {false, true}) {
    model::ModelOptions opts;
    opts.max_ctx = 32;
    opts.deterministic = deterministic;
    model::Model m(device(), model::open_model(tmp / "rdrr"), opts);
    ASSERT_NE(m.persistent(), nullptr) << m.persistent_why();
    const bool fold = m.persistent()->kernel().ends_with("_fold");
    if (deterministic) {
      EXPECT_FALSE(fold) << m.persistent()->kernel();
    } else if (device().has_atomic_float_add()) {
      EXPECT_TRUE(fold) << m.persistent()->kernel();
    }
  }
}

// A workgroup of more subgroups than the kernel's reductions hold (MAX_SUBGROUPS, 64) is refused with its reason:
// 1024 invocations on lavapipe's subgroups of 8 are 128 (before the check they decoded at rel L2 1.1-1.4).
TEST(PersistentWidth, RefusesMoreSubgroupsThanItsReductionsHold) {
  TempDir tmp;
  auto r = synth_into(tmp.path, llama(64, 128, 2, 1, 32).dump(), {"--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  model::ModelOptions opts;
  opts.max_ctx = 32;
  ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_PERSISTENT", "1"},
                                                                 {"BLUESHIFT_PERSISTENT_WG", "1024"}});
  model::Model m(device(), model::open_model(tmp / "hf"), opts);
  const uint32_t sg = device().subgroupSize(), wg = std::min(1024u, device().adapter().max_workgroup_invocations);
  std::string why;
  auto pk = model::PersistentDecode::create(m, &why);
  if (wg / sg > 64) {
    EXPECT_FALSE(pk);
    EXPECT_NE(why.find("more than the 64 its reductions hold"), std::string::npos) << why;
  } else {
    EXPECT_TRUE(pk) << why;
  }
}

// The per-phase decode's plain Q4_K matvecs (o and down) on integer dot products (BLUESHIFT_Q4K_DOT=int:
// quantize_x_q8 then matvec_q4k_i8) against the float ones: x's error (<= 2^-16 of each 16 values' largest)
// stays inside the 1e-3 the persistent kernel is held to.
TEST(PerPhaseInt8, DecodeMatchesTheFloatMatvecs) {
  if (!device().has_int_dot()) GTEST_SKIP() << device().adapter().name << " has no shaderIntegerDotProduct";
  TempDir tmp;
  auto r = synth_into(tmp.path, llama(256, 768, 4, 2, 64).dump(), {"--seed", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto cv = run_blueshift({"convert", (tmp / "hf").string(), (tmp / "rdrr").string(), "--quant", "q4_k_m"});
  ASSERT_EQ(cv.exit_code, 0) << cv.err;
  const std::vector<int32_t> ids = random_ids(40, 300);
  model::ModelOptions opts;
  opts.max_ctx = 64;
  auto src = model::open_model(tmp / "rdrr");
  std::vector<std::vector<float>> logits[2];
  for (int i = 0; i < 2; ++i) {
    ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"},
                                                                   {"BLUESHIFT_Q4K_DOT", i ? "int" : "float"}});
    model::Model m(device(), src, opts);
    logits[i] = decode_all(m, ids);
  }
  double worst = 0;
  for (size_t s = 0; s < ids.size(); ++s) {
    double num = 0, den = 0;
    for (size_t i = 0; i < logits[0][s].size(); ++i) {
      double d = double(logits[1][s][i]) - logits[0][s][i];
      num += d * d;
      den += double(logits[0][s][i]) * logits[0][s][i];
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  std::printf("per-phase decode, int8 vs float Q4_K matvecs: worst row rel L2 %.2e\n", worst);
  EXPECT_GT(worst, 0.0);  // the int8 path ran
  EXPECT_LE(worst, 1e-3);
}

// The per-phase decode's L2 read-ahead (ModelOptions::prefetch_kb: a stream_read of the next phase's first weights
// after each phase) changes no value: the logits of every step are the same bits with and without it.
TEST(PerPhasePrefetch, LeavesTheLogitsAsTheyWere) {
  TempDir tmp;
  auto r = synth_into(tmp.path, llama(136, 344, 2, 1, 36).dump(), {"--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int32_t> ids = random_ids(12, 300);
  auto src = model::open_model(tmp / "hf");
  std::vector<std::vector<float>> logits[2];
  uint64_t dispatches[2];
  for (int i = 0; i < 2; ++i) {
    ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"}});
    model::ModelOptions opts;
    opts.max_ctx = 32;
    opts.prefetch_kb = i ? 1 : 0;  // 1 KiB a phase (q, k and v share theirs by size)
    model::Model m(device(), src, opts);
    const uint64_t before = device().counters().dispatches;
    logits[i] = decode_all(m, ids);
    dispatches[i] = device().counters().dispatches - before;
  }
  EXPECT_GT(dispatches[1], dispatches[0]) << "no read-ahead was recorded";
  for (size_t s = 0; s < ids.size(); ++s) EXPECT_EQ(logits[0][s], logits[1][s]) << "step " << s;
}

// The per-phase decode's K/V touches (ModelOptions::kv_touch: kv_touch.comp reads a layer's cached rows into L2,
// beside its q, k and v matvecs or before them) change no value: the logits of every step are the same bits in each
// form. One workgroup (256 lanes) takes the 640 touches of a layer at 40 positions in three rounds, so the lanes'
// rounds and the bound at the rows' end both run; the sliding model's window (7) moves the rows' start.
TEST(PerPhaseKvTouch, LeavesTheLogitsAsTheyWere) {
  const json phi3 = case_config("phi3_sliding");
  for (const json& config : {llama(256, 344, 4, 2, 64), phi3}) {
    SCOPED_TRACE(config["model_type"].get<std::string>());
    TempDir tmp;
    auto r = synth_into(tmp.path, config.dump(), {"--seed", "7"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<int32_t> ids = random_ids(40, config["vocab_size"].get<uint32_t>());
    auto src = model::open_model(tmp / "hf");
    std::vector<std::vector<float>> logits[3];
    uint64_t dispatches[3];
    for (int mode = 0; mode < 3; ++mode) {
      ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"},
                                                                     {"BLUESHIFT_KV_TOUCH_WG", "1"}});
      model::ModelOptions opts;
      opts.max_ctx = 64;
      opts.kv_touch = mode;
      model::Model m(device(), src, opts);
      const uint64_t before = device().counters().dispatches;
      logits[mode] = decode_all(m, ids);
      dispatches[mode] = device().counters().dispatches - before;
    }
    EXPECT_GT(dispatches[1], dispatches[0]) << "no touches were recorded";
    EXPECT_EQ(dispatches[2], dispatches[1]);
    for (int mode = 1; mode < 3; ++mode)
      for (size_t s = 0; s < ids.size(); ++s)
        EXPECT_EQ(logits[0][s], logits[mode][s]) << "mode " << mode << ", step " << s;
  }
}

// The per-phase decode's chained dispatches (ModelOptions::chain, chain.glsl: a consumer recorded with no
// barrier, waiting in its shader for its producer's workgroups) change no value: the logits of every step are the same
// bits with none, gate + up -> down, o -> gate + up as well, down -> the next layer's q, k and v as well, and q, k and
// v -> attention -> o as well, and each chained boundary takes a barrier off.
TEST(PerPhaseChain, LeavesTheLogitsAsTheyWere) {
  const json config = llama(256, 344, 4, 2, 64);
  TempDir tmp;
  auto r = synth_into(tmp.path, config.dump(), {"--seed", "9", "--dtype", "f16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int32_t> ids = random_ids(24, config["vocab_size"].get<uint32_t>());
  auto src = model::open_model(tmp / "hf");
  std::vector<std::vector<float>> logits[5];
  uint64_t barriers[5];
  for (int mode = 0; mode < 5; ++mode) {
    ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"}});
    model::ModelOptions opts;
    opts.max_ctx = 64;
    opts.chain = mode;
    model::Model m(device(), src, opts);
    const uint64_t before = device().counters().barriers;
    logits[mode] = decode_all(m, ids);
    barriers[mode] = device().counters().barriers - before;
  }
  const uint64_t layers = config["num_hidden_layers"].get<uint64_t>(), steps = ids.size();
  EXPECT_EQ(barriers[0] - barriers[1], layers * steps) << "gate + up -> down not chained in every layer and step";
  EXPECT_EQ(barriers[1] - barriers[2], layers * steps) << "o -> gate + up not chained in every layer and step";
  EXPECT_EQ(barriers[2] - barriers[3], (layers - 1) * steps) << "down -> the next q, k, v not chained at every layer";
  EXPECT_EQ(barriers[3] - barriers[4], 2 * layers * steps) << "q, k, v -> attention -> o not chained in every layer";
  for (int mode = 1; mode < 5; ++mode)
    for (size_t s = 0; s < ids.size(); ++s)
      EXPECT_EQ(logits[0][s], logits[mode][s]) << "mode " << mode << ", step " << s;
}

// The per-phase decode's long-context recording (Model::long_context_from: attention by kv head, attention_split.comp
// ATTN_GQA) changes no value: every step's logits are the same bits as the short recording's, from position 8 on
// (ModelOptions::long_decode_from), for 2 and 4 query heads a kv head. Where no layer would record differently (one
// query head a kv head; every layer's window shorter than the position), there is no long recording.
TEST(PerPhaseLongContext, LeavesTheLogitsAsTheyWere) {
  for (const json& config : {llama(256, 344, 4, 2, 64), llama(256, 344, 8, 2, 32)}) {
    SCOPED_TRACE(config.dump());
    TempDir tmp;
    auto r = synth_into(tmp.path, config.dump(), {"--seed", "5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<int32_t> ids = random_ids(40, config["vocab_size"].get<uint32_t>());
    auto src = model::open_model(tmp / "hf");
    std::vector<std::vector<float>> logits[2];
    for (int from : {0, 8}) {
      ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"}});
      model::ModelOptions opts;
      opts.max_ctx = 64;
      opts.long_decode_from = from;
      model::Model m(device(), src, opts);
      EXPECT_EQ(m.long_context_from(), from ? from : INT32_MAX);
      logits[from ? 1 : 0] = decode_all(m, ids);
    }
    for (size_t s = 0; s < ids.size(); ++s) EXPECT_EQ(logits[0][s], logits[1][s]) << "step " << s;
  }
  for (const json& config : {llama(256, 344, 4, 4, 64), case_config("phi3_sliding")}) {
    TempDir tmp;
    auto r = synth_into(tmp.path, config.dump(), {"--seed", "5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ScopedEnv env(std::vector<std::pair<const char*, const char*>>{{"BLUESHIFT_NO_PERSISTENT", "1"}});
    model::ModelOptions opts;
    opts.max_ctx = 64;
    opts.long_decode_from = 8;  // phi3_sliding's window is 7
    model::Model m(device(), model::open_model(tmp / "hf"), opts);
    EXPECT_EQ(m.long_context_from(), INT32_MAX) << config.dump();
  }
}

// bench's KV term (Model::kv_read_bytes): a decode step reads each attention layer's K and V over the
// positions it attends to: a sliding layer at most its window, in the cache's element size.
TEST(KvReadBytes, CountsEachLayersWidthWindowAndElementSize) {
  const json phi3 = case_config("phi3_sliding");  // every layer sliding, window 7; 2 layers, kv_dim 2 x 64
  ASSERT_EQ(phi3["sliding_window"], 7);
  TempDir tmp;
  auto r = synth_into(tmp.path, phi3.dump());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto src = model::open_model(tmp / "hf");
  model::ModelOptions opts;
  opts.max_ctx = 32;
  opts.max_batch = 4;
  const double per_position = 2 /* layers */ * 2 /* K, V */ * 128.0 /* kv_dim */;
  {
    model::Model m(device(), src, opts);
    EXPECT_DOUBLE_EQ(m.kv_read_bytes(5), per_position * 2 * 5);
    EXPECT_DOUBLE_EQ(m.kv_read_bytes(50), per_position * 2 * 7);  // the window, not the context
  }
  opts.kv_f32 = true;
  model::Model m(device(), src, opts);
  EXPECT_DOUBLE_EQ(m.kv_read_bytes(50), per_position * 4 * 7);
}

}  // namespace
}  // namespace bs::testing
