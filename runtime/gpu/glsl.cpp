// Device::createShaderModuleGLSL: GLSL compiled with shaderc at run time, for generated shaders.
#include <shaderc/shaderc.hpp>

#include "runtime/gpu/device.h"

namespace bs::gpu {

std::vector<uint32_t> compile_glsl(const std::string& source, const std::string& label,
                                   const std::vector<std::pair<std::string, std::string>>& defines) {
  shaderc::Compiler compiler;
  shaderc::CompileOptions opts;
  opts.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  opts.SetOptimizationLevel(shaderc_optimization_level_performance);
  for (auto& [k, v] : defines) opts.AddMacroDefinition(k, v);
  auto r = compiler.CompileGlslToSpv(source, shaderc_compute_shader, label.c_str(), opts);
  if (r.GetCompilationStatus() != shaderc_compilation_status_success)
    fail("GLSL compilation of {} failed:\n{}", label, r.GetErrorMessage());
  return {r.cbegin(), r.cend()};
}

ShaderModule Device::createShaderModuleGLSL(const std::string& source, const std::string& label,
                                            const std::vector<std::pair<std::string, std::string>>& defines) {
  auto words = compile_glsl(source, label, defines);
  return ShaderModule(*this, words, label);
}

}  // namespace bs::gpu
