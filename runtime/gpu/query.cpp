#include "runtime/gpu/query.h"

namespace bs::gpu {

QuerySet::QuerySet(Device& device, uint32_t count) : device_(device), count_(count) {
  VkQueryPoolCreateInfo ci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  ci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  ci.queryCount = count;
  VK_CHECK(vkCreateQueryPool(device.handle(), &ci, nullptr, &pool_));
}

QuerySet::~QuerySet() { vkDestroyQueryPool(device_.handle(), pool_, nullptr); }

std::vector<double> QuerySet::resolve_ns(uint32_t first, uint32_t count) const {
  std::vector<uint64_t> raw(count);
  if (count)
    VK_CHECK(vkGetQueryPoolResults(device_.handle(), pool_, first, count, count * sizeof(uint64_t), raw.data(),
                                   sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  std::vector<double> ns(count);
  double period = device_.adapter().timestamp_period_ns;
  for (uint32_t i = 0; i < count; ++i) ns[i] = double(raw[i]) * period;
  return ns;
}

Profiler::Profiler(Device& device, uint32_t max_marks) : queries_(device, max_marks + 1) {}

void Profiler::begin(CommandEncoder& enc) {
  labels_.clear();
  enc.resetQueries(queries_, 0, queries_.count());
  enc.barrier();
  enc.writeTimestamp(queries_, 0);
}

void Profiler::mark(CommandEncoder& enc, const std::string& label) {
  if (labels_.size() + 1 >= queries_.count()) return;  // out of queries: later marks are not timed
  enc.barrier();
  labels_.push_back(label);
  enc.writeTimestamp(queries_, uint32_t(labels_.size()));
}

void Profiler::collect() {
  if (labels_.empty()) return;
  auto ns = queries_.resolve_ns(0, uint32_t(labels_.size() + 1));
  for (size_t i = 0; i < labels_.size(); ++i) totals_ms_[labels_[i]] += (ns[i + 1] - ns[i]) * 1e-6;
}

}  // namespace bs::gpu
