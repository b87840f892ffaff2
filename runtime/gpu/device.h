// Device and the resources it creates, in WebGPU's names with C++ ownership:
//   Device::createBuffer / createShaderModule / createComputePipeline / createBindGroup /
//   createCommandEncoder / queue().
// Every object is an RAII handle (movable, not copyable) that must not outlive its Device.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/gpu/instance.h"
#include "runtime/gpu/spirv_reflect.h"

namespace bs::wgsl {
struct WgslModule;
}

namespace bs::gpu {

class Device;
class Queue;
class CommandEncoder;

enum class BufferUsage : uint8_t {
  storage,   // device-local, GPU only (weights, activations, KV cache)
  upload,    // host-visible, written by the CPU, read by the GPU (staging, per-run inputs)
  readback,  // host-visible and cached, written by the GPU, read by the CPU (logits, token ring)
};

struct BufferDesc {
  uint64_t size = 0;
  BufferUsage usage = BufferUsage::storage;
  std::string label;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(Device& device, const BufferDesc& desc);
  ~Buffer();
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  BufferUsage usage() const { return usage_; }
  const std::string& label() const { return label_; }
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

  // Host-visible buffers stay mapped for their whole life (WebGPU's mapAsync without the wait).
  void* mapped() const { return mapped_; }
  template <class T> T* mapped_as() const { return static_cast<T*>(mapped_); }
  // Makes GPU writes visible to the host for non-coherent memory (no-op when coherent).
  void invalidate() const;
  // Whether its memory is cached on the host (a mapped buffer's CPU reads and writes go through the caches).
  bool hostCached() const { return cached_; }
  // The buffer's GPU address (GL_EXT_buffer_reference) where Device::hasBufferDeviceAddress; else 0.
  uint64_t deviceAddress() const { return address_; }

 private:
  Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  bool coherent_ = true;
  bool cached_ = false;
  uint64_t size_ = 0;
  uint64_t address_ = 0;
  BufferUsage usage_ = BufferUsage::storage;
  std::string label_;
};

// A SPIR-V module, or a WGSL one (Device::createShaderModuleWGSL): WGSL is parsed and checked when
// the module is created, as WebGPU does, and compiled to SPIR-V per pipeline, because its override
// constants are substituted at compile time (runtime/gpu/wgsl_module.cpp).
class ShaderModule {
 public:
  ShaderModule() = default;
  ShaderModule(Device& device, std::span<const uint32_t> spirv, std::string label);
  ShaderModule(std::shared_ptr<const wgsl::WgslModule> wgsl, std::string label);
  ~ShaderModule();
  ShaderModule(ShaderModule&& o) noexcept { *this = std::move(o); }
  ShaderModule& operator=(ShaderModule&& o) noexcept;

  VkShaderModule handle() const { return module_; }
  const ReflectedShader& reflection() const { return reflection_; }
  const std::string& label() const { return label_; }
  // The parsed WGSL of a WGSL module (no VkShaderModule until a pipeline compiles it), else nullptr.
  const wgsl::WgslModule* wgsl() const { return wgsl_.get(); }

 private:
  Device* device_ = nullptr;
  VkShaderModule module_ = VK_NULL_HANDLE;
  ReflectedShader reflection_;
  std::string label_;
  std::shared_ptr<const wgsl::WgslModule> wgsl_;
};

// Specialization constant (extension over WebGPU's override constants, addressed by SpecId).
struct SpecConstant {
  uint32_t id;
  uint32_t value;  // bit pattern: use std::bit_cast for floats
};

struct ComputePipelineDesc {
  const ShaderModule* module = nullptr;
  std::vector<SpecConstant> constants;
  uint32_t required_subgroup_size = 0;  // 0 = driver's choice; needs subgroup size control
  std::string label;
  // WGSL modules only: the entry point (empty = the module's only one) and WebGPU's `constants`, the
  // values of `override` declarations by name or by @id in decimal. `constants` above also reach WGSL
  // modules: each SpecConstant sets the override with that @id (its bits read as the override's type).
  std::string entry_point;
  std::map<std::string, double> overrides;
};

class ComputePipeline {
 public:
  ComputePipeline() = default;
  ComputePipeline(Device& device, const ComputePipelineDesc& desc);
  ~ComputePipeline();
  ComputePipeline(ComputePipeline&& o) noexcept { *this = std::move(o); }
  ComputePipeline& operator=(ComputePipeline&& o) noexcept;

