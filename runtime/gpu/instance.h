// Instance and Adapter: WebGPU's entry points over a VkInstance and its physical devices.
//
// The validation layer is enabled when installed (vulkan-validationlayers) unless BLUESHIFT_VALIDATION=0;
// every message it reports is counted, so tests can fail the test that caused one.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/gpu/vk.h"

namespace bs::gpu {

// What blueshift reads off an adapter, for `blueshift devices` and for device creation.
struct AdapterInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;          // discrete | integrated | virtual | cpu | other
  std::string driver;        // driver name + info, e.g. "NVIDIA 580.82"
  std::string api_version;   // "1.3.239"
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t subgroup_size = 0;
  bool f16 = false;          // shaderFloat16
  bool int8 = false;         // shaderInt8
  bool storage16 = false;    // storageBuffer16BitAccess
  bool storage8 = false;     // storageBuffer8BitAccess
  bool subgroup_basic = false, subgroup_arithmetic = false, subgroup_shuffle = false;
  bool timeline = false;
  bool timestamps = false;
  bool subgroup_size_control = false;
  bool coopmat_nv = false;   // VK_NV_cooperative_matrix
  bool coopmat_khr = false;  // VK_KHR_cooperative_matrix
  bool conditional_rendering = false;  // VK_EXT_conditional_rendering (extension + feature)
  bool buffer_device_address = false;  // bufferDeviceAddress (Vulkan 1.2 feature): Buffer::deviceAddress
  // VK_KHR_shader_integer_dot_product with shaderIntegerDotProduct (core in 1.3; the extension is still
  // listed there): the int8 dot-product Q4_K decode kernels (matvec_q4k_i8, decode_persistent_i8).
  bool int_dot = false;
  bool int_dot_accel = false;  // integerDotProduct4x8BitPackedSignedAccelerated (a native instruction)
  // VK_EXT_shader_atomic_float with shaderBufferFloat32AtomicAdd: the persistent decode kernel's folded o projection
  // (decode_persistent*_fold) adds into x with float atomics.
  bool atomic_float_add = false;
  // shaderBufferInt64Atomics (Vulkan 1.2 feature) with shaderInt64: greedy decode's argmax folded into the head
  // (the *_argmax matvecs) takes a 64-bit atomicMax on storage buffers.
  bool int64_atomics = false;
  // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo: the driver's statistics of each
  // compiled kernel (registers and shared memory on NVIDIA), printed with BLUESHIFT_PIPELINE_STATS=1.
  bool pipeline_stats = false;
  // Streaming multiprocessors (VK_NV_shader_sm_builtins), 0 where the driver does not say: how many
  // workgroups of a persistent kernel are surely resident at once (runtime/model/persistent.cpp).
  uint32_t sm_count = 0;
  // The tensor-core prefill matmul (matmul_cm_*) runs here: VK_NV_cooperative_matrix with a 16x16x16
  // f16 x f16 -> f32 subgroup shape in compute shaders, the Vulkan memory model, subgroups of 32.
  bool coopmat_f16 = false;
  // The same 16x16x16 shape through VK_KHR_cooperative_matrix as well: the coopmat kernels' SPIR-V is then
  // rewritten to it at load (spirv_coopmat.h), which NVIDIA's driver compiles to faster fragment loads.
  bool coopmat_f16_khr = false;
  uint64_t max_storage_range = 0;
  uint32_t max_shared_memory = 0;
  uint32_t max_push_constants = 0;
  uint32_t max_workgroup_invocations = 0;
  uint64_t device_local_bytes = 0;
  float timestamp_period_ns = 1.0f;
  std::vector<std::string> missing;  // required features this adapter lacks; empty = usable
  bool usable() const { return missing.empty(); }
};

class Instance {
 public:
  // enable_validation: -1 = auto (layer installed and BLUESHIFT_VALIDATION != 0), 0 = off, 1 = on.
  explicit Instance(int enable_validation = -1);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return validation_; }
  bool debug_utils() const { return debug_utils_; }

  std::vector<AdapterInfo> enumerateAdapters() const;
  VkPhysicalDevice physical(uint32_t index) const;

  // Picks discrete, then integrated, then CPU; BLUESHIFT_DEVICE=<index|name substring> overrides.
  // Throws bs::Error(gpu) listing the adapters and what each lacks when none is usable.
  AdapterInfo requestAdapter() const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  bool debug_utils_ = false;
};

// Validation messages (errors and warnings) reported since the last reset, across all instances.
uint64_t validation_message_count();
std::string last_validation_message();
void reset_validation_messages();

}  // namespace bs::gpu
