// Queue: submits command buffers, with a timeline semaphore that counts completed batches.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/gpu/command.h"

namespace bs::gpu {

class Queue {
 public:
  Queue(Device& device, uint32_t family);
  ~Queue();
  Queue(const Queue&) = delete;

  // One batch of command buffers; when it completes the timeline reaches the value it returns.
  uint64_t submit(std::span<const CommandBuffer* const> buffers);
  uint64_t submit(const CommandBuffer& cb) {
    const CommandBuffer* p = &cb;
    return submit(std::span(&p, 1));
  }
  // Many batches in ONE vkQueueSubmit: batch i signals first_value + i. Returns the last value.
  // (The decode loop: a generation of N tokens is one call here.)
  uint64_t submitBatches(std::span<const std::vector<const CommandBuffer*>> batches);

  // Blocks until the timeline reaches `value` (timeout_ns: UINT64_MAX = forever). false on timeout.
  bool wait(uint64_t value, uint64_t timeout_ns = UINT64_MAX);
  // The same, polling the timeline's counter for up to `spin_ns` before blocking: the caller learns of the
  // completion without a sleeping thread's wake-up (latency-critical waits: the prefill before the first token).
  void waitSpinning(uint64_t value, uint64_t spin_ns);
  uint64_t completedValue() const;
  uint64_t lastSubmitted() const { return next_value_ - 1; }
  void waitIdle();  // WebGPU's onSubmittedWorkDone, blocking

  // queue.writeBuffer: copies host data into any buffer (staged for device-local buffers), and waits.
  void writeBuffer(const Buffer& dst, uint64_t offset, const void* data, uint64_t size);
  // Reads a buffer range back to host memory, and waits.
  void readBuffer(const Buffer& src, uint64_t offset, void* data, uint64_t size);

  VkQueue handle() const { return queue_; }
  VkSemaphore timeline() const { return timeline_; }

 private:
  Device& device_;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t next_value_ = 1;
};

}  // namespace bs::gpu
