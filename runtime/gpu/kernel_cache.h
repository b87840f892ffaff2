// Pipelines for the embedded kernels, created on first use and looked up by variant name.
//
// Two kernel sets share the variant names, binding numbers and push-constant layouts:
//   glsl — kernels_glsl/*.comp, compiled to SPIR-V by glslc at build time (the default);
//   wgsl — kernels_glsl/wgsl/*.wgsl, compiled at run time by blueshift's WGSL front-end
//          (Device::createShaderModuleWGSL); GLSL specialization constants reach the WGSL overrides
//          with the same @id, and a variant's fixed overrides stand in for the GLSL variant's defines.
// The model code is the same for both; `has` lets it fall back where a set lacks a (fused) variant.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/gpu/device.h"

namespace bs::gpu {

enum class KernelSource : uint8_t { glsl, wgsl };

// "glsl" | "wgsl"; anything else throws bs::Error(usage) naming the choices.
KernelSource parse_kernel_source(std::string_view name);
const char* kernel_source_name(KernelSource s);

class KernelCache {
 public:
  explicit KernelCache(Device& device, KernelSource source = KernelSource::glsl) : device_(device), source_(source) {}
  // The pipeline of variant `name` with these specialization constants. Throws bs::Error(internal)
  // naming the variant and the kernel set when the set has no such variant.
  const ComputePipeline& get(const std::string& name, const std::vector<SpecConstant>& constants = {});
  // Whether the selected set has variant `name` and the device can run it (matmul_cm_* need
  // Device::has_coopmat_f16; `get` throws for them elsewhere).
  bool has(std::string_view name) const;
  KernelSource source() const { return source_; }
  Device& device() { return device_; }
  const Device& device() const { return device_; }

 private:
  const ShaderModule& module(const std::string& name);

  Device& device_;
  KernelSource source_;
  std::map<std::string, std::unique_ptr<ShaderModule>> modules_;
  std::map<std::pair<std::string, std::vector<std::pair<uint32_t, uint32_t>>>, std::unique_ptr<ComputePipeline>> pipelines_;
};

std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& label,
                                   const std::vector<std::pair<std::string, std::string>>& defines = {});

}  // namespace bs::gpu
