// BufferPool: reusable storage buffers in power-of-two size classes. The forward graph plans its own
// activations at load; the pool serves what is left (staging, scratch of variable size).
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "runtime/gpu/device.h"

namespace bs::gpu {

class BufferPool {
 public:
  BufferPool(Device& device, BufferUsage usage) : device_(device), usage_(usage) {}
  // A buffer of at least `size` bytes (its class size); reuses a released one when available.
  std::unique_ptr<Buffer> acquire(uint64_t size);
  void release(std::unique_ptr<Buffer> buffer);
  static uint64_t size_class(uint64_t size);
  size_t free_count() const;
  uint64_t created() const { return created_; }

 private:
  Device& device_;
  BufferUsage usage_;
  std::map<uint64_t, std::vector<std::unique_ptr<Buffer>>> free_;
  uint64_t created_ = 0;
};

}  // namespace bs::gpu
