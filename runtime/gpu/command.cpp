#include "runtime/gpu/command.h"

#include <cstring>

#include "runtime/base/env.h"
#include "runtime/gpu/query.h"

namespace bs::gpu {

// A global memory barrier from the stages that wrote (or read, for WAR) since the last barrier to the
// stages the next command runs in. The full form (src and dst: compute + transfer, dst also indirect-
// argument reads) orders everything the runtime does; the tracker narrows it to what the hazard needs,
// so a decode step of direct dispatches gets compute -> compute barriers only.
static void record_barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  if (src & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT) mb.srcAccessMask |= VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
  if (src & VK_PIPELINE_STAGE_TRANSFER_BIT) mb.srcAccessMask |= VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  if (dst & VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT) mb.dstAccessMask |= VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  if (dst & VK_PIPELINE_STAGE_TRANSFER_BIT) mb.dstAccessMask |= VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  if (dst & VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT) mb.dstAccessMask |= VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}
constexpr VkPipelineStageFlags kAllSrc = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkPipelineStageFlags kAllDst = kAllSrc | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT;
static void record_barrier(VkCommandBuffer cb) { record_barrier(cb, kAllSrc, kAllDst); }

CommandBuffer& CommandBuffer::operator=(CommandBuffer&& o) noexcept {
  if (this != &o) {
    this->~CommandBuffer();
    device_ = o.device_; cb_ = o.cb_; label_ = std::move(o.label_);
    dispatches_ = o.dispatches_; barriers_ = o.barriers_;
    o.cb_ = VK_NULL_HANDLE;
  }
  return *this;
}

CommandBuffer::~CommandBuffer() {
  if (device_ && cb_) vkFreeCommandBuffers(device_->handle(), device_->commandPool(), 1, &cb_);
  cb_ = VK_NULL_HANDLE;
}

CommandEncoder::CommandEncoder(Device& device, std::string label, bool simultaneous)
    : device_(&device), simultaneous_(simultaneous), label_(std::move(label)) {
  begin();
}

void CommandEncoder::begin() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = device_->commandPool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VK_CHECK(vkAllocateCommandBuffers(device_->handle(), &ai, &cb_));
  device_->setName(VK_OBJECT_TYPE_COMMAND_BUFFER, uint64_t(cb_), label_);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  if (simultaneous_) bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  VK_CHECK(vkBeginCommandBuffer(cb_, &bi));
  // Work from earlier submits (and host writes made available by the submit) is ordered before this
  // command buffer by one barrier at its start; within it, the tracker decides.
  record_barrier(cb_);
  pending_writes_.clear();
  pending_reads_.clear();
  pending_stages_ = 0;
}

CommandBuffer CommandEncoder::split() {
  if (conditional_) fail_kind(ErrorKind::internal, "split inside a conditional block");
  VK_CHECK(vkEndCommandBuffer(cb_));
  CommandBuffer out(*device_, cb_, label_, dispatches_, barriers_);
  cb_ = VK_NULL_HANDLE;
  begin();
  ++generation_;
  return out;
}

CommandEncoder::CommandEncoder(CommandEncoder&& o) noexcept
    : device_(o.device_), simultaneous_(o.simultaneous_), cb_(o.cb_), label_(std::move(o.label_)), pending_writes_(std::move(o.pending_writes_)),
      pending_reads_(std::move(o.pending_reads_)), pending_stages_(o.pending_stages_), conditional_(o.conditional_), barriers_(o.barriers_), dispatches_(o.dispatches_),
      generation_(o.generation_) {
  o.cb_ = VK_NULL_HANDLE;
}

CommandEncoder::~CommandEncoder() {
  if (cb_) vkFreeCommandBuffers(device_->handle(), device_->commandPool(), 1, &cb_);
}

static bool overlaps(const CommandEncoder::Access& a, const CommandEncoder::Access& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size && !(a.atomic && b.atomic);
}

void CommandEncoder::prepare(std::span<const Access> accesses, VkPipelineStageFlags stage, bool chained) {
  bool hazard = false;
  for (auto& a : accesses) {
    for (auto& w : pending_writes_) hazard |= overlaps(a, w);             // RAW, WAW
    if (a.writes)
      for (auto& r : pending_reads_) hazard |= overlaps(a, r);            // WAR
    if (hazard) break;
  }
  if (hazard && !chained) {
    static const bool full = env_switch("BLUESHIFT_FULL_BARRIERS");  // every barrier in the full form (A/B runs)
    if (full) barrier();
    else barrier(pending_stages_, stage);
  }
  for (auto& a : accesses) (a.writes ? pending_writes_ : pending_reads_).push_back(a);
  pending_stages_ |= stage;  // with DRAW_INDIRECT: a later write of the arguments waits for their read (WAR)
}

void CommandEncoder::barrier() { barrier(kAllSrc, kAllDst); }

void CommandEncoder::barrier(VkPipelineStageFlags src, VkPipelineStageFlags dst) {
  record_barrier(cb_, src ? src : VkPipelineStageFlags(VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT), dst);
  ++barriers_;
  ++device_->counters().barriers;
  pending_writes_.clear();
  pending_reads_.clear();
  pending_stages_ = 0;
}

ComputePassEncoder CommandEncoder::beginComputePass(std::string) { return ComputePassEncoder(*this); }

void CommandEncoder::copyBufferToBuffer(const Buffer& src, uint64_t so, const Buffer& dst, uint64_t dof, uint64_t size) {
  Access acc[] = {{src.handle(), so, size, false}, {dst.handle(), dof, size, true}};
  prepare(acc, VK_PIPELINE_STAGE_TRANSFER_BIT);
  VkBufferCopy region{so, dof, size};
  vkCmdCopyBuffer(cb_, src.handle(), dst.handle(), 1, &region);
}

