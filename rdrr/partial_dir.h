// What a command that writes a model directory (convert, synth --like) needs to leave nothing half
// written: the output is built in a hidden sibling `.NAME.partial-XXXXXX` and renamed at the end, and
// SIGINT/SIGTERM stop the work between steps so that the sibling is removed rather than left behind.
// SIGKILL (or a crash, or a power cut) cannot be caught, so a partial is also marked alive by an flock
// on its directory, which the kernel drops when the owner dies: the next PartialDir for the same
// OUT_DIR finds the siblings nobody holds and removes them (or, asked to keep them, reports them).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bs {

// Turns SIGINT/SIGTERM into a clean stop at the next check(); restores the previous handlers on exit.
// One at a time per process (the flag is global, as a signal handler needs).
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  // Throws bs::Error(usage) naming the signal when one arrived since construction.
  void check() const;

 private:
  struct Saved;
  Saved* saved_;
};

// A `.NAME.partial-XXXXXX` sibling of OUT_DIR that no live process holds.
struct StalePartial {
  std::filesystem::path path;
  uint64_t bytes = 0;  // apparent size of the files in it
  bool removed = false;
};

// Finds OUT_DIR's stale partials (exactly `.NAME.partial-` and six letters or digits, a directory, not
// a symlink, its lock free) and, when `remove`, removes each while holding its lock, so that two
// sweepers, or a sweeper and the convert that just made the directory, never act on the same one.
// A partial whose lock cannot be taken for any reason (held, or a filesystem without flock) is left.
std::vector<StalePartial> sweep_stale_partials(const std::filesystem::path& out_dir, bool remove);

// "1.2 GB", "340.5 MB", "12.0 kB", "17 bytes".
std::string format_size(uint64_t bytes);

// OUT_DIR's temporary sibling, removed with everything in it on scope exit unless commit() renamed it.
// Creating one first sweeps OUT_DIR's stale partials, saying on stderr what it removed (or, with
// keep_stale, what it found).
class PartialDir {
 public:
  explicit PartialDir(const std::filesystem::path& out_dir, bool keep_stale = false);
  ~PartialDir();
  PartialDir(const PartialDir&) = delete;
  PartialDir& operator=(const PartialDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Renames the directory to out_dir. An existing out_dir (the caller decided it may be replaced) is
  // moved aside first and removed after, so a reader never sees a missing or half-removed directory.
  void commit();

 private:
  std::filesystem::path path_, out_;
  int lock_fd_ = -1;  // the directory, flock'ed while this object lives (-1 where flock is unsupported)
};

}  // namespace bs
