#include "runtime/gpu/kernel_cache.h"

#include "kernels_glsl/kernels.h"

namespace bs::gpu {

const ComputePipeline& KernelCache::get(const std::string& name, const std::vector<SpecConstant>& constants) {
  std::vector<std::pair<uint32_t, uint32_t>> key_consts;
  for (auto& c : constants) key_consts.push_back({c.id, c.value});
  auto key = std::make_pair(name, key_consts);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;

  auto& module = modules_[name];
  if (!module) {
    const auto* k = kernels::find(name);
    if (!k) fail_kind(ErrorKind::internal, "no embedded kernel named '{}' (see kernels_glsl/variants.cmake)", name);
    module = std::make_unique<ShaderModule>(device_, k->spirv, name);
  }
  ComputePipelineDesc desc{module.get(), constants, 0, name};
  auto p = std::make_unique<ComputePipeline>(device_, desc);
  auto& ref = *p;
  pipelines_[key] = std::move(p);
  return ref;
}

}  // namespace bs::gpu
