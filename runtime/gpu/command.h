// CommandEncoder and ComputePassEncoder, with automatic hazard tracking.
//
// The encoder knows which buffer ranges each dispatch (and copy) reads and writes. Before a command
// it inserts one global memory barrier only if the command reads or writes a range an earlier command
// wrote since the last barrier (RAW, WAW), or writes a range an earlier one read (WAR). Independent
// dispatches — the Q, K and V projections — are recorded with no barrier between them.
//
// A finished CommandBuffer can be submitted any number of times (the decode loop records its steps
// once and replays them).
#pragma once
#include <string>
#include <vector>

#include "runtime/gpu/device.h"

namespace bs::gpu {

class QuerySet;

class CommandBuffer {
 public:
  CommandBuffer() = default;
  CommandBuffer(Device& device, VkCommandBuffer cb, std::string label, uint64_t dispatches, uint64_t barriers)
      : device_(&device), cb_(cb), label_(std::move(label)), dispatches_(dispatches), barriers_(barriers) {}
  ~CommandBuffer();
  CommandBuffer(CommandBuffer&& o) noexcept { *this = std::move(o); }
  CommandBuffer& operator=(CommandBuffer&& o) noexcept;

  VkCommandBuffer handle() const { return cb_; }
  uint64_t dispatchCount() const { return dispatches_; }
  uint64_t barrierCount() const { return barriers_; }
  const std::string& label() const { return label_; }

 private:
  Device* device_ = nullptr;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  std::string label_;
  uint64_t dispatches_ = 0, barriers_ = 0;
};

class ComputePassEncoder;

class CommandEncoder {
 public:
  // simultaneous: the finished buffer may be pending several times at once (the same recorded decode
  // batch appears many times in one submit).
  CommandEncoder(Device& device, std::string label, bool simultaneous = false);
  ~CommandEncoder();
  CommandEncoder(CommandEncoder&&) noexcept;
  CommandEncoder(const CommandEncoder&) = delete;

  ComputePassEncoder beginComputePass(std::string label = {});
  void copyBufferToBuffer(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset,
                          uint64_t size);
  // Small inline update (≤ 64 KiB, multiple of 4), recorded into the command buffer.
  void writeBuffer(const Buffer& dst, uint64_t offset, const void* data, uint64_t size);
  void fillBuffer(const Buffer& dst, uint64_t offset, uint64_t size, uint32_t value);
  // Extension: a timestamp once every earlier command has finished its compute work.
  void writeTimestamp(QuerySet& set, uint32_t index);
  void resetQueries(QuerySet& set, uint32_t first, uint32_t count);
  CommandBuffer finish();
  // What is recorded so far as a command buffer of its own (to submit now, so that the GPU starts while the
  // rest records); recording goes on in a fresh one, which begins with a full barrier. Bindings do not carry
  // over: set the pipeline and bind groups again before the next dispatch (the pass encoder's callers do so
  // for every dispatch).
  CommandBuffer split();
  // Extension (VK_EXT_conditional_rendering, Device::hasConditionalRendering): the dispatches up to
  // endConditional() run only if the u32 at `offset` in `predicate` is non-zero (zero with `inverted`)
  // when the GPU reaches this point. Begins with a barrier that orders every earlier write (this and
  // earlier submits) before the predicate read and before the dispatches inside.
  void beginConditional(const Buffer& predicate, uint64_t offset, bool inverted);
  void endConditional();

  uint64_t barrierCount() const { return barriers_; }
  uint64_t dispatchCount() const { return dispatches_; }
  VkCommandBuffer handle() const { return cb_; }

  // Hazard tracking (used by the pass encoder).
  struct Access {
    VkBuffer buffer;
    uint64_t offset, size;
    bool writes;
    bool atomic = false;  // atomics alone: never conflicts with another such access (BindGroupEntry::atomic)
  };
  // Inserts a barrier when the command (running in `stage`: compute, transfer, + indirect for an
  // indirect dispatch) conflicts with one since the last barrier; the barrier waits only on the stages
  // that ran since then and blocks only `stage`.
  // `chained`: the command orders itself after the ones it conflicts with (a dispatch that spins in the shader on a
  // counter they signal, ComputePassEncoder::chainNext): no barrier; its accesses are tracked all the same.
  void prepare(std::span<const Access> reads_writes, VkPipelineStageFlags stage, bool chained = false);
  void barrier();  // an unconditional full barrier (counted)
  void barrier(VkPipelineStageFlags src, VkPipelineStageFlags dst);

 private:
  friend class ComputePassEncoder;
  void begin();
  Device* device_;
  bool simultaneous_ = false;  // every command buffer of the encoder, split() ones included
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  std::string label_;
  std::vector<Access> pending_writes_, pending_reads_;
  VkPipelineStageFlags pending_stages_ = 0;  // stages of the commands since the last barrier
  bool conditional_ = false;
  uint64_t barriers_ = 0, dispatches_ = 0;
  uint64_t generation_ = 0;  // command buffers begun since construction (split)
};

class ComputePassEncoder {
 public:
  explicit ComputePassEncoder(CommandEncoder& enc) : enc_(&enc) {}

  void setPipeline(const ComputePipeline& p);
  void setBindGroup(uint32_t group, const BindGroup& g);
  // Extension: push constants (bytes must match the shader's block, ≤ 128 bytes to be portable).
  void setPushConstants(const void* data, uint32_t size);
  template <class T> void setPushConstants(const T& params) { setPushConstants(&params, sizeof(T)); }
  void dispatchWorkgroups(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  // Workgroup counts read from `indirect` at `offset` (3 x u32) when the GPU runs the dispatch.
  void dispatchWorkgroupsIndirect(const Buffer& indirect, uint64_t offset);
  // The next dispatch waits in its shader for every dispatch since the last barrier that it conflicts with: they
  // count themselves done on a counter it spins on before it reads what they wrote (chain.glsl), so no
  // barrier is recorded before it and it starts while they drain. The caller guarantees that each such dispatch
  // signals that counter; later dispatches see its accesses as usual. Sound only where workgroups start in dispatch
  // order (a spinning workgroup never holds back one it waits for): NVIDIA's queues, and lavapipe, which runs each
  // dispatch to its end before the next.
  void chainNext() { chain_next_ = true; }
  void end() {}

 private:
  void track(const Buffer* indirect, uint64_t indirect_offset);
  CommandEncoder* enc_;
  uint64_t generation_ = 0;  // the encoder's command buffer that pipeline_ and groups_ are bound in
  const ComputePipeline* pipeline_ = nullptr;
  std::vector<const BindGroup*> groups_;
  bool chain_next_ = false;
};

}  // namespace bs::gpu
