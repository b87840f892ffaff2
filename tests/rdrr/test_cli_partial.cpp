// Stale partial directories: a convert killed with SIGKILL leaves `.OUT.partial-XXXXXX` behind; the
// next convert to the same OUT_DIR removes it and says so (or with --keep-partial reports it), and
// never touches a partial a live process holds, nor anything else beside OUT_DIR.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "rdrr/partial_dir.h"
#include "tests/common/testing.h"
#include "tests/rdrr/fixture.h"

extern char** environ;

using namespace bs;
using namespace bs::testing;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> partials_of(const fs::path& dir, const std::string& name) {
  std::vector<std::string> out;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("." + name + ".partial-", 0) == 0)
      out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

// A file with bytes in it, not just created: under load the kill can land between open and write.
bool has_shard(const fs::path& dir, const std::string& name) {
  for (auto& p : partials_of(dir, name)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir / p, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (it->is_regular_file(ec2) && it->file_size(ec2) > 0 && !ec2) return true;
    }
  }
  return false;
}

// `blueshift convert` on one thread with 1 MiB shards, SIGKILLed once a shard in its partial directory has
// bytes.
int convert_and_sigkill(const fs::path& hf, const fs::path& out) {
  std::string bin = binary().string(), a1 = hf.string(), a2 = out.string();
  std::vector<char*> argv = {bin.data(),
                             const_cast<char*>("convert"),
                             a1.data(),
                             a2.data(),
                             const_cast<char*>("--threads"),
                             const_cast<char*>("1"),
                             const_cast<char*>("--shard-size"),
                             const_cast<char*>("1"),
                             nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  auto t0 = std::chrono::steady_clock::now();
  while (!has_shard(out.parent_path(), out.filename()) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Holds a directory's lock the way a live convert does.
struct HeldLock {
  explicit HeldLock(const fs::path& dir) : fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  }
  ~HeldLock() { ::close(fd); }
  int fd;
};

}  // namespace

TEST(CliPartial, KilledConvertIsCleanedUpByTheNext) {
  TempDir dir;
  fs::path hf =
      make_checkpoint(dir.path, tiny_config("llama", 512, 8, 8192));  // ~60 MB: seconds on one thread
  fs::path out = dir / "out";
  int status = convert_and_sigkill(hf, out);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "convert finished before the kill; status " << status;
  ASSERT_FALSE(fs::exists(out));
  std::vector<std::string> stale = partials_of(dir.path, "out");
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_FALSE(fs::is_empty(dir / stale[0])) << "killed mid-way: some shards were written";

  // A partial a live convert holds, and names that only look like a partial: none may be touched.
  fs::create_directory(dir / ".out.partial-live01");
  HeldLock live(dir / ".out.partial-live01");
  for (const char* decoy : {".out.partial-abc12", ".out.partial-abc1234", ".out.partial-ab_d12",
                            ".outx.partial-abc123", "out.partial-abc123", ".other.partial-abc123"})
    fs::create_directory(dir / decoy);
  write_file(dir / ".out.partial-file01", "a file, not a directory");
  fs::create_directory_symlink(dir / stale[0], dir / ".out.partial-link01");

  // --keep-partial: reported, left in place.
  auto r = run_blueshift({"convert", hf.string(), out.string(), "--quant", "q8_0", "--keep-partial"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("found stale partial " + stale[0] + " ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--keep-partial"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("live01"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / stale[0]));

  // A model directory follows the umask like any other tool's output.
  mode_t old_mask = ::umask(022);
  r = run_blueshift({"convert", hf.string(), out.string(), "--quant", "q8_0", "--force"});
  ::umask(old_mask);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed stale partial " + stale[0] + " ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(") left by an interrupted convert"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(0 bytes)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("live01"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / stale[0]));
  EXPECT_EQ(fs::status(out).permissions(), static_cast<fs::perms>(0755));
  EXPECT_EQ(run_blueshift({"verify", out.string()}).exit_code, 0);
  // Left alone: the live partial, the decoys, the file and the (now dangling) symlink.
  EXPECT_TRUE(fs::is_directory(dir / ".out.partial-live01"));
  for (const char* decoy : {".out.partial-abc12", ".out.partial-abc1234", ".out.partial-ab_d12",
                            ".outx.partial-abc123", "out.partial-abc123", ".other.partial-abc123"})
    EXPECT_TRUE(fs::is_directory(dir / decoy)) << decoy;
  EXPECT_TRUE(fs::is_regular_file(dir / ".out.partial-file01"));
  EXPECT_TRUE(fs::is_symlink(dir / ".out.partial-link01"));
  EXPECT_EQ(partials_of(dir.path, "out").size(), 6u);  // live01, file01, link01, abc12, abc1234, ab_d12
}

// The library call on its own: its lock is what keeps a partial alive, and the sweep counts bytes.
TEST(CliPartial, SweepSkipsHeldPartials) {
  TempDir dir;
  fs::path out = dir / "m";
  {
    PartialDir held(out);
    write_file(held.path() / "shard_00000.bin", std::string(1500, 'x'));
    EXPECT_TRUE(sweep_stale_partials(out, true).empty()) << "a live PartialDir is not stale";
    fs::create_directory(dir / ".m.partial-dead00");
    write_file(dir / ".m.partial-dead00/a", std::string(2500, 'y'));
    auto found = sweep_stale_partials(out, false);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].path.filename(), ".m.partial-dead00");
    EXPECT_EQ(found[0].bytes, 2500u);
    EXPECT_FALSE(found[0].removed);
    EXPECT_TRUE(fs::exists(dir / ".m.partial-dead00"));
    found = sweep_stale_partials(out, true);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_TRUE(found[0].removed);
    EXPECT_FALSE(fs::exists(dir / ".m.partial-dead00"));
    EXPECT_TRUE(fs::exists(held.path()));
    held.commit();
  }
  EXPECT_TRUE(fs::exists(out / "shard_00000.bin"));
  EXPECT_TRUE(partials_of(dir.path, "m").empty());
  EXPECT_EQ(format_size(17), "17 bytes");
  EXPECT_EQ(format_size(1234567890), "1.2 GB");
}
