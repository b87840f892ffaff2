// A one-line progress bar on stderr for long jobs (convert, verify, synth, load). Draws only when
// stderr is a terminal, at most ten times a second; call update() from one thread at a time.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace bs {

class ProgressBar {
 public:
  // `total` is in bytes; the bar shows done/total, throughput and time left.
  ProgressBar(std::string label, uint64_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(uint64_t done);
  void set_total(uint64_t total) { total_ = total; }
  // Draws the final state and ends the line (also done by the destructor).
  void finish();
  bool enabled() const { return enabled_; }

 private:
  void draw(uint64_t done);
  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace bs
