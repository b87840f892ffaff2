#include "runtime/gpu/queue.h"

#include <chrono>
#include <cstring>

namespace bs::gpu {

Queue::Queue(Device& device, uint32_t family) : device_(device) {
  vkGetDeviceQueue(device.handle(), family, 0, &queue_);
  VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  ti.initialValue = 0;
  VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti};
  VK_CHECK(vkCreateSemaphore(device.handle(), &ci, nullptr, &timeline_));
  device.setName(VK_OBJECT_TYPE_SEMAPHORE, uint64_t(timeline_), "queue timeline");
}

Queue::~Queue() {
  vkQueueWaitIdle(queue_);
  vkDestroySemaphore(device_.handle(), timeline_, nullptr);
}

uint64_t Queue::submit(std::span<const CommandBuffer* const> buffers) {
  std::vector<const CommandBuffer*> batch(buffers.begin(), buffers.end());
  return submitBatches(std::span(&batch, 1));
}

uint64_t Queue::submitBatches(std::span<const std::vector<const CommandBuffer*>> batches) {
  size_t n = batches.size();
  std::vector<VkSubmitInfo> infos(n);
  std::vector<VkTimelineSemaphoreSubmitInfo> tis(n);
  std::vector<uint64_t> values(n);
  std::vector<std::vector<VkCommandBuffer>> cbs(n);
  for (size_t i = 0; i < n; ++i) {
    for (auto* cb : batches[i]) cbs[i].push_back(cb->handle());
    values[i] = next_value_ + i;
    tis[i] = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    tis[i].signalSemaphoreValueCount = 1;
    tis[i].pSignalSemaphoreValues = &values[i];
    infos[i] = {VK_STRUCTURE_TYPE_SUBMIT_INFO, &tis[i]};
    infos[i].commandBufferCount = uint32_t(cbs[i].size());
    infos[i].pCommandBuffers = cbs[i].data();
    infos[i].signalSemaphoreCount = 1;
    infos[i].pSignalSemaphores = &timeline_;
  }
  VK_CHECK(vkQueueSubmit(queue_, uint32_t(n), infos.data(), VK_NULL_HANDLE));
  ++device_.counters().submits;
  next_value_ += n;
  return next_value_ - 1;
}

bool Queue::wait(uint64_t value, uint64_t timeout_ns) {
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline_;
  wi.pValues = &value;
  VkResult r = vkWaitSemaphores(device_.handle(), &wi, timeout_ns);
  if (r == VK_TIMEOUT) return false;
  VK_CHECK(r);
  return true;
}

void Queue::waitSpinning(uint64_t value, uint64_t spin_ns) {
  const auto t0 = std::chrono::steady_clock::now();
  while (completedValue() < value)
    if (uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count()) >
        spin_ns) {
      wait(value);
      return;
    }
}

uint64_t Queue::completedValue() const {
  uint64_t v = 0;
  VK_CHECK(vkGetSemaphoreCounterValue(device_.handle(), timeline_, &v));
  return v;
}

void Queue::waitIdle() { wait(lastSubmitted()); }

void Queue::writeBuffer(const Buffer& dst, uint64_t offset, const void* data, uint64_t size) {
  if (offset + size > dst.size())
    fail_kind(ErrorKind::internal, "writeBuffer({}): [{}, +{}) exceeds {} bytes", dst.label(), offset, size, dst.size());
  if (dst.mapped()) {
    std::memcpy(static_cast<char*>(dst.mapped()) + offset, data, size);
    return;
  }
  // Staged in pieces so a large upload never needs a staging buffer as large as itself.
  constexpr uint64_t kChunk = 64ull << 20;
  Buffer staging(device_, {std::min(size, kChunk), BufferUsage::upload, "writeBuffer staging"});
  for (uint64_t done = 0; done < size; done += kChunk) {
    uint64_t n = std::min(kChunk, size - done);
    std::memcpy(staging.mapped(), static_cast<const char*>(data) + done, n);
    CommandEncoder enc(device_, "writeBuffer");
    enc.copyBufferToBuffer(staging, 0, dst, offset + done, n);
    wait(submit(enc.finish()));
  }
}

void Queue::readBuffer(const Buffer& src, uint64_t offset, void* data, uint64_t size) {
  if (offset + size > src.size())
    fail_kind(ErrorKind::internal, "readBuffer({}): [{}, +{}) exceeds {} bytes", src.label(), offset, size, src.size());
  waitIdle();
  if (src.mapped()) {
    src.invalidate();
    std::memcpy(data, static_cast<const char*>(src.mapped()) + offset, size);
    return;
  }
  constexpr uint64_t kChunk = 64ull << 20;
  Buffer staging(device_, {std::min(size, kChunk), BufferUsage::readback, "readBuffer staging"});
  for (uint64_t done = 0; done < size; done += kChunk) {
    uint64_t n = std::min(kChunk, size - done);
    CommandEncoder enc(device_, "readBuffer");
    enc.copyBufferToBuffer(src, offset + done, staging, 0, n);
    wait(submit(enc.finish()));
    staging.invalidate();
    std::memcpy(static_cast<char*>(data) + done, staging.mapped(), n);
  }
}

}  // namespace bs::gpu
