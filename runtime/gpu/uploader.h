// Uploader: streams host data into device-local buffers through a small ring of persistently mapped
// staging buffers. Copies are batched into one command buffer per staging slot and submitted when the
// slot fills, so the CPU fills the next slot while the GPU copies the previous one (loading overlaps
// verification, decompression and upload).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "runtime/gpu/command.h"
#include "runtime/gpu/queue.h"

namespace bs::gpu {

class Uploader {
 public:
  explicit Uploader(Device& device, uint64_t slot_bytes = 64ull << 20, int slots = 3);
  ~Uploader();
  // Copies `size` bytes of `data` to dst at `offset` (the data may be reused as soon as this returns).
  void write(const Buffer& dst, uint64_t offset, const void* data, uint64_t size);
  // The same for `size` bytes that `fill(out, at, n)` writes straight into staging memory: bytes [at, at + n)
  // of what dst receives at offset, in pieces of whole `unit`s (size a multiple of it), so that a transform
  // of the host's bytes (runtime/model's Q6_K padding) costs one pass over them, not two. Large pieces are
  // written by several threads at once (runtime/base/parallel.h): `fill` must be safe on disjoint ranges.
  void write_with(const Buffer& dst, uint64_t offset, uint64_t size, uint64_t unit,
                  const std::function<void(char* out, uint64_t at, uint64_t n)>& fill);
  // Records `fn` into the command buffer that carries the copies written so far, after them (the
  // encoder's hazard tracking orders a kernel reading what was just copied; copies submitted earlier
  // are ordered by the barrier every command buffer starts with): GPU work that turns uploaded bytes
  // into their final form, such as runtime/model/gpu_repack's kernels. `keep` (the scratch buffers
  // and bind groups that work uses) is released once that command buffer has run.
  void record(const std::function<void(CommandEncoder&)>& fn, std::shared_ptr<void> keep = {});
  // Submits what is pending and waits for every copy.
  void flush();
  uint64_t bytes() const { return bytes_; }
  // Where its time went (load-time breakdowns: BLUESHIFT_LOAD_STATS): the CPU writing staging memory (the copies or
  // `fill`), and waiting for the GPU to finish with a slot before reusing it. Whether staging memory is host-cached.
  double fill_seconds() const { return fill_s_; }
  double wait_seconds() const { return wait_s_; }
  bool staging_cached() const { return !slots_.empty() && slots_[0].staging.hostCached(); }

 private:
  struct Slot {
    Buffer staging;
    std::unique_ptr<CommandEncoder> enc;
    std::unique_ptr<CommandBuffer> cb;
    uint64_t used = 0;
    uint64_t fence = 0;  // timeline value of its last submit
    std::vector<std::shared_ptr<void>> keep;  // alive until `fence`
  };
  void submit_current();
  Slot& current();

  Device& device_;
  uint64_t slot_bytes_;
  std::vector<Slot> slots_;
  size_t cur_ = 0;
  uint64_t bytes_ = 0;
  double fill_s_ = 0, wait_s_ = 0;
};

}  // namespace bs::gpu
