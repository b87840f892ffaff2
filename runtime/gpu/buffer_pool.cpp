#include "runtime/gpu/buffer_pool.h"

#include <bit>

namespace bs::gpu {

uint64_t BufferPool::size_class(uint64_t size) { return std::bit_ceil(std::max<uint64_t>(size, 256)); }

std::unique_ptr<Buffer> BufferPool::acquire(uint64_t size) {
  uint64_t cls = size_class(size);
  auto& list = free_[cls];
  if (!list.empty()) {
    auto b = std::move(list.back());
    list.pop_back();
    return b;
  }
  ++created_;
  return std::make_unique<Buffer>(device_, BufferDesc{cls, usage_, "pool"});
}

void BufferPool::release(std::unique_ptr<Buffer> buffer) {
  if (!buffer) return;
  free_[size_class(buffer->size())].push_back(std::move(buffer));
}

size_t BufferPool::free_count() const {
  size_t n = 0;
  for (auto& [cls, list] : free_) n += list.size();
  return n;
}

}  // namespace bs::gpu
