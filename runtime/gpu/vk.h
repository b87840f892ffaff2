// Vulkan include and the one error path for failed Vulkan calls.
#pragma once
#include <vulkan/vulkan.h>

#include "runtime/base/error.h"

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