void CommandEncoder::writeBuffer(const Buffer& dst, uint64_t offset, const void* data, uint64_t size) {
  Access acc[] = {{dst.handle(), offset, size, true}};
  prepare(acc, VK_PIPELINE_STAGE_TRANSFER_BIT);
  vkCmdUpdateBuffer(cb_, dst.handle(), offset, size, data);
}

void CommandEncoder::fillBuffer(const Buffer& dst, uint64_t offset, uint64_t size, uint32_t value) {
  Access acc[] = {{dst.handle(), offset, size, true}};
  prepare(acc, VK_PIPELINE_STAGE_TRANSFER_BIT);
  vkCmdFillBuffer(cb_, dst.handle(), offset, size, value);
}

void CommandEncoder::writeTimestamp(QuerySet& set, uint32_t index) {
  vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, set.handle(), index);
}

void CommandEncoder::resetQueries(QuerySet& set, uint32_t first, uint32_t count) {
  vkCmdResetQueryPool(cb_, set.handle(), first, count);
}

void CommandEncoder::beginConditional(const Buffer& predicate, uint64_t offset, bool inverted) {
  if (!device_->hasConditionalRendering())
    fail_kind(ErrorKind::internal, "beginConditional: VK_EXT_conditional_rendering is not enabled on this device");
  if (conditional_) fail_kind(ErrorKind::internal, "beginConditional: already inside a conditional block");
  barrier(kAllSrc, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT);
  VkConditionalRenderingBeginInfoEXT bi{VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT};
  bi.buffer = predicate.handle();
  bi.offset = offset;
  bi.flags = inverted ? VK_CONDITIONAL_RENDERING_INVERTED_BIT_EXT : 0;
  device_->beginConditionalFn()(cb_, &bi);
  conditional_ = true;
}

void CommandEncoder::endConditional() {
  if (!conditional_) fail_kind(ErrorKind::internal, "endConditional without beginConditional");
  device_->endConditionalFn()(cb_);
  conditional_ = false;
}

CommandBuffer CommandEncoder::finish() {
  if (conditional_) fail_kind(ErrorKind::internal, "finish inside a conditional block");
  // Make this command buffer's writes visible to the host (readback buffers, the token ring).
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  VK_CHECK(vkEndCommandBuffer(cb_));
  CommandBuffer out(*device_, cb_, label_, dispatches_, barriers_);
  cb_ = VK_NULL_HANDLE;
  return out;
}

// ------------------------------------------------------------------------------------ ComputePassEncoder

void ComputePassEncoder::setPipeline(const ComputePipeline& p) {
  if (generation_ != enc_->generation_) groups_.clear();  // bound in an earlier command buffer of the encoder
  generation_ = enc_->generation_;
  pipeline_ = &p;
  vkCmdBindPipeline(enc_->cb_, VK_PIPELINE_BIND_POINT_COMPUTE, p.handle());
}

void ComputePassEncoder::setBindGroup(uint32_t group, const BindGroup& g) {
  if (!pipeline_ || generation_ != enc_->generation_)
    fail_kind(ErrorKind::internal, "setBindGroup before setPipeline (in this command buffer of the encoder)");
  if (groups_.size() <= group) groups_.resize(group + 1, nullptr);
  groups_[group] = &g;
  VkDescriptorSet set = g.handle();
  vkCmdBindDescriptorSets(enc_->cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_->layout(), group, 1, &set, 0, nullptr);
}

void ComputePassEncoder::setPushConstants(const void* data, uint32_t size) {
  if (!pipeline_ || size != pipeline_->pushConstantBytes())
    fail_kind(ErrorKind::internal, "setPushConstants: {} bytes given, pipeline {} takes {}", size,
              pipeline_ ? pipeline_->label() : "(none)", pipeline_ ? pipeline_->pushConstantBytes() : 0);
  vkCmdPushConstants(enc_->cb_, pipeline_->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, size, data);
}

void ComputePassEncoder::track(const Buffer* indirect, uint64_t indirect_offset) {
  if (!pipeline_) fail_kind(ErrorKind::internal, "dispatch before setPipeline");
  if (generation_ != enc_->generation_) fail_kind(ErrorKind::internal, "dispatch after CommandEncoder::split without setPipeline");
  CommandEncoder::Access acc[64];
  size_t n = 0;
  for (auto* g : groups_) {
    if (!g) continue;
    for (auto& r : g->ranges()) {
      if (n + 2 > std::size(acc)) break;
      if (r.reads || !r.writes) acc[n++] = {r.buffer, r.offset, r.size, false, r.atomic};
      if (r.writes) acc[n++] = {r.buffer, r.offset, r.size, true, r.atomic};
    }
  }
  if (indirect) acc[n++] = {indirect->handle(), indirect_offset, 12, false};
  enc_->prepare(std::span(acc, n),
                indirect ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT
                         : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                chain_next_);
  chain_next_ = false;
  ++enc_->dispatches_;
  ++enc_->device_->counters().dispatches;
}

void ComputePassEncoder::dispatchWorkgroups(uint32_t x, uint32_t y, uint32_t z) {
  track(nullptr, 0);
  vkCmdDispatch(enc_->cb_, x, y, z);
}

void ComputePassEncoder::dispatchWorkgroupsIndirect(const Buffer& indirect, uint64_t offset) {
  track(&indirect, offset);
  vkCmdDispatchIndirect(enc_->cb_, indirect.handle(), offset);
}

}  // namespace bs::gpu
