#include "runtime/gpu/vk.h"

namespace bs::gpu {

const char* vk_result_name(VkResult r) {
  switch (r) {
#define BS_CASE(x) case x: return #x;
    BS_CASE(VK_SUCCESS) BS_CASE(VK_NOT_READY) BS_CASE(VK_TIMEOUT) BS_CASE(VK_INCOMPLETE)
    BS_CASE(VK_ERROR_OUT_OF_HOST_MEMORY) BS_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    BS_CASE(VK_ERROR_INITIALIZATION_FAILED) BS_CASE(VK_ERROR_DEVICE_LOST)
    BS_CASE(VK_ERROR_MEMORY_MAP_FAILED) BS_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    BS_CASE(VK_ERROR_EXTENSION_NOT_PRESENT) BS_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    BS_CASE(VK_ERROR_INCOMPATIBLE_DRIVER) BS_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    BS_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED) BS_CASE(VK_ERROR_FRAGMENTED_POOL)
    BS_CASE(VK_ERROR_OUT_OF_POOL_MEMORY) BS_CASE(VK_ERROR_UNKNOWN)
#undef BS_CASE
    default: return "VK_ERROR_(other)";
  }
}

void vk_fail(const char* call, VkResult r, const char* file, int line) {
  ErrorKind kind = r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? ErrorKind::resources : ErrorKind::gpu;
  throw Error(fmt::format("Vulkan call failed: {} returned {} ({}:{})", call, vk_result_name(r), file, line), kind);
}

}  // namespace bs::gpu
