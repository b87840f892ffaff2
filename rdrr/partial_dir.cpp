#include "rdrr/partial_dir.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "runtime/base/error.h"

namespace bs {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_signal{0};
extern "C" void on_stop_signal(int sig) { g_signal = sig; }

}  // namespace

struct SignalGuard::Saved {
  struct sigaction old_int{}, old_term{};
};

SignalGuard::SignalGuard() : saved_(new Saved) {
  g_signal = 0;
  struct sigaction sa{};
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
  if (g_signal) fail_kind(ErrorKind::usage, "interrupted by signal {}; nothing was written to the output", int(g_signal));
}

PartialDir::PartialDir(const fs::path& out_dir) : out_(out_dir) {
  fs::path parent = out_dir.parent_path().empty() ? fs::path(".") : out_dir.parent_path();
  std::string tmpl = (parent / ("." + out_dir.filename().string() + ".partial-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) fail("{}: cannot create a temporary directory: {}", parent.string(), std::strerror(errno));
  path_ = tmpl;
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
  if (!trash.empty()) fs::remove_all(trash);
}

}  // namespace bs
