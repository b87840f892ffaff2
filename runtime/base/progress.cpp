#include "runtime/base/progress.h"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>

namespace bs {

using Clock = std::chrono::steady_clock;

ProgressBar::ProgressBar(std::string label, uint64_t total)
    : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) == 1), start_(Clock::now()),
      last_draw_(start_ - std::chrono::seconds(1)) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(uint64_t done) {
  done_ = done;
  if (!enabled_ || finished_) return;
  auto now = Clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(done_);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void ProgressBar::draw(uint64_t done) {
  constexpr int kWidth = 30;
  double frac = total_ ? std::min(1.0, double(done) / double(total_)) : 1.0;
  double secs = std::chrono::duration<double>(Clock::now() - start_).count();
  double rate = secs > 0 ? double(done) / secs : 0;  // bytes/s
  int filled = int(frac * kWidth);
  std::string bar(size_t(filled), '#');
  bar.resize(kWidth, '.');
  std::string eta = rate > 0 && done < total_ ? fmt::format(" ETA {:.0f}s", double(total_ - done) / rate) : "";
  std::fprintf(stderr, "\r%s [%s] %3.0f%% %.2f/%.2f GB %.0f MB/s%s\x1b[K", label_.c_str(), bar.c_str(), frac * 100,
               double(done) / 1e9, double(total_) / 1e9, rate / 1e6, eta.c_str());
  std::fflush(stderr);
}

}  // namespace bs
