// Pipelines for the embedded kernels, created on first use and looked up by variant name.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/gpu/device.h"

namespace bs::gpu {

class KernelCache {
 public:
  explicit KernelCache(Device& device) : device_(device) {}
  // The pipeline of variant `name` (from kernels_glsl/variants.cmake) with these specialization
  // constants. Throws bs::Error(internal) for an unknown name.
  const ComputePipeline& get(const std::string& name, const std::vector<SpecConstant>& constants = {});
  Device& device() { return device_; }

 private:
  Device& device_;
  std::map<std::string, std::unique_ptr<ShaderModule>> modules_;
  std::map<std::pair<std::string, std::vector<std::pair<uint32_t, uint32_t>>>, std::unique_ptr<ComputePipeline>> pipelines_;
};

std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& label,
                                   const std::vector<std::pair<std::string, std::string>>& defines = {});

}  // namespace bs::gpu
