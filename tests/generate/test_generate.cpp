// The decode loop end to end through the CLI: greedy ids against transformers, one submit per
// generation, real streaming, seeded sampling, and a two-turn chat in a terminal.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "tests/common/testing.h"

namespace bs::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

std::vector<int32_t> parse_ids(const std::string& out) {
  std::vector<int32_t> ids;
  std::istringstream in(out);
  int32_t v;
  while (in >> v) ids.push_back(v);
  return ids;
}

const fs::path& demo_model() { return tiny_llama_q8_model(); }

TEST(Generate, GreedyMatchesTransformersOnSharedModels) {
  BS_REQUIRE_SHARED();
  // As in test_parity: the references' RoPE frequencies went through bfloat16, and Gemma 4 keeps an f32 cache.
  for (const std::string& name : kSharedTinyModels) {
    auto dir = shared_dir() / "data" / "models" / name;
    json ref;
    std::ifstream(dir / "ref.json") >> ref;
    std::vector<int32_t> prompt = ref["prompt"], greedy = ref["greedy"];
    std::vector<std::string> args = {"generate", "--model", dir.string(), "--prompt-tokens", join(prompt), "--temperature", "0",
                                     "--ignore-eos", "--max-tokens", std::to_string(greedy.size())};
    if (name.rfind("gemma4", 0) == 0) args.insert(args.end(), {"--precision", "f32"});
    auto r = run_blueshift(args, {{"BLUESHIFT_ROPE_FREQ_BF16", "1"}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(parse_ids(r.out), greedy) << name;
  }
}

// The decode loop is one submit; the prefill is one per part (the demo model's 2 layers: layer 0, then the rest
// with the head, submitted while it records), or one with BLUESHIFT_PREFILL_SPLIT=0. The ids are the same.
TEST(Generate, OneSubmitForTheWholeDecodeLoop) {
  std::vector<std::string> args = {"generate", "--model", demo_model().string(), "--prompt-tokens", "5,6,7,8",
                                   "--max-tokens", "128", "--ignore-eos", "--temperature", "0"};
  std::string ids;
  for (const char* split : {"1", "0"}) {
    auto r = run_blueshift(args, {{"BLUESHIFT_PREFILL_SPLIT", split}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(generated (\d+) tokens.*submits (\d+) prefill \+ (\d+) decode)")))
        << r.err;
    EXPECT_EQ(m[1], "128");
    EXPECT_EQ(m[2], split == std::string("1") ? "2" : "1");
    EXPECT_EQ(m[3], "1");
    if (ids.empty()) ids = r.out;
    else EXPECT_EQ(r.out, ids) << "the split prefill's greedy ids differ from one command buffer's";
  }
}

// Decode's head with its norm in a dispatch of its own (the default) and folded into the matvec
// (BLUESHIFT_HEAD_NORM_APART=0): the same greedy ids.
TEST(Generate, HeadNormApartAndFoldedAgree) {
  std::vector<std::string> args = {"generate", "--model", demo_model().string(), "--prompt-tokens", "5,6,7,8",
                                   "--max-tokens", "48", "--ignore-eos", "--temperature", "0"};
  auto apart = run_blueshift(args, {{"BLUESHIFT_HEAD_NORM_APART", "1"}});
  auto folded = run_blueshift(args, {{"BLUESHIFT_HEAD_NORM_APART", "0"}});
  ASSERT_EQ(apart.exit_code, 0) << apart.err;
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_EQ(apart.out, folded.out);
}

TEST(Generate, JsonTokensStreamAsTheyArrive) {
  auto r = run_blueshift({"generate", "--model", demo_model().string(), "--prompt", "Once upon a time", "--max-tokens",
                          "64", "--ignore-eos", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<double> t;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto j = json::parse(line);
    ASSERT_TRUE(j.contains("id") && j.contains("text") && j.contains("t_ms")) << line;
    t.push_back(j["t_ms"]);
  }
  ASSERT_EQ(t.size(), 64u);
  // Batches of 16 steps complete one after another: the first token is seen well before the last.
  EXPECT_LT(t.front() * 1.2, t.back()) << "first " << t.front() << " ms, last " << t.back() << " ms";
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
}

TEST(Generate, SeedReproducesAndDifferentSeedsDiffer) {
  auto gen = [&](const char* seed) {
    auto r = run_blueshift({"generate", "--model", demo_model().string(), "--prompt-tokens", "10,11,12",
                            "--max-tokens", "40", "--ignore-eos", "--temperature", "1", "--top-k", "50", "--top-p",
                            "0.95", "--min-p", "0.01", "--repeat-penalty", "1.1", "--seed", seed, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<int32_t> ids;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) ids.push_back(json::parse(line)["id"]);
    return ids;
  };
  auto a = gen("1"), b = gen("1"), c = gen("2");
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Generate, StopsAtEosOnTheGpu) {
  // Greedy with EOS allowed: whatever the model emits, the run ends at max-tokens or right after an EOS.
  auto r = run_blueshift({"generate", "--model", demo_model().string(), "--prompt-tokens", "1,2,3", "--max-tokens", "50",
                          "--temperature", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<int32_t> ids;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) ids.push_back(json::parse(line)["id"]);
  auto eos = std::find(ids.begin(), ids.end(), 2);
  if (eos != ids.end()) EXPECT_EQ(eos + 1, ids.end()) << "tokens after EOS";
  else EXPECT_EQ(ids.size(), 50u);
}

// The two ways the recorded decode loop skips its steps after a stop (conditional rendering where the
// device has it, else gated indirect dispatches) give the same tokens, stop at max-tokens and after an
// EOS, and leave the session where the next turn continues.
// The decode loop's long-context graph (Model::long_context_from), replayed by the batches of 16 steps from position
// 20 on (BLUESHIFT_LONG_DECODE_FROM; 0: never), under both stop mechanisms: the same ids. Seeded sampling, not greedy:
// the demo model's greedy ids repeat one token, and held with the long graph's attention output scaled by 1.3; the
// sampled ids parted from position 23.
TEST(Generate, LongContextGraphGivesTheSameIds) {
  std::vector<std::string> args = {"generate", "--model", demo_model().string(), "--prompt-tokens", "5,6,7,8",
                                   "--max-tokens", "60", "--ignore-eos", "--temperature", "1", "--seed", "7", "--json"};
  std::vector<int32_t> first;
  for (const char* conditional : {"0", "1"})
    for (const char* from : {"0", "20"}) {
      auto r = run_blueshift(args, {{"BLUESHIFT_NO_PERSISTENT", "1"}, {"BLUESHIFT_NO_CONDITIONAL", conditional},
                                    {"BLUESHIFT_LONG_DECODE_FROM", from}});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      std::vector<int32_t> ids;
      std::istringstream in(r.out);
      for (std::string line; std::getline(in, line);) ids.push_back(json::parse(line)["id"]);
      EXPECT_EQ(ids.size(), 60u);
      if (first.empty()) first = ids;
      else EXPECT_EQ(ids, first) << "no conditional " << conditional << ", from " << from;
    }
}

TEST(Generate, BothStopMechanismsAgree) {
  std::vector<std::string> args = {"generate", "--model", demo_model().string(), "--prompt-tokens", "5,6,7", "--max-tokens",
                                   "21", "--temperature", "0", "--json"};
  auto a = run_blueshift(args);
  auto b = run_blueshift(args, {{"BLUESHIFT_NO_CONDITIONAL", "1"}});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto ids = [](const std::string& out) {
    std::vector<int32_t> v;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) v.push_back(json::parse(line)["id"]);
    return v;
  };
  auto ia = ids(a.out);
  EXPECT_EQ(ia, ids(b.out));
  auto eos = std::find(ia.begin(), ia.end(), 2);
  EXPECT_EQ(ia.size(), eos != ia.end() ? size_t(eos - ia.begin() + 1) : 21u);
}

TEST(Generate, BadInputIsAClearError) {
  auto r = run_blueshift({"generate", "--model", demo_model().string(), "--prompt-tokens", "1,999999"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("outside the vocabulary"), std::string::npos) << r.err;
  std::string long_prompt;
  for (int i = 0; i < 1100; ++i) long_prompt += (i ? ",5" : "5");
  r = run_blueshift({"generate", "--model", demo_model().string(), "--prompt-tokens", long_prompt});
  EXPECT_EQ(r.exit_code, 6) << r.err;  // resources: longer than the context
  EXPECT_NE(r.err.find("context"), std::string::npos) << r.err;
}

// `bench --json` on lavapipe: every documented field is present and sane, and the 128-token decode is
// one submit (submits_per_token <= 1/16).
TEST(Bench, JsonHasEveryFieldAndOneSubmitPerGeneration) {
  auto r = run_blueshift({"bench", "--model", demo_model().string(), "--prompt-tokens", "16", "--gen-tokens", "128",
                          "--reps", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  for (const char* f : {"model", "quant", "device", "driver", "prompt_tokens", "gen_tokens", "prefill_tok_s",
                        "decode_tok_s", "ttft_ms", "decode_ms_per_token_p50", "decode_ms_per_token_p95",
                        "submits_per_token", "readback_bytes_per_token", "dispatches_per_token", "barriers_per_token",
                        "weight_bytes_per_token", "achieved_gb_s", "peak_gb_s", "pct_of_peak", "gpu_ms_by_kernel",
                        "vram_bytes", "weight_bytes", "kv_cache_bytes", "load_s", "token_arrival_ms", "reps", "sampling",
                        "kv_bytes_per_token", "gpu_ms_by_dispatch", "peak_error", "peak_gb_s_by_mib", "peak_runs",
                        "floor_ms_per_token", "floor_tok_s", "decode_kernel"})
    EXPECT_TRUE(j.contains(f)) << "missing field " << f;
  EXPECT_EQ(j["quant"], "Q8_0");
  EXPECT_EQ(j["gen_tokens"], 128);
  EXPECT_LE(j["submits_per_token"].get<double>(), 1.0 / 16);
  EXPECT_GT(j["decode_tok_s"].get<double>(), 0);
  EXPECT_GT(j["prefill_tok_s"].get<double>(), 0);
  // The peak is the best of several sizes and runs, a percentage of it never exceeds 100, and the floor
  // is the token's bytes at that peak.
  double peak = j["peak_gb_s"];
  EXPECT_GT(peak, 0);
  EXPECT_GE(j["peak_runs"].get<int>(), 10);
  ASSERT_GE(j["peak_gb_s_by_mib"].size(), 2u);
  for (const auto& [mib, gbs] : j["peak_gb_s_by_mib"].items()) EXPECT_LE(gbs.get<double>(), peak) << mib;
  EXPECT_LE(j["pct_of_peak"].get<double>(), 100.0);
  EXPECT_EQ(j["peak_error"].is_null(), j["achieved_gb_s"].get<double>() <= peak);
  double bytes = j["weight_bytes_per_token"].get<double>() + j["kv_bytes_per_token"].get<double>();
  EXPECT_NEAR(j["floor_ms_per_token"].get<double>(), bytes / (peak * 1e9) * 1e3, 1e-9);
  EXPECT_NEAR(j["floor_tok_s"].get<double>() * j["floor_ms_per_token"].get<double>(), 1e3, 1e-6);
  EXPECT_GT(j["dispatches_per_token"].get<int>(), 10);
  // The decode path: the persistent kernel's plan, or why not (on lavapipe: off by default on CPU devices).
  const json& dk = j["decode_kernel"];
  if (dk["persistent"].get<bool>()) {
    EXPECT_EQ(dk["kernel"].get<std::string>().rfind("decode_persistent", 0), 0u) << dk;
    ASSERT_TRUE(dk["down_passes"].is_object() && !dk["down_passes"].empty()) << dk;
    for (const auto& [dtype, passes] : dk["down_passes"].items()) EXPECT_GE(passes.get<int>(), 1) << dtype;
    EXPECT_TRUE(dk["norm_slots"].is_boolean() && dk["head_norm"].is_boolean()) << dk;
  } else {
    EXPECT_FALSE(dk["why"].get<std::string>().empty()) << dk;
  }
  // The demo model (4 query heads, 2 kv heads, head_dim 32) has a long-context recording: on the per-phase path, from
  // 32 x head_dim; in the persistent kernel, from 3,072.
  ASSERT_TRUE(dk.contains("long_context_from")) << dk;
  EXPECT_EQ(dk["long_context_from"], dk["persistent"].get<bool>() ? 3072 : 1024) << dk;
  double p50 = j["decode_ms_per_token_p50"], p95 = j["decode_ms_per_token_p95"];
  EXPECT_GT(p50, 0);
  EXPECT_LE(p50, p95);
  EXPECT_EQ(j["token_arrival_ms"].size(), 128u);
  EXPECT_FALSE(j["gpu_ms_by_kernel"].empty());
  EXPECT_TRUE(j["gpu_ms_by_kernel"].contains("matvec"));
  EXPECT_TRUE(j["gpu_ms_by_kernel"].contains("sample"));  // the profiled step includes the sampler
  EXPECT_EQ(j["sampling"]["temperature"], 0.0);
  EXPECT_GE(j["vram_bytes"].get<uint64_t>(), j["weight_bytes"].get<uint64_t>() + j["kv_cache_bytes"].get<uint64_t>());
}

// `bench --load-only` reports the load time; BLUESHIFT_LOAD_STATS=1 adds where the loader's time went (stderr).
TEST(Bench, LoadOnlyAndLoadStats) {
  auto r = run_blueshift({"bench", "--model", demo_model().string(), "--load-only", "--json"}, {{"BLUESHIFT_LOAD_STATS", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_GT(j["load_s"].get<double>(), 0.0) << r.out;
  for (const char* f : {"shard_wait_s", "sink_s", "staging_write_s", "gpu_wait_s"})  // an RDRR model: all known
    EXPECT_GE(j["load_breakdown"][f].get<double>(), 0.0) << f << ": " << r.out;
  EXPECT_NE(r.err.find("load-stats: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("waiting for shards"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("in the sink"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("upload-stats: "), std::string::npos) << r.err;  // the sink's split: staging writes, GPU waits
  EXPECT_NE(r.err.find("waiting for the GPU"), std::string::npos) << r.err;
  auto quiet = run_blueshift({"bench", "--model", demo_model().string(), "--load-only", "--json"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("load-stats"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.err.find("upload-stats"), std::string::npos) << quiet.err;
}

// Matrices split across shards reach the GPU span by span (model.cpp, TensorView::whole), Q6_K and the rest
// assembled first: the logits match the same weights converted into whole shards, bit for bit.
TEST(Load, TensorsAcrossShardsGiveTheSameLogits) {
  TempDir d;
  auto r = synth_into(d.path, tiny_llama_config(), {"--seed", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (std::string q : {"f16", "q4_k_m"}) {
    std::string npy[2];
    for (int split = 0; split < 2; ++split) {
      fs::path m = d / (q + std::to_string(split));
      std::vector<std::string> args = {"convert", (d / "hf").string(), m.string(), "--quant", q};
      if (split) args.insert(args.end(), {"--shard-size", "0.01"});
      r = run_blueshift(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      if (split) {  // the split conversion does put matrices across shards
        json man;
        std::ifstream(m / "manifest.json") >> man;
        EXPECT_GT(man["shards"].size(), 8u) << q;
      }
      fs::path out = d / (q + std::to_string(split) + ".npy");
      r = run_blueshift({"logits", "--model", m.string(), "--tokens", "5,6,7,8,9,10,11", "--out", out.string()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      std::ifstream f(out, std::ios::binary);
      npy[split].assign(std::istreambuf_iterator<char>(f), {});
    }
    EXPECT_FALSE(npy[0].empty());
    EXPECT_TRUE(npy[0] == npy[1]) << q << ": the logits differ when the weights span shards";
  }
}

TEST(Bench, UploadMemoryChoiceAndItsBadValue) {
  for (const char* v : {"wc", "cached"}) {
    auto r = run_blueshift({"bench", "--model", demo_model().string(), "--load-only", "--json"},
                           {{"BLUESHIFT_UPLOAD_MEMORY", v}, {"BLUESHIFT_LOAD_STATS", "1"}});
    ASSERT_EQ(r.exit_code, 0) << v << ": " << r.err;
    EXPECT_NE(r.err.find("staging memory"), std::string::npos) << r.err;
  }
  auto r = run_blueshift({"bench", "--model", demo_model().string(), "--load-only"}, {{"BLUESHIFT_UPLOAD_MEMORY", "fast"}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("BLUESHIFT_UPLOAD_MEMORY=fast: expected wc or cached"), std::string::npos) << r.err;
}

TEST(Bench, MissingModelIsBadInput) {
  TempDir d;
  auto r = run_blueshift({"bench", "--model", (d / "nope").string(), "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

// Two turns of `blueshift chat` in a tmux pane: the second turn continues the same KV cache.
// A command in a detached tmux session: what a person sees (capture), waiting for text, typing.
struct Tmux {
  std::string name;
  int history;   // lines of scrollback to capture
  bool started;  // tmux new-session succeeded
  Tmux(const std::string& prefix, const std::string& cmd, int history_lines)
      : name(prefix + std::to_string(::getpid())), history(history_lines),
        started(std::system(("tmux new-session -d -s " + name + " -x 200 -y 50 '" + cmd + "'").c_str()) == 0) {}
  ~Tmux() { std::system(("tmux kill-session -t " + name + " 2>/dev/null").c_str()); }
  std::string capture() const {
    std::string out;
    FILE* p = popen(("tmux capture-pane -p -S -" + std::to_string(history) + " -t " + name).c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
  }
  // Polls every 100 ms, `tries` times, until `pattern` appears `count` times on the screen.
  bool wait_for(const std::string& pattern, int count, int tries) const {
    for (int i = 0; i < tries; ++i) {
      auto s = capture();
      size_t c = 0;
      for (size_t at = s.find(pattern); at != std::string::npos; at = s.find(pattern, at + 1)) ++c;
      if (int(c) >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  void send(const std::string& keys) const { std::system(("tmux send-keys -t " + name + " " + keys).c_str()); }
};

TEST(Chat, TwoTurnsInATerminal) {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0) GTEST_SKIP() << "tmux not installed";
  std::string cmd = binary().string() + " chat --model " + demo_model().string() + " --max-tokens 8 --ignore-eos";
  Tmux t("bs-chat-", cmd + "; sleep 30", 200);
  ASSERT_TRUE(t.started);
  ASSERT_TRUE(t.wait_for("Ctrl-D quits", 1, 600)) << t.capture();  // (capture-pane trims the prompt's trailing space)
  t.send("'hello there' Enter");
  ASSERT_TRUE(t.wait_for("context ", 1, 600)) << t.capture();
  t.send("'and again' Enter");
  ASSERT_TRUE(t.wait_for("context ", 2, 600)) << t.capture();
  auto screen = t.capture();
  // The context after turn two includes turn one: it grew past the first turn's length.
  std::regex ctx(R"(context (\d+)\])");
  std::vector<int> sizes;
  for (std::sregex_iterator it(screen.begin(), screen.end(), ctx), end; it != end; ++it) sizes.push_back(std::stoi((*it)[1]));
  ASSERT_EQ(sizes.size(), 2u) << screen;
  EXPECT_GT(sizes[1], sizes[0] + 8) << screen;
}

// Ctrl-C during an answer: the host cancel reaches the sampler, which stops the recorded loop (the
// remaining steps of the submit are skipped); the answer ends early with [stopped], and the next turn
// continues the same session.
TEST(Chat, CtrlCStopsAnAnswer) {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0) GTEST_SKIP() << "tmux not installed";
  std::string cmd = binary().string() + " chat --model " + demo_model().string() + " --ctx 8192 --max-tokens 8000 --ignore-eos";
  Tmux t("bs-chat-c-", cmd + "; sleep 60", 2000);
  ASSERT_TRUE(t.started);
  ASSERT_TRUE(t.wait_for("Ctrl-D quits", 1, 900)) << t.capture();
  t.send("'hello there' Enter");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  t.send("C-c");
  ASSERT_TRUE(t.wait_for("context ", 1, 900)) << t.capture();
  t.send("'and again' Enter");  // a second answer, stopped too
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  t.send("C-c");
  bool two = t.wait_for("context ", 2, 900);
  auto screen = t.capture();
  ASSERT_TRUE(two) << screen;
  EXPECT_NE(screen.find("[stopped]"), std::string::npos) << screen;
  std::regex stats(R"(\[(\d+) tokens, [0-9.]+ tok/s, context (\d+)\])");
  std::vector<std::pair<int, int>> turns;
  for (std::sregex_iterator it(screen.begin(), screen.end(), stats), end; it != end; ++it)
    turns.push_back({std::stoi((*it)[1]), std::stoi((*it)[2])});
  ASSERT_EQ(turns.size(), 2u) << screen;
  EXPECT_LT(turns[0].first, 8000) << screen;
  EXPECT_GT(turns[1].second, turns[0].second) << screen;  // turn two continued the session
}

// LFM2's conv state across prefill chunks and into decode: a 300-token prompt prefilled in chunks of 256
// and 44 (the GLSL path) and one token at a time (the WGSL path, max_batch 1) continue identically.
TEST(Generate, Lfm2ConvStateCarriesAcrossPrefillChunks) {
  TempDir dir;
  json cfg = {{"model_type", "lfm2"}, {"hidden_size", 256}, {"intermediate_size", 512}, {"num_attention_heads", 4},
              {"num_key_value_heads", 2}, {"num_hidden_layers", 3}, {"vocab_size", 300},
              {"max_position_embeddings", 1024}, {"conv_L_cache", 3}, {"layer_types", {"conv", "full_attention", "conv"}},
              {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 1000000.0}}}};
  std::ofstream(dir / "config.json") << cfg.dump();
  auto r = run_blueshift({"synth", "--config", (dir / "config.json").string(), (dir / "hf").string(), "--seed", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<int32_t> prompt;
  for (int i = 0; i < 300; ++i) prompt.push_back(int32_t(rng()() % 300));
  std::vector<std::vector<int32_t>> out;
  for (const char* kernels : {"glsl", "wgsl"}) {
    r = run_blueshift({"generate", "--model", (dir / "hf").string(), "--prompt-tokens", join(prompt), "--max-tokens",
                       "12", "--temperature", "0", "--ignore-eos", "--kernels", kernels});
    ASSERT_EQ(r.exit_code, 0) << kernels << ": " << r.err;
    out.push_back(parse_ids(r.out));
  }
  EXPECT_EQ(out[0].size(), 12u);
  EXPECT_EQ(out[0], out[1]);
}

}  // namespace
}  // namespace bs::testing
