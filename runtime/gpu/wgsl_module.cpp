// WGSL shader modules: device.createShaderModule({code: wgsl}) as WebGPU has it, with blueshift's own
// front-end (runtime/wgsl) in the role Tint plays in Dawn.
//
// WebGPU resolves `override` constants when a pipeline is created, and runtime/wgsl substitutes them
// into the generated GLSL; so a WGSL ShaderModule holds the parsed module (errors surface at
// createShaderModule) and each pipeline compiles its own SPIR-V. The pipeline layout is reflected from
// that SPIR-V exactly as for embedded kernels, so binding numbers, access (read-only or not) and the
// push-constant size all come from the WGSL. The dependency is one way: bs_gpu links bs_wgsl, which
// knows nothing of Vulkan.
#include <bit>
#include <fmt/format.h>

#include "runtime/base/error.h"
#include "runtime/gpu/device.h"
#include "runtime/wgsl/wgsl.h"

namespace bs::gpu {

ShaderModule::ShaderModule(std::shared_ptr<const wgsl::WgslModule> wgsl, std::string label)
    : label_(std::move(label)), wgsl_(std::move(wgsl)) {}

ShaderModule Device::createShaderModuleWGSL(std::string_view source, std::string label) {
  auto parsed = std::make_shared<const wgsl::WgslModule>(wgsl::parse_and_resolve(source, label));
  if (parsed->entry_points.empty())
    fail("{}: the WGSL module has no @compute entry point (blueshift runs compute shaders only)", label);
  return ShaderModule(std::move(parsed), std::move(label));
}

// A specialization constant's 32 bits read as the type of the WGSL override with that @id.
static double spec_value(const wgsl::OverrideInfo& o, uint32_t bits) {
  if (o.type == "f32" || o.type == "f16") return double(std::bit_cast<float>(bits));
  if (o.type == "i32") return double(int32_t(bits));
  if (o.type == "bool") return bits != 0 ? 1.0 : 0.0;
  return double(bits);
}

ShaderModule compile_wgsl_pipeline_module(Device& device, const ComputePipelineDesc& desc) {
  const ShaderModule& module = *desc.module;
  const wgsl::WgslModule& w = *module.wgsl();
  wgsl::CompileOptions opt;
  opt.entry = desc.entry_point;
  opt.overrides = desc.overrides;
  for (const SpecConstant& c : desc.constants) {
    const wgsl::OverrideInfo* o = nullptr;
    for (const auto& ov : w.overrides)
      if (ov.id == int(c.id)) o = &ov;
    if (!o)
      fail("pipeline {}: specialization constant {} matches no override with @id({}) in WGSL module {}", desc.label, c.id,
           c.id, module.label());
    if (desc.overrides.count(o->name) || desc.overrides.count(std::to_string(c.id)))
      fail("pipeline {}: override {} (@id({})) is given both by name and as a specialization constant", desc.label,
           o->name, c.id);
    opt.overrides[std::to_string(c.id)] = spec_value(*o, c.value);
  }
  wgsl::CompiledShader shader = wgsl::compile_wgsl(w, opt);
  std::string label = desc.label.empty() ? module.label() + ":" + shader.entry : desc.label;
  ShaderModule spirv(device, shader.spirv, label);
  // The front-end's own reflection and the SPIR-V's must agree; a mismatch is a front-end bug.
  const auto& refl = spirv.reflection();
  if (refl.local_size != shader.workgroup_size || refl.push_constant_bytes != shader.push_constant_bytes)
    fail_kind(ErrorKind::internal, "{}: the SPIR-V's reflection disagrees with the WGSL's (workgroup size or push "
              "constants)", label);
  return spirv;
}

}  // namespace bs::gpu
