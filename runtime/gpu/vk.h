// Vulkan include and the one error path for failed Vulkan calls.
#pragma once
#include <vulkan/vulkan.h>

#include "runtime/base/error.h"

// VK_KHR_cooperative_matrix's structures (Vulkan 1.3.255; Debian 12's headers are 1.3.239).
#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
typedef enum VkComponentTypeKHR { VK_COMPONENT_TYPE_FLOAT16_KHR = 0, VK_COMPONENT_TYPE_FLOAT32_KHR = 1 } VkComponentTypeKHR;
typedef enum VkScopeKHR { VK_SCOPE_SUBGROUP_KHR = 3 } VkScopeKHR;
typedef struct VkCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  VkComponentTypeKHR AType, BType, CType, ResultType;
  VkBool32 saturatingAccumulation;
  VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;
typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;
typedef VkResult(VKAPI_PTR* PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
    VkPhysicalDevice, uint32_t*, VkCooperativeMatrixPropertiesKHR*);
#endif

namespace bs::gpu {

const char* vk_result_name(VkResult r);

[[noreturn]] void vk_fail(const char* call, VkResult r, const char* file, int line);

}  // namespace bs::gpu

// VK_CHECK(vkCreateBuffer(...)) — throws bs::Error(gpu) naming the call and the VkResult.
#define VK_CHECK(call)                                                         \
  do {                                                                         \
    VkResult bs_vk_r_ = (call);                                                \
    if (bs_vk_r_ != VK_SUCCESS) ::bs::gpu::vk_fail(#call, bs_vk_r_, __FILE__, __LINE__); \
  } while (0)
