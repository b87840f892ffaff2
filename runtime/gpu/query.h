// QuerySet (timestamps) and a Profiler that attributes GPU time to labelled dispatches.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runtime/gpu/command.h"

namespace bs::gpu {

class QuerySet {
 public:
  QuerySet(Device& device, uint32_t count);
  ~QuerySet();
  QuerySet(const QuerySet&) = delete;
  VkQueryPool handle() const { return pool_; }
  uint32_t count() const { return count_; }
  // Timestamps in nanoseconds (waits for availability). Converts by the device's timestamp period.
  std::vector<double> resolve_ns(uint32_t first, uint32_t count) const;

 private:
  Device& device_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t count_;
};

// Usage: profiler.begin(enc); ... profiler.mark(enc, "matvec_q4k"); ... after the submit completes,
// profiler.collect() adds each interval's time to its label. The interval of a label runs from the
// previous mark to its own, so every dispatch between two marks is charged to the later label.
// With profiling on, each mark forces a barrier so the intervals are exact.
class Profiler {
 public:
  Profiler(Device& device, uint32_t max_marks);
  void begin(CommandEncoder& enc);
  void mark(CommandEncoder& enc, const std::string& label);
  void collect();                    // after the work has completed
  const std::map<std::string, double>& ms_by_label() const { return totals_ms_; }
  void clear() { totals_ms_.clear(); }

 private:
  QuerySet queries_;
  std::vector<std::string> labels_;  // label of query i (i >= 1)
  std::map<std::string, double> totals_ms_;
};

}  // namespace bs::gpu
