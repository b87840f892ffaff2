#include "runtime/gpu/instance.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace bs::gpu {

static std::atomic<uint64_t> g_validation_count{0};
static std::mutex g_validation_mutex;
static std::string g_last_validation;

uint64_t validation_message_count() { return g_validation_count.load(); }
std::string last_validation_message() {
  std::lock_guard lock(g_validation_mutex);
  return g_last_validation;
}
void reset_validation_messages() {
  g_validation_count = 0;
  std::lock_guard lock(g_validation_mutex);
  g_last_validation.clear();
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                       VkDebugUtilsMessageTypeFlagsEXT,
                                                       const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_validation_count;
    std::lock_guard lock(g_validation_mutex);
    g_last_validation = data->pMessage ? data->pMessage : "";
    std::fprintf(stderr, "vulkan validation: %s\n", g_last_validation.c_str());
  }
  return VK_FALSE;
}

static bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

static bool has_instance_extension(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

Instance::Instance(int enable_validation) {
  const char* kLayer = "VK_LAYER_KHRONOS_validation";
  if (enable_validation < 0) {
    const char* env = std::getenv("BLUESHIFT_VALIDATION");
    enable_validation = (env && std::strcmp(env, "0") == 0) ? 0 : 1;
    if (enable_validation && !has_layer(kLayer)) enable_validation = 0;
  }
  validation_ = enable_validation == 1;
  debug_utils_ = has_instance_extension(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

  uint32_t api = VK_API_VERSION_1_2;
  vkEnumerateInstanceVersion(&api);
  if (api > VK_API_VERSION_1_3) api = VK_API_VERSION_1_3;

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "blueshift";
  app.pEngineName = "blueshift";
  app.apiVersion = api;

  std::vector<const char*> exts;
  if (debug_utils_) exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = uint32_t(exts.size());
  ci.ppEnabledExtensionNames = exts.data();
  if (validation_) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &kLayer;
  }
  VkResult r = vkCreateInstance(&ci, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    fail_kind(ErrorKind::gpu, "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER); "
                              "install mesa-vulkan-drivers for the CPU driver or your GPU's Vulkan driver");
  VK_CHECK(r);

  if (debug_utils_) {
    auto create = (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT");
    VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = on_debug_message;
    if (create && validation_) VK_CHECK(create(instance_, &mi, nullptr, &messenger_));
  }
}

Instance::~Instance() {
  if (messenger_) {
    auto destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT");
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

static std::vector<VkPhysicalDevice> physical_devices(VkInstance inst) {
  uint32_t n = 0;
  VK_CHECK(vkEnumeratePhysicalDevices(inst, &n, nullptr));
  std::vector<VkPhysicalDevice> devs(n);
  VK_CHECK(vkEnumeratePhysicalDevices(inst, &n, devs.data()));
  return devs;
}

VkPhysicalDevice Instance::physical(uint32_t index) const {
  auto devs = physical_devices(instance_);
  if (index >= devs.size()) fail_kind(ErrorKind::gpu, "adapter index {} out of range ({} adapters)", index, devs.size());
  return devs[index];
}

static std::string version_string(uint32_t v) {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

// VK_NV_cooperative_matrix with the one shape matmul_cm.comp uses (16x16x16, f16 A and B, f32 C and D,
// subgroup scope) in compute shaders, the Vulkan memory model, and subgroups of 32 (the kernel splits
// its tile among the 4 or 8 subgroups of 32 that make up its workgroup).
static bool coopmat_f16_supported(VkInstance instance, VkPhysicalDevice pd, const AdapterInfo& a) {
  if (!a.coopmat_nv || a.subgroup_size != 32) return false;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &cm};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  VkPhysicalDeviceCooperativeMatrixPropertiesNV cp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &cp};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  if (!cm.cooperativeMatrix || !f12.vulkanMemoryModel || !(cp.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT))
    return false;
  auto get = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
      instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  if (!get) return false;
  uint32_t n = 0;
  if (get(pd, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (get(pd, &n, shapes.data()) != VK_SUCCESS) return false;
  for (const auto& s : shapes)
    if (s.MSize == 16 && s.NSize == 16 && s.KSize == 16 && s.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
        s.BType == VK_COMPONENT_TYPE_FLOAT16_NV && s.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
        s.DType == VK_COMPONENT_TYPE_FLOAT32_NV && s.scope == VK_SCOPE_SUBGROUP_NV)
      return true;
  return false;
}

// VK_KHR_cooperative_matrix with the shape above; only asked where the NV one is there too, since the kernels
// are written (and built) against the NV extension and rewritten.
static bool coopmat_f16_khr_supported(VkInstance instance, VkPhysicalDevice pd, const AdapterInfo& a) {
  if (!a.coopmat_f16 || !a.coopmat_khr) return false;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cm};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  if (!cm.cooperativeMatrix) return false;
  auto get = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)vkGetInstanceProcAddr(
      instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  if (!get) return false;
  uint32_t n = 0;
  if (get(pd, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesKHR> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
  if (get(pd, &n, shapes.data()) != VK_SUCCESS) return false;
  for (const auto& s : shapes)
    if (s.MSize == 16 && s.NSize == 16 && s.KSize == 16 && s.AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
        s.BType == VK_COMPONENT_TYPE_FLOAT16_KHR && s.CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
        s.ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && s.scope == VK_SCOPE_SUBGROUP_KHR)
      return true;
  return false;
}

static AdapterInfo query_adapter(VkInstance instance, VkPhysicalDevice pd, uint32_t index) {
  AdapterInfo a;
  a.index = index;

  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &driver};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub};
  vkGetPhysicalDeviceProperties2(pd, &props);
  const auto& p = props.properties;
  a.name = p.deviceName;
  switch (p.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: a.type = "discrete"; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: a.type = "integrated"; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: a.type = "virtual"; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: a.type = "cpu"; break;
    default: a.type = "other";
  }
  a.driver = std::string(driver.driverName) + " " + driver.driverInfo;
  a.api_version = version_string(p.apiVersion);
  a.vendor_id = p.vendorID;
  a.device_id = p.deviceID;
  a.subgroup_size = sub.subgroupSize;
  a.subgroup_basic = sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT;
  a.subgroup_arithmetic = sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  a.subgroup_shuffle = sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  bool subgroup_compute = sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT;
  a.max_storage_range = p.limits.maxStorageBufferRange;
  a.max_shared_memory = p.limits.maxComputeSharedMemorySize;
  a.max_push_constants = p.limits.maxPushConstantsSize;
  a.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  a.timestamp_period_ns = p.limits.timestampPeriod;

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  vkGetPhysicalDeviceFeatures2(pd, &feats);
  a.f16 = f12.shaderFloat16;
  a.int8 = f12.shaderInt8;
  a.storage16 = f11.storageBuffer16BitAccess;
  a.storage8 = f12.storageBuffer8BitAccess;
  a.timeline = f12.timelineSemaphore;
  a.buffer_device_address = f12.bufferDeviceAddress;
  a.int64_atomics = f12.shaderBufferInt64Atomics && feats.features.shaderInt64;

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs.data());
  for (auto& q : qs)
    if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) && q.timestampValidBits > 0) a.timestamps = true;

  uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &ne, exts.data());
  for (auto& e : exts) {
    if (!std::strcmp(e.extensionName, "VK_NV_cooperative_matrix")) a.coopmat_nv = true;
    if (!std::strcmp(e.extensionName, "VK_KHR_cooperative_matrix")) a.coopmat_khr = true;
    if (!std::strcmp(e.extensionName, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) a.subgroup_size_control = true;
    if (!std::strcmp(e.extensionName, VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME)) a.conditional_rendering = true;
    if (!std::strcmp(e.extensionName, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) a.int_dot = true;
    if (!std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) a.pipeline_stats = true;
    if (!std::strcmp(e.extensionName, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) a.atomic_float_add = true;
    if (!std::strcmp(e.extensionName, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
      VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm};
      vkGetPhysicalDeviceProperties2(pd, &p2);
      a.sm_count = sm.shaderSMCount;
    }
  }
  if (a.conditional_rendering) {
    VkPhysicalDeviceConditionalRenderingFeaturesEXT cr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_CONDITIONAL_RENDERING_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 cf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cr};
    vkGetPhysicalDeviceFeatures2(pd, &cf);
    a.conditional_rendering = cr.conditionalRendering;
  }
  if (a.int_dot) {
    VkPhysicalDeviceShaderIntegerDotProductFeatures idf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
    VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &idf};
    vkGetPhysicalDeviceFeatures2(pd, &f);
    VkPhysicalDeviceShaderIntegerDotProductProperties idp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &idp};
    vkGetPhysicalDeviceProperties2(pd, &p2);
    a.int_dot = idf.shaderIntegerDotProduct;
    a.int_dot_accel = a.int_dot && idp.integerDotProduct4x8BitPackedSignedAccelerated;
  }
  if (a.atomic_float_add) {
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &af};
    vkGetPhysicalDeviceFeatures2(pd, &f);
    a.atomic_float_add = af.shaderBufferFloat32AtomicAdd;
  }
  if (a.pipeline_stats) {
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &pe};
    vkGetPhysicalDeviceFeatures2(pd, &f);
    a.pipeline_stats = pe.pipelineExecutableInfo;
  }
  if (p.apiVersion >= VK_API_VERSION_1_3) a.subgroup_size_control = true;
  a.coopmat_f16 = coopmat_f16_supported(instance, pd, a);
  a.coopmat_f16_khr = coopmat_f16_khr_supported(instance, pd, a);

  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) a.device_local_bytes += mem.memoryHeaps[i].size;

  // The features the engine needs; one list so the error names every one that is missing.
  if (p.apiVersion < VK_API_VERSION_1_2) a.missing.push_back("Vulkan 1.2 (device reports " + a.api_version + ")");
  if (!a.f16) a.missing.push_back("shaderFloat16 (f16 arithmetic)");
  if (!a.storage16) a.missing.push_back("storageBuffer16BitAccess (16-bit storage)");
  if (!subgroup_compute) a.missing.push_back("subgroup operations in compute shaders");
  if (!a.subgroup_basic) a.missing.push_back("subgroup basic");
  if (!a.subgroup_arithmetic) a.missing.push_back("subgroup arithmetic");
  if (!a.subgroup_shuffle) a.missing.push_back("subgroup shuffle");
  if (!a.timeline) a.missing.push_back("timelineSemaphore");
  if (!a.timestamps) a.missing.push_back("timestamp queries on a compute queue");
  return a;
}

