#include "runtime/gpu/device.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "runtime/base/env.h"
#include "runtime/gpu/command.h"
#include "runtime/gpu/queue.h"
#include "runtime/gpu/spirv_coopmat.h"

namespace bs::gpu {

Device::Device(int adapter_index, int enable_validation)
    : instance_(std::make_unique<Instance>(enable_validation)) {
  if (adapter_index >= 0) {
    auto all = instance_->enumerateAdapters();
    if (size_t(adapter_index) >= all.size())
      fail_kind(ErrorKind::gpu, "adapter {} does not exist ({} adapters)", adapter_index, all.size());
    adapter_ = all[adapter_index];
    if (!adapter_.usable()) {
      std::string m;
      for (auto& s : adapter_.missing) m += "\n  - " + s;
      fail_kind(ErrorKind::gpu, "{} lacks features blueshift needs:{}", adapter_.name, m);
    }
  } else {
    adapter_ = instance_->requestAdapter();
  }
  physical_ = instance_->physical(adapter_.index);
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &nq, qs.data());
  queue_family_ = UINT32_MAX;
  for (uint32_t i = 0; i < nq; ++i)  // prefer a queue with graphics too: it is the fast general queue on NVIDIA
    if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qs[i].timestampValidBits && queue_family_ == UINT32_MAX)
      queue_family_ = i;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  // Features: only what the engine needs, plus int8 / 8-bit storage where present.
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.shaderFloat16 = VK_TRUE;
  f12.shaderInt8 = adapter_.int8;
  f12.storageBuffer8BitAccess = adapter_.storage8;
  f12.timelineSemaphore = VK_TRUE;
  // BLUESHIFT_NO_BDA=1 leaves buffer device addresses off (the persistent decode kernel then falls back).
  buffer_device_address_ = adapter_.buffer_device_address && !env_switch("BLUESHIFT_NO_BDA");
  f12.bufferDeviceAddress = buffer_device_address_;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  f11.storageBuffer16BitAccess = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  VkPhysicalDeviceFeatures supported{};
  vkGetPhysicalDeviceFeatures(physical_, &supported);
  f2.features.shaderInt16 = supported.shaderInt16;
  f2.features.shaderInt64 = supported.shaderInt64;
  // 64-bit atomics on storage buffers (the *_argmax head matvecs), wherever offered: BLUESHIFT_NO_INT64_ATOMICS=1 leaves
  // them off, and greedy decode then takes its argmax in a dispatch of its own.
  int64_atomics_ = adapter_.int64_atomics && !env_switch("BLUESHIFT_NO_INT64_ATOMICS");
  f12.shaderBufferInt64Atomics = int64_atomics_;

  VkPhysicalDeviceSubgroupSizeControlFeatures ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  std::vector<const char*> exts;
  if (adapter_.subgroup_size_control) {
    VkPhysicalDeviceSubgroupSizeControlFeatures q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
    VkPhysicalDeviceFeatures2 qf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &q};
    vkGetPhysicalDeviceFeatures2(physical_, &qf);
    if (q.subgroupSizeControl && q.computeFullSubgroups) {
      ssc.subgroupSizeControl = VK_TRUE;
      ssc.computeFullSubgroups = VK_TRUE;
      f12.pNext = &ssc;
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(physical_, &p);
      if (p.apiVersion < VK_API_VERSION_1_3) exts.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    } else {
      adapter_.subgroup_size_control = false;
    }
  }

  // An extension's feature struct into f2's chain (it must outlive vkCreateDevice), the extension into the list.
  auto chain = [&](auto& features, const char* extension) {
    features.pNext = f2.pNext;
    f2.pNext = &features;
    exts.push_back(extension);
  };

  // Tensor cores for the prefill GEMM (matmul_cm_*), only where everything those kernels need is there;
  // elsewhere (lavapipe) nothing is enabled and the scalar matmul runs.
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  if (adapter_.coopmat_f16) {
    coopmat_f16_ = true;
    cm.cooperativeMatrix = VK_TRUE;
    f12.vulkanMemoryModel = VK_TRUE;
    chain(cm, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  // ... and the KHR extension beside it where the driver has it: every module that declares the NV capability
  // is rewritten to KHR at load (ShaderModule, spirv_coopmat.h). BLUESHIFT_COOPMAT_NV=1 keeps the NV kernels.
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmk{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  if (adapter_.coopmat_f16_khr && !env_switch("BLUESHIFT_COOPMAT_NV")) {
    coopmat_khr_ = true;
    cmk.cooperativeMatrix = VK_TRUE;
    chain(cmk, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }

  // Integer dot products (the int8 Q4_K decode kernels), wherever offered: enabling them costs nothing.
  VkPhysicalDeviceShaderIntegerDotProductFeatures idf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (adapter_.int_dot && !env_switch("BLUESHIFT_NO_INT_DOT")) {
    int_dot_ = true;
    idf.shaderIntegerDotProduct = VK_TRUE;
    chain(idf, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  }

  // Float atomic adds on storage buffers (the persistent decode kernel's folded o projection), wherever offered.
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT aff{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  if (adapter_.atomic_float_add) {
    atomic_float_add_ = true;
    aff.shaderBufferFloat32AtomicAdd = VK_TRUE;
    chain(aff, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }

  // Conditional rendering skips a decode step's dispatches once the GPU has decided to stop (the
  // decode loop records direct dispatches inside one conditional block per step; see Session).
  // BLUESHIFT_NO_CONDITIONAL=1 leaves it off (the loop then gates indirect dispatches instead).
  VkPhysicalDeviceConditionalRenderingFeaturesEXT crf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
  bool conditional = adapter_.conditional_rendering && !env_switch("BLUESHIFT_NO_CONDITIONAL");
  if (conditional) {
    crf.conditionalRendering = VK_TRUE;
    chain(crf, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME);
  }

  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool stats = adapter_.pipeline_stats && env_switch("BLUESHIFT_PIPELINE_STATS");
  if (stats) {
    pef.pipelineExecutableInfo = VK_TRUE;
    chain(pef, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }

  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = uint32_t(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  VK_CHECK(vkCreateDevice(physical_, &dci, nullptr, &device_));

  if (conditional) {
    begin_conditional_ = (PFN_vkCmdBeginConditionalRenderingEXT)vkGetDeviceProcAddr(device_, "vkCmdBeginConditionalRenderingEXT");
    end_conditional_ = (PFN_vkCmdEndConditionalRenderingEXT)vkGetDeviceProcAddr(device_, "vkCmdEndConditionalRenderingEXT");
    if (!begin_conditional_ || !end_conditional_) begin_conditional_ = nullptr, end_conditional_ = nullptr;
  }
  if (stats) {
    executable_properties_ = (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
        device_, "vkGetPipelineExecutablePropertiesKHR");
    executable_statistics_ = (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
        device_, "vkGetPipelineExecutableStatisticsKHR");
    if (!executable_properties_ || !executable_statistics_) executable_properties_ = nullptr, executable_statistics_ = nullptr;
  }
  // Object names (validation messages, RenderDoc, Nsight) are set where the validation layer runs or
  // BLUESHIFT_DEBUG_NAMES=1: recording names every bind group, a call into the driver per dispatch.
  const bool names = env_uint("BLUESHIFT_DEBUG_NAMES", instance_->validation() ? 1 : 0) != 0;
  if (instance_->debug_utils() && names)
    set_name_ = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(device_, "vkSetDebugUtilsObjectNameEXT");

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  VK_CHECK(vkCreateCommandPool(device_, &pci, nullptr, &command_pool_));
  queue_ = std::make_unique<Queue>(*this, queue_family_);
}

Device::~Device() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  queue_.reset();
  for (auto p : descriptor_pools_) vkDestroyDescriptorPool(device_, p, nullptr);
  vkDestroyCommandPool(device_, command_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

uint32_t Device::findMemoryType(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) const {
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    auto f = memory_.memoryTypes[i].propertyFlags;
    if ((bits & (1u << i)) && (f & want) == want && !(f & avoid)) return i;
  }
  return UINT32_MAX;
}

void Device::setName(VkObjectType type, uint64_t handle, const std::string& name) const {
  if (!set_name_ || name.empty()) return;
  VkDebugUtilsObjectNameInfoEXT ni{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
  ni.objectType = type;
  ni.objectHandle = handle;
  ni.pObjectName = name.c_str();
  set_name_(device_, &ni);
}

VkDescriptorPool Device::descriptorPool() {
  constexpr uint32_t kSets = 1024;
  if (descriptor_pools_.empty() || sets_in_pool_ >= kSets) {
    VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSets * 8},
                                    {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSets}};
    VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    ci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    ci.maxSets = kSets;
    ci.poolSizeCount = 2;
    ci.pPoolSizes = sizes;
    VkDescriptorPool pool;
    VK_CHECK(vkCreateDescriptorPool(device_, &ci, nullptr, &pool));
    descriptor_pools_.push_back(pool);
    sets_in_pool_ = 0;
  }
  ++sets_in_pool_;
  return descriptor_pools_.back();
}

CommandEncoder Device::createCommandEncoder(std::string label, bool simultaneous) {
  return CommandEncoder(*this, std::move(label), simultaneous);
}

// ---------------------------------------------------------------------------------------------- Buffer

// BLUESHIFT_UPLOAD_MEMORY: the staging memory's type, wc (write-combined, the default) or cached.
static bool upload_cached() {
  static const bool cached = [] {
    const char* e = std::getenv("BLUESHIFT_UPLOAD_MEMORY");
    std::string_view v = e ? e : "wc";
    if (v != "wc" && v != "cached") fail_kind(ErrorKind::usage, "BLUESHIFT_UPLOAD_MEMORY={}: expected wc or cached", v);
    return v == "cached";
  }();
  return cached;
}

Buffer::Buffer(Device& device, const BufferDesc& desc)
    : device_(&device), size_(desc.size), usage_(desc.usage), label_(desc.label) {
  if (desc.size == 0) fail_kind(ErrorKind::internal, "createBuffer({}): size 0", desc.label);
  if (desc.usage == BufferUsage::upload) upload_cached();  // a bad value fails before anything is created
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = desc.size;
  ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
             VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
             (device.hasConditionalRendering() ? VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT : 0);
  const bool address = device.hasBufferDeviceAddress() && desc.usage == BufferUsage::storage;
  if (address) ci.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VK_CHECK(vkCreateBuffer(device.handle(), &ci, nullptr, &buffer_));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device.handle(), buffer_, &req);

  constexpr auto kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  constexpr auto kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  constexpr auto kCoherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  constexpr auto kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  uint32_t type = UINT32_MAX;
  switch (desc.usage) {
    case BufferUsage::storage:
      type = device.findMemoryType(req.memoryTypeBits, kLocal);
      break;
    case BufferUsage::upload:  // plain host memory, write-combined: the GPU reads it once
      // BLUESHIFT_UPLOAD_MEMORY=cached takes a cached coherent type instead (A/B runs). With one thread writing it,
      // a cached type wrote no faster (8B f16, 16 GB: 2.46-2.92 s against 2.36-2.63; session 16, S7); with 8 threads
      // write-combined memory tops out near 11 GB/s (S9), which cached memory may not.
      if (upload_cached()) type = device.findMemoryType(req.memoryTypeBits, kHost | kCoherent | kCached, kLocal);
      if (type == UINT32_MAX) type = device.findMemoryType(req.memoryTypeBits, kHost | kCoherent, kLocal);
      if (type == UINT32_MAX) type = device.findMemoryType(req.memoryTypeBits, kHost | kCoherent);
      break;
    case BufferUsage::readback:
      type = device.findMemoryType(req.memoryTypeBits, kHost | kCoherent | kCached);
      if (type == UINT32_MAX) type = device.findMemoryType(req.memoryTypeBits, kHost | kCached);
      if (type == UINT32_MAX) type = device.findMemoryType(req.memoryTypeBits, kHost | kCoherent);
      break;
  }
  if (type == UINT32_MAX) fail_kind(ErrorKind::gpu, "createBuffer({}): no suitable memory type", desc.label);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  VkMemoryAllocateFlagsInfo af{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  af.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  if (address) ai.pNext = &af;
  VkResult r = vkAllocateMemory(device.handle(), &ai, nullptr, &memory_);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    vkDestroyBuffer(device.handle(), buffer_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    fail_kind(ErrorKind::resources, "out of GPU memory allocating {} ({} bytes; {} bytes already allocated)",
              desc.label.empty() ? "a buffer" : desc.label, desc.size, device.allocatedBytes());
  }
  VK_CHECK(r);
  VK_CHECK(vkBindBufferMemory(device.handle(), buffer_, memory_, 0));
  if (address) {
    VkBufferDeviceAddressInfo bi{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    bi.buffer = buffer_;
    address_ = vkGetBufferDeviceAddress(device.handle(), &bi);
  }
  VkMemoryPropertyFlags flags = 0;
  {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(device.physical(), &mp);
    flags = mp.memoryTypes[type].propertyFlags;
  }
  coherent_ = flags & kCoherent;
  cached_ = flags & kCached;
  if (desc.usage != BufferUsage::storage) VK_CHECK(vkMapMemory(device.handle(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_));
  device.trackAllocation(int64_t(req.size));
  device.setName(VK_OBJECT_TYPE_BUFFER, uint64_t(buffer_), desc.label);
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    this->~Buffer();
    device_ = o.device_; buffer_ = o.buffer_; memory_ = o.memory_; mapped_ = o.mapped_;
    coherent_ = o.coherent_; cached_ = o.cached_; size_ = o.size_; address_ = o.address_; usage_ = o.usage_; label_ = std::move(o.label_);
    o.buffer_ = VK_NULL_HANDLE; o.memory_ = VK_NULL_HANDLE; o.mapped_ = nullptr;
  }
  return *this;
}

Buffer::~Buffer() {
  if (!device_ || !buffer_) return;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_->handle(), buffer_, &req);
  device_->trackAllocation(-int64_t(req.size));
  vkDestroyBuffer(device_->handle(), buffer_, nullptr);
  vkFreeMemory(device_->handle(), memory_, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
}

void Buffer::invalidate() const {
  if (coherent_ || !mapped_) return;
  VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  r.memory = memory_;
  r.size = VK_WHOLE_SIZE;
  vkInvalidateMappedMemoryRanges(device_->handle(), 1, &r);
}

// ----------------------------------------------------------------------------------------- ShaderModule

ShaderModule::ShaderModule(Device& device, std::span<const uint32_t> spirv, std::string label)
    : device_(&device), reflection_(reflect_spirv(spirv)), label_(std::move(label)) {
  std::optional<CoopmatRewrite> khr;
  if (device.has_coopmat_khr() && uses_coopmat_nv(spirv)) {
    std::string why;
    khr = coopmat_nv_to_khr(spirv, &why);
    if (khr) spirv = khr->words;
    if (env_switch("BLUESHIFT_PIPELINE_STATS"))  // which kernels the rewrite took, beside their statistics
      std::fprintf(stderr, "coopmat %s: %s\n", label_.c_str(),
                   khr ? fmt::format("VK_KHR_cooperative_matrix ({} matrix types)", khr->types).c_str()
                       : ("stays on VK_NV_cooperative_matrix: " + why).c_str());
  }
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = spirv.size() * 4;
  ci.pCode = spirv.data();
  VK_CHECK(vkCreateShaderModule(device.handle(), &ci, nullptr, &module_));
  device.setName(VK_OBJECT_TYPE_SHADER_MODULE, uint64_t(module_), label_);
}

ShaderModule& ShaderModule::operator=(ShaderModule&& o) noexcept {
  if (this != &o) {
    this->~ShaderModule();
    device_ = o.device_; module_ = o.module_; reflection_ = std::move(o.reflection_); label_ = std::move(o.label_);
    wgsl_ = std::move(o.wgsl_);
    o.module_ = VK_NULL_HANDLE;
  }
  return *this;
}

ShaderModule::~ShaderModule() {
  if (device_ && module_) vkDestroyShaderModule(device_->handle(), module_, nullptr);
  module_ = VK_NULL_HANDLE;
}

// -------------------------------------------------------------------------------------- ComputePipeline

ComputePipeline::ComputePipeline(Device& device, const ComputePipelineDesc& desc)
    : device_(&device), label_(desc.label) {
  // A WGSL module becomes SPIR-V here, with this pipeline's constants substituted; the layout is then
  // reflected from that SPIR-V like any other (wgsl_module.cpp).
  ShaderModule compiled;
  const ShaderModule* module = desc.module;
  if (module->wgsl()) {
    compiled = compile_wgsl_pipeline_module(device, desc);
    module = &compiled;
  }
  const auto& refl = module->reflection();
  bindings_ = refl.bindings;
  push_bytes_ = refl.push_constant_bytes;
  local_size_ = refl.local_size;

  // Descriptor set layouts derived from the SPIR-V: one per set index used.
  uint32_t n_sets = 0;
  for (auto& b : bindings_) n_sets = std::max(n_sets, b.set + 1);
  set_layouts_.resize(n_sets, VK_NULL_HANDLE);
  for (uint32_t s = 0; s < n_sets; ++s) {
    std::vector<VkDescriptorSetLayoutBinding> lb;
    for (auto& b : bindings_) {
      if (b.set != s) continue;
      lb.push_back({b.binding,
                    b.kind == BindingKind::storage ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                    1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    }
    VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    ci.bindingCount = uint32_t(lb.size());
    ci.pBindings = lb.data();
    VK_CHECK(vkCreateDescriptorSetLayout(device.handle(), &ci, nullptr, &set_layouts_[s]));
  }
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes_};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.setLayoutCount = n_sets;
  lci.pSetLayouts = set_layouts_.data();
  lci.pushConstantRangeCount = push_bytes_ ? 1 : 0;
  lci.pPushConstantRanges = &pcr;
  VK_CHECK(vkCreatePipelineLayout(device.handle(), &lci, nullptr, &layout_));

  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> data;
  for (auto& c : desc.constants) {
    if (desc.module->wgsl()) break;  // already substituted into the WGSL
    entries.push_back({c.id, uint32_t(data.size() * 4), 4});
    data.push_back(c.value);
    for (int k = 0; k < 3; ++k)
      if (refl.local_size_spec_id[k] == int32_t(c.id)) local_size_[k] = c.value;
  }
  VkSpecializationInfo si{uint32_t(entries.size()), entries.data(), data.size() * 4, data.data()};

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  rss.requiredSubgroupSize = desc.required_subgroup_size;
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module->handle();
  ci.stage.pName = refl.entry.c_str();
  ci.stage.pSpecializationInfo = entries.empty() ? nullptr : &si;
  if (desc.required_subgroup_size && device.adapter().subgroup_size_control) {
    ci.stage.pNext = &rss;
    ci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  ci.layout = layout_;
  if (device.executableStatisticsFn()) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VK_CHECK(vkCreateComputePipelines(device.handle(), VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline_));
  device.setName(VK_OBJECT_TYPE_PIPELINE, uint64_t(pipeline_), label_);
  if (device.executableStatisticsFn()) print_statistics();
}

// One stderr line per executable of this pipeline (a compute pipeline has one): the driver's statistics,
// "name=value" (NVIDIA's driver: register count, binary size, shared memory size).
void ComputePipeline::print_statistics() const {
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipeline_;
  uint32_t n = 0;
  if (device_->executablePropertiesFn()(device_->handle(), &pi, &n, nullptr) != VK_SUCCESS) return;
  std::vector<VkPipelineExecutablePropertiesKHR> props(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  if (device_->executablePropertiesFn()(device_->handle(), &pi, &n, props.data()) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline_;
    ei.executableIndex = e;
    uint32_t ns = 0;
    if (device_->executableStatisticsFn()(device_->handle(), &ei, &ns, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (device_->executableStatisticsFn()(device_->handle(), &ei, &ns, st.data()) != VK_SUCCESS) continue;
    std::string line = fmt::format("pipeline-stats {} [{}]:", label_, props[e].name);
    for (auto& s : st) {
      line += fmt::format(" {}=", s.name);
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += s.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: line += fmt::format("{:g}", s.value.f64); break;
        default: line += "?";
      }
      line += ',';
    }
    line.back() = '\n';
    std::fputs(line.c_str(), stderr);
  }
}

ComputePipeline& ComputePipeline::operator=(ComputePipeline&& o) noexcept {
  if (this != &o) {
    this->~ComputePipeline();
    device_ = o.device_; pipeline_ = o.pipeline_; layout_ = o.layout_; set_layouts_ = std::move(o.set_layouts_);
    bindings_ = std::move(o.bindings_); push_bytes_ = o.push_bytes_; local_size_ = o.local_size_;
    label_ = std::move(o.label_);
    o.pipeline_ = VK_NULL_HANDLE; o.layout_ = VK_NULL_HANDLE; o.set_layouts_.clear();
  }
  return *this;
}

ComputePipeline::~ComputePipeline() {
  if (!device_) return;
  if (pipeline_) vkDestroyPipeline(device_->handle(), pipeline_, nullptr);
  if (layout_) vkDestroyPipelineLayout(device_->handle(), layout_, nullptr);
  for (auto l : set_layouts_) vkDestroyDescriptorSetLayout(device_->handle(), l, nullptr);
  pipeline_ = VK_NULL_HANDLE; layout_ = VK_NULL_HANDLE; set_layouts_.clear();
}

// -------------------------------------------------------------------------------------------- BindGroup

BindGroup::BindGroup(Device& device, const ComputePipeline& p, uint32_t group, std::span<const BindGroupEntry> entries,
                     std::string label)
    : device_(&device), group_(group) {
  pool_ = device.descriptorPool();
  VkDescriptorSetLayout layout = p.bindGroupLayout(group);
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = pool_;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VK_CHECK(vkAllocateDescriptorSets(device.handle(), &ai, &set_));

  std::vector<VkDescriptorBufferInfo> infos(entries.size());
  std::vector<VkWriteDescriptorSet> writes;
  size_t expected = 0;
  for (auto& b : p.bindings()) expected += b.set == group;
  if (entries.size() != expected)
    fail_kind(ErrorKind::internal, "createBindGroup({}): pipeline {} group {} has {} bindings, {} given", label,
              p.label(), group, expected, entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const ReflectedBinding* rb = nullptr;
    for (auto& b : p.bindings())
      if (b.set == group && b.binding == e.binding) rb = &b;
    if (!rb) fail_kind(ErrorKind::internal, "createBindGroup({}): pipeline {} has no binding {}", label, p.label(), e.binding);
    uint64_t size = e.size ? e.size : e.buffer->size() - e.offset;
    if (e.offset + size > e.buffer->size())
      fail_kind(ErrorKind::internal, "createBindGroup({}): binding {} range [{}, +{}) exceeds buffer {} of {} bytes",
                label, e.binding, e.offset, size, e.buffer->label(), e.buffer->size());
    if (size > device.maxBindingRange())
      fail_kind(ErrorKind::resources, "createBindGroup({}): binding {} covers {} bytes, over the device's {} byte limit",
                label, e.binding, size, device.maxBindingRange());
    infos[i] = {e.buffer->handle(), e.offset, size};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set_;
    w.dstBinding = e.binding;
    w.descriptorCount = 1;
    w.descriptorType = rb->kind == BindingKind::storage ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    w.pBufferInfo = &infos[i];
    writes.push_back(w);
    ranges_.push_back({e.buffer->handle(), e.offset, size, rb->reads, rb->writes, e.atomic});
  }
  vkUpdateDescriptorSets(device.handle(), uint32_t(writes.size()), writes.data(), 0, nullptr);
  device.setName(VK_OBJECT_TYPE_DESCRIPTOR_SET, uint64_t(set_), label);
}

BindGroup& BindGroup::operator=(BindGroup&& o) noexcept {
  if (this != &o) {
    this->~BindGroup();
    device_ = o.device_; pool_ = o.pool_; set_ = o.set_; group_ = o.group_; ranges_ = std::move(o.ranges_);
    o.set_ = VK_NULL_HANDLE;
  }
  return *this;
}

BindGroup::~BindGroup() {
  if (device_ && set_) vkFreeDescriptorSets(device_->handle(), pool_, 1, &set_);
  set_ = VK_NULL_HANDLE;
}

}  // namespace bs::gpu