  VkPipeline handle() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout bindGroupLayout(uint32_t group) const { return set_layouts_.at(group); }
  uint32_t bindGroupCount() const { return uint32_t(set_layouts_.size()); }
  const std::vector<ReflectedBinding>& bindings() const { return bindings_; }
  uint32_t pushConstantBytes() const { return push_bytes_; }
  std::array<uint32_t, 3> workgroupSize() const { return local_size_; }
  const std::string& label() const { return label_; }

 private:
  void print_statistics() const;
  Device* device_ = nullptr;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSetLayout> set_layouts_;
  std::vector<ReflectedBinding> bindings_;
  uint32_t push_bytes_ = 0;
  std::array<uint32_t, 3> local_size_{1, 1, 1};
  std::string label_;
};

// The SPIR-V module of a pipeline over a WGSL module: compiled with desc's entry point, overrides and
// (by @id) specialization constants. Throws bs::Error naming the module for unknown names or ids.
ShaderModule compile_wgsl_pipeline_module(Device& device, const ComputePipelineDesc& desc);

// One buffer range bound to a binding slot. size 0 = to the end of the buffer.
struct BindGroupEntry {
  uint32_t binding;
  const Buffer* buffer;
  uint64_t offset = 0;
  uint64_t size = 0;
  // The shader touches the range through atomics alone (a chain counter, chain.glsl): two such accesses never
  // conflict, as atomic operations on it are coherent and commute; any other access to the range still does.
  bool atomic = false;
};

// The ranges a bind group binds, with the access the shader makes; the hazard tracker reads these.
struct BoundRange {
  VkBuffer buffer;
  uint64_t offset, size;
  bool reads, writes;
  bool atomic = false;  // BindGroupEntry::atomic
};

class BindGroup {
 public:
  BindGroup() = default;
  BindGroup(Device& device, const ComputePipeline& pipeline, uint32_t group, std::span<const BindGroupEntry> entries,
            std::string label);
  ~BindGroup();
  BindGroup(BindGroup&& o) noexcept { *this = std::move(o); }
  BindGroup& operator=(BindGroup&& o) noexcept;

  VkDescriptorSet handle() const { return set_; }
  uint32_t group() const { return group_; }
  const std::vector<BoundRange>& ranges() const { return ranges_; }

 private:
  Device* device_ = nullptr;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  uint32_t group_ = 0;
  std::vector<BoundRange> ranges_;
};

// Counts of GPU work the runtime issued, for stats and benchmarks (submits/token etc.).
struct DeviceCounters {
  uint64_t submits = 0;        // vkQueueSubmit calls
  uint64_t dispatches = 0;     // recorded dispatches
  uint64_t barriers = 0;       // recorded pipeline barriers
};

class Device {
 public:
  // Creates the device on the adapter `requestAdapter` picks (or `adapter_index` if >= 0).
  explicit Device(int adapter_index = -1, int enable_validation = -1);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Buffer createBuffer(const BufferDesc& desc) { return Buffer(*this, desc); }
  ShaderModule createShaderModule(std::span<const uint32_t> spirv, std::string label) {
    return ShaderModule(*this, spirv, std::move(label));
  }
  // From GLSL source, compiled with shaderc at run time (for generated shaders).
  ShaderModule createShaderModuleGLSL(const std::string& source, const std::string& label,
                                      const std::vector<std::pair<std::string, std::string>>& defines = {});
  // WebGPU's createShaderModule({code: wgsl}) through blueshift's WGSL front-end (runtime/wgsl). Invalid
  // WGSL throws bs::Error(input) with file:line:col diagnostics; `label` names the source in them.
  ShaderModule createShaderModuleWGSL(std::string_view source, std::string label);
  ComputePipeline createComputePipeline(const ComputePipelineDesc& desc) { return ComputePipeline(*this, desc); }
  BindGroup createBindGroup(const ComputePipeline& p, uint32_t group, std::span<const BindGroupEntry> entries,
                            std::string label = {}) {
    return BindGroup(*this, p, group, entries, std::move(label));
  }
  CommandEncoder createCommandEncoder(std::string label = {}, bool simultaneous = false);
  Queue& queue() { return *queue_; }