std::vector<AdapterInfo> Instance::enumerateAdapters() const {
  std::vector<AdapterInfo> out;
  auto devs = physical_devices(instance_);
  for (uint32_t i = 0; i < devs.size(); ++i) out.push_back(query_adapter(instance_, devs[i], i));
  return out;
}

AdapterInfo Instance::requestAdapter() const {
  auto adapters = enumerateAdapters();
  if (adapters.empty()) fail_kind(ErrorKind::gpu, "no Vulkan adapter found (is a Vulkan driver installed?)");

  auto describe = [&] {
    std::string s;
    for (auto& a : adapters) {
      s += fmt::format("\n  [{}] {} ({})", a.index, a.name, a.type);
      if (!a.usable()) {
        s += ": missing ";
        for (size_t i = 0; i < a.missing.size(); ++i) s += (i ? ", " : "") + a.missing[i];
      }
    }
    return s;
  };

  if (const char* env = std::getenv("BLUESHIFT_DEVICE"); env && *env) {
    std::string want = env;
    const AdapterInfo* pick = nullptr;
    char* end = nullptr;
    unsigned long idx = std::strtoul(env, &end, 10);
    if (end && *end == '\0') {
      if (idx < adapters.size()) pick = &adapters[idx];
    } else {
      for (auto& a : adapters)
        if (a.name.find(want) != std::string::npos) { pick = &a; break; }
    }
    if (!pick) fail_kind(ErrorKind::gpu, "BLUESHIFT_DEVICE={} matches no adapter; adapters:{}", want, describe());
    if (!pick->usable()) fail_kind(ErrorKind::gpu, "BLUESHIFT_DEVICE={} selects an adapter blueshift cannot use:{}", want, describe());
    return *pick;
  }
  for (const char* type : {"discrete", "integrated", "virtual", "cpu", "other"})
    for (auto& a : adapters)
      if (a.type == type && a.usable()) return a;
  fail_kind(ErrorKind::gpu, "no Vulkan adapter has the features blueshift needs:{}", describe());
}

}  // namespace bs::gpu
