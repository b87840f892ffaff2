// What a command that writes a model directory (convert, synth --like) needs to leave nothing half
// written: the output is built in a hidden sibling `.NAME.partial-XXXXXX` and renamed at the end, and
// SIGINT/SIGTERM stop the work between steps so that the sibling is removed rather than left behind.
#pragma once
#include <filesystem>

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

// OUT_DIR's temporary sibling, removed with everything in it on scope exit unless commit() renamed it.
class PartialDir {
 public:
  explicit PartialDir(const std::filesystem::path& out_dir);
  ~PartialDir();
  PartialDir(const PartialDir&) = delete;
  PartialDir& operator=(const PartialDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Renames the directory to out_dir. An existing out_dir (the caller decided it may be replaced) is
  // moved aside first and removed after, so a reader never sees a missing or half-removed directory.
  void commit();

 private:
  std::filesystem::path path_, out_;
};

}  // namespace bs