  const AdapterInfo& adapter() const { return adapter_; }
  VkDevice handle() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  uint32_t queueFamily() const { return queue_family_; }
  VkCommandPool commandPool() const { return command_pool_; }
  DeviceCounters& counters() { return counters_; }
  // Largest range one storage binding may cover (lavapipe: 128 MiB, NVIDIA: 4 GiB).
  uint64_t maxBindingRange() const { return adapter_.max_storage_range; }
  uint32_t subgroupSize() const { return adapter_.subgroup_size; }
  // Whether the tensor-core matmul kernels (matmul_cm_*, GL_NV_cooperative_matrix) can run here
  // (AdapterInfo::coopmat_f16); the extension, its feature and the Vulkan memory model that glslang
  // emits for those kernels are then enabled at creation.
  bool has_coopmat_f16() const { return coopmat_f16_; }
  // VK_KHR_cooperative_matrix is enabled too, and the NV kernels are rewritten to it at load
  // (AdapterInfo::coopmat_f16_khr; BLUESHIFT_COOPMAT_NV=1 leaves it off).
  bool has_coopmat_khr() const { return coopmat_khr_; }
  // VK_EXT_conditional_rendering is enabled (CommandEncoder::beginConditional works).
  bool hasConditionalRendering() const { return begin_conditional_ != nullptr; }
  // bufferDeviceAddress is enabled: storage buffers have a GPU address (Buffer::deviceAddress), so one
  // dispatch can reach more buffers than a stage may bind (lavapipe: 32), e.g. every layer's weights.
  bool hasBufferDeviceAddress() const { return buffer_device_address_; }
  // shaderIntegerDotProduct is enabled (AdapterInfo::int_dot; BLUESHIFT_NO_INT_DOT=1 leaves it off): the
  // kernels with SPV_KHR_integer_dot_product (*_i8*) can run here.
  bool has_int_dot() const { return int_dot_; }
  // shaderBufferFloat32AtomicAdd is enabled (AdapterInfo::atomic_float_add): kernels with float atomicAdd on storage
  // buffers (decode_persistent*_fold) can run here.
  bool has_atomic_float_add() const { return atomic_float_add_; }
  // shaderBufferInt64Atomics is enabled (AdapterInfo::int64_atomics): the *_argmax matvecs can run here.
  bool has_int64_atomics() const { return int64_atomics_; }
  // BLUESHIFT_PIPELINE_STATS=1 on a device with VK_KHR_pipeline_executable_properties: every compute
  // pipeline is created with its statistics captured, and they go to stderr as one line per executable
  // ("pipeline-stats LABEL: Register Count=96, ..."), to see what bounds a kernel's occupancy.
  PFN_vkGetPipelineExecutablePropertiesKHR executablePropertiesFn() const { return executable_properties_; }
  PFN_vkGetPipelineExecutableStatisticsKHR executableStatisticsFn() const { return executable_statistics_; }
  PFN_vkCmdBeginConditionalRenderingEXT beginConditionalFn() const { return begin_conditional_; }
  PFN_vkCmdEndConditionalRenderingEXT endConditionalFn() const { return end_conditional_; }

  uint32_t findMemoryType(uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid = 0) const;
  void setName(VkObjectType type, uint64_t handle, const std::string& name) const;
  // Device-local bytes currently allocated through this device.
  uint64_t allocatedBytes() const { return allocated_bytes_; }
  void trackAllocation(int64_t delta) { allocated_bytes_ += delta; }

  VkDescriptorPool descriptorPool();

 private:
  std::unique_ptr<Instance> instance_;
  AdapterInfo adapter_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptor_pools_;
  uint32_t sets_in_pool_ = 0;
  std::unique_ptr<Queue> queue_;
  VkPhysicalDeviceMemoryProperties memory_{};
  PFN_vkSetDebugUtilsObjectNameEXT set_name_ = nullptr;
  DeviceCounters counters_;
  uint64_t allocated_bytes_ = 0;
  bool coopmat_f16_ = false;
  bool coopmat_khr_ = false;
  bool buffer_device_address_ = false;
  bool int_dot_ = false;
  bool atomic_float_add_ = false;
  bool int64_atomics_ = false;
  PFN_vkGetPipelineExecutablePropertiesKHR executable_properties_ = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR executable_statistics_ = nullptr;
  PFN_vkCmdBeginConditionalRenderingEXT begin_conditional_ = nullptr;
  PFN_vkCmdEndConditionalRenderingEXT end_conditional_ = nullptr;
};

}  // namespace bs::gpu
