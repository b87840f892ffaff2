// The convert / verify / info / synth commands as a user runs them: exit codes, JSON, and an
// interrupted conversion that leaves nothing at OUT_DIR.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "rdrr/safetensors.h"
#include "tests/common/testing.h"
#include "tests/rdrr/fixture.h"

extern char** environ;

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool has_partial(const fs::path& dir) {
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".partial-") != std::string::npos) return true;
  return false;
}

// Starts `blueshift convert`, waits until its temporary directory exists plus `delay`, sends `sig`.
// Returns the exit status.
int convert_and_kill(const fs::path& hf, const fs::path& out, int sig, std::chrono::milliseconds delay) {
  std::string bin = binary().string(), a1 = hf.string(), a2 = out.string();
  std::vector<char*> argv = {bin.data(), const_cast<char*>("convert"), a1.data(), a2.data(),
                             const_cast<char*>("--quant"), const_cast<char*>("q4_k_m"),
                             const_cast<char*>("--threads"), const_cast<char*>("1"), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  if (posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ) != 0) return -1;
  posix_spawn_file_actions_destroy(&fa);
  auto t0 = std::chrono::steady_clock::now();
  while (!has_partial(out.parent_path()) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(delay);
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST(Cli, SynthConvertVerifyInfo) {
  TempDir dir;
  write_file(dir / "config.json", tiny_config("qwen3").dump());
  write_file(dir / "tokenizer.json", R"({"model": {"type": "BPE"}})");
  write_file(dir / "tokenizer_config.json", R"({"add_bos_token": false})");
  auto r = run_blueshift({"synth", "--config", (dir / "config.json").string(), (dir / "hf").string(), "--seed", "3",
                          "--tokenizer", (dir / "tokenizer.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Deterministic from the seed, whatever the thread count.
  r = run_blueshift({"synth", "--config", (dir / "config.json").string(), (dir / "hf2").string(), "--seed", "3",
                     "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir / "hf/model.safetensors"), read_file(dir / "hf2/model.safetensors"));
  r = run_blueshift({"synth", "--config", (dir / "config.json").string(), (dir / "hf3").string(), "--seed", "4"});
  EXPECT_NE(read_file(dir / "hf/model.safetensors"), read_file(dir / "hf3/model.safetensors"));

  r = run_blueshift({"convert", (dir / "hf").string(), (dir / "m").string(), "--quant", "q8_0", "--shard-size", "0.05",
                     "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json summary = json::parse(r.out);
  EXPECT_GT(summary["shards"].get<int>(), 2);
  EXPECT_TRUE(fs::exists(dir / "m/tokenizer.json"));
  EXPECT_TRUE(fs::exists(dir / "m/tokenizer_config.json"));
  r = run_blueshift({"convert", (dir / "hf").string(), (dir / "m").string()});
  EXPECT_EQ(r.exit_code, 2) << "existing OUT_DIR without --force";
  EXPECT_NE(r.err.find("--force"), std::string::npos);

  r = run_blueshift({"verify", (dir / "m").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json::parse(r.out)["ok"].get<bool>());
  r = run_blueshift({"info", (dir / "m").string(), "--json", "--tensors"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json info = json::parse(r.out);
  EXPECT_EQ(info["config"]["qk_norm"], true);
  EXPECT_EQ(info["quantization"], "Q8_0");
  json manifest = json::parse(read_file(dir / "m/manifest.json"));
  EXPECT_EQ(manifest["tokenizer"]["addBosToken"], false);
  EXPECT_EQ(manifest["eos_token_id"], json({2}));

  // Two bad shards: both named, with expected vs actual, exit 4.
  std::string s0 = manifest["shards"][0]["filename"], s2 = manifest["shards"][2]["filename"];
  std::string bytes = read_file(dir / "m" / s0);
  bytes[bytes.size() / 2] ^= 1;
  write_file(dir / "m" / s0, bytes);
  fs::resize_file(dir / "m" / s2, 10);
  r = run_blueshift({"verify", (dir / "m").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find(s0), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(s2), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("got 10 bytes"), std::string::npos) << r.err;
  r = run_blueshift({"verify", (dir / "m").string(), "--json"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(json::parse(r.out)["problems"].size(), 2u);

  r = run_blueshift({"synth", "--config", (dir / "nope.json").string(), (dir / "x").string()});
  EXPECT_EQ(r.exit_code, 3);
  json bad = tiny_config("gpt2");
  write_file(dir / "gpt2.json", bad.dump());
  r = run_blueshift({"synth", "--config", (dir / "gpt2.json").string(), (dir / "x").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("supported: llama"), std::string::npos) << r.err;
}

// A real kill midway through conversion: SIGKILL leaves no OUT_DIR (only a hidden .partial dir),
// SIGTERM leaves neither.
TEST(Cli, KilledConvertLeavesNoPartialModel) {
  TempDir dir;
  fs::path hf = make_checkpoint(dir.path, tiny_config("llama", 512, 8, 8192));  // ~60 MB: seconds on one thread
  fs::path out = dir / "out";
  int status = convert_and_kill(hf, out, SIGKILL, std::chrono::milliseconds(300));
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "convert finished before the kill; status " << status;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(has_partial(dir.path));
  for (auto& e : fs::directory_iterator(dir.path))
    if (e.path().filename().string().find(".partial-") != std::string::npos) fs::remove_all(e.path());

  status = convert_and_kill(hf, out, SIGTERM, std::chrono::milliseconds(300));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << status;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(has_partial(dir.path));
}
