#include "rdrr/partial_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/base/error.h"

namespace bs {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_signal{0};
extern "C" void on_stop_signal(int sig) { g_signal = sig; }

fs::path parent_of(const fs::path& out_dir) {
  return out_dir.parent_path().empty() ? fs::path(".") : out_dir.parent_path();
}

std::string partial_prefix(const fs::path& out_dir) {
  return "." + out_dir.filename().string() + ".partial-";
}

// mkdtemp's names: the prefix and exactly six letters or digits. Anything else is not ours to touch.
bool is_partial_name(const std::string& name, const std::string& prefix) {
  if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0) return false;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// The directory itself is the lock: no file inside it to leave in the model, and the lock follows the
// directory through commit()'s rename. O_CLOEXEC so that no child process inherits (and keeps) it.
int open_dir(const fs::path& p) { return ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); }

uint64_t tree_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2) && !it->is_symlink(ec2)) total += it->file_size(ec2);
  }
  return total;
}

}  // namespace

std::string format_size(uint64_t bytes) {
  double b = double(bytes);
  if (b >= 1e9) return fmt::format("{:.1f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{} bytes", bytes);
}

std::vector<StalePartial> sweep_stale_partials(const fs::path& out_dir, bool remove) {
  std::vector<StalePartial> found;
  const std::string prefix = partial_prefix(out_dir);
  std::error_code ec;
  for (fs::directory_iterator it(parent_of(out_dir), ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    if (!is_partial_name(p.filename().string(), prefix)) continue;
    std::error_code ec2;
    if (!fs::is_directory(fs::symlink_status(p, ec2))) continue;
    int fd = open_dir(p);
    if (fd < 0) continue;
    struct stat locked {
    }, now{};
    // Held means a live convert (or one between mkdtemp and its flock, which then makes another).
    // The lstat check: the name still names the directory we locked.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::fstat(fd, &locked) != 0 || ::lstat(p.c_str(), &now) != 0 ||
        locked.st_dev != now.st_dev || locked.st_ino != now.st_ino) {
      ::close(fd);
      continue;
    }
    StalePartial s{p, tree_bytes(p), false};
    if (remove) {
      fs::remove_all(p, ec2);
      s.removed = !ec2;
    }
    ::close(fd);  // after the removal, so that no other sweeper starts on it meanwhile
    found.push_back(std::move(s));
  }
  return found;
}

struct SignalGuard::Saved {
  struct sigaction old_int {
  }, old_term{};
};

SignalGuard::SignalGuard() : saved_(new Saved) {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &saved_->old_int);
  sigaction(SIGTERM, &sa, &saved_->old_term);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &saved_->old_int, nullptr);
  sigaction(SIGTERM, &saved_->old_term, nullptr);
  delete saved_;
}

void SignalGuard::check() const {
  if (g_signal)
    fail_kind(ErrorKind::usage, "interrupted by signal {}; nothing was written to the output", int(g_signal));
}

PartialDir::PartialDir(const fs::path& out_dir, bool keep_stale) : out_(out_dir) {
  const fs::path parent = parent_of(out_dir);
  for (const StalePartial& s : sweep_stale_partials(out_dir, !keep_stale)) {
    const std::string what =
        fmt::format("stale partial {} ({}) left by an interrupted convert or synth --like",
                    s.path.filename().string(), format_size(s.bytes));
    if (s.removed)
      std::fprintf(stderr, "removed %s\n", what.c_str());
    else if (keep_stale)
      std::fprintf(stderr, "found %s; kept (--keep-partial): %s\n", what.c_str(), s.path.string().c_str());
    else
      std::fprintf(stderr, "could not remove %s: %s\n", what.c_str(), s.path.string().c_str());
  }
  for (int attempt = 0;; ++attempt) {
    std::string tmpl = (parent / (partial_prefix(out_dir) + "XXXXXX")).string();
    if (!mkdtemp(tmpl.data()))
      fail("{}: cannot create a temporary directory: {}", parent.string(), std::strerror(errno));
    int fd = open_dir(tmpl);
    if (fd < 0) {
      int err = errno;
      ::rmdir(tmpl.c_str());
      fail("{}: cannot open the directory just made: {}", tmpl, std::strerror(err));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      lock_fd_ = fd;
      path_ = tmpl;
      break;
    }
    int err = errno;
    ::close(fd);
    if (err != EWOULDBLOCK) {  // no flock on this filesystem: no sweeper can lock (and remove) it either
      path_ = tmpl;
      break;
    }
    // Another convert's sweep took it between mkdtemp and flock, and is removing it: make another.
    if (attempt == 8)
      fail("{}: cannot hold a temporary directory: other processes keep taking it", parent.string());
  }
  // mkdtemp makes it 0700, and the mode survives the rename: give the model directory the mode any
  // other tool's output gets under the user's umask (0755 under 022), so that other users, containers
  // and services can read it.
  mode_t mask = umask(0);
  umask(mask);
  fs::permissions(path_, static_cast<fs::perms>(0777 & ~mask));
}

PartialDir::~PartialDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // after the removal: the lock keeps sweepers off meanwhile
}

void PartialDir::commit() {
  fs::path trash;
  if (fs::exists(out_)) {
    fs::path parent = out_.parent_path().empty() ? fs::path(".") : out_.parent_path();
    trash = parent / ("." + out_.filename().string() + ".old-" + std::to_string(::getpid()));
    fs::rename(out_, trash);
  }
  fs::rename(path_, out_);
  path_.clear();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // the directory is OUT_DIR now, no partial to keep alive
  lock_fd_ = -1;
  if (!trash.empty()) fs::remove_all(trash);
}

}  // namespace bs
