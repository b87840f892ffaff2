// blueshift's WGSL front-end: WGSL compute shaders -> Vulkan GLSL 4.50 -> SPIR-V (via shaderc),
// with the reflection a runtime needs to build pipeline layouts from the WGSL alone.
//
//   bs::wgsl::CompileOptions opt;
//   opt.entry = "main";
//   opt.overrides = {{"WG", 128}};          // WebGPU-style pipeline constants, by name or @id
//   auto shader = bs::wgsl::compile_wgsl(source, "rmsnorm.wgsl", opt);
//   shader.spirv, shader.bindings, shader.workgroup_size ...
//
// Invalid WGSL throws bs::Error(ErrorKind::input) whose message holds every diagnostic as
// "file:line:col: error: ...", the source line and a caret. A GLSL/SPIR-V failure after a module
// resolved cleanly is a blueshift bug and throws ErrorKind::internal.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bs::wgsl {

struct Module;

enum class BindingKind : uint8_t { uniform_buffer, storage_buffer, read_only_storage_buffer };

struct BindingInfo {
  uint32_t group = 0;
  uint32_t binding = 0;
  BindingKind kind = BindingKind::storage_buffer;
  std::string name;              // the WGSL variable
  uint64_t min_size = 0;         // bytes: WGSL size; fixed part + one element for runtime-sized arrays
  uint32_t runtime_stride = 0;   // element stride of a trailing runtime-sized array, else 0
};

// Device capabilities the SPIR-V needs (the runtime checks them against the adapter).
struct ShaderFeatures {
  bool f16 = false;                    // shaderFloat16 + storageBuffer16BitAccess (+ uniform 16-bit access)
  bool subgroups = false;              // subgroup operations in compute (basic, plus what is used)
  bool subgroup_arithmetic = false;
  bool subgroup_shuffle = false;
  bool subgroup_shuffle_relative = false;
  bool subgroup_ballot = false;
  bool subgroup_vote = false;
  bool subgroup_f16 = false;           // shaderSubgroupExtendedTypes
  bool uniform_standard_layout = false;  // a uniform block uses std430 (uniformBufferStandardLayout)
};

struct EntryPointInfo {
  std::string name;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  bool workgroup_size_known = true;  // false when it depends on an override without a value
};

struct OverrideInfo {
  std::string name;
  int id = -1;          // @id, or -1
  std::string type;     // "u32", "f32", ...
  bool has_default = false;
};

// A parsed and resolved module (without pipeline constants applied).
struct WgslModule {
  std::string source;
  std::string filename;
  std::vector<EntryPointInfo> entry_points;
  std::vector<OverrideInfo> overrides;
  std::shared_ptr<const Module> ast;
};

WgslModule parse_and_resolve(std::string_view source, std::string_view filename);

struct CompileOptions {
  std::string entry;                         // empty: the module's only compute entry point
  std::map<std::string, double> overrides;   // by name, or by @id written in decimal
  bool spirv = true;                         // false: stop after GLSL (no shaderc)
  bool optimize = true;                      // shaderc performance optimization
};

struct CompiledShader {
  std::string entry;
  std::string glsl;
  std::vector<uint32_t> spirv;               // entry point "main" in SPIR-V
  std::vector<BindingInfo> bindings;         // sorted by (group, binding)
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  ShaderFeatures features;
  uint32_t push_constant_bytes = 0;          // the var<push_constant> block's size (wgpu's extension), else 0
};

CompiledShader compile_wgsl(std::string_view source, std::string_view filename, const CompileOptions& opt);
CompiledShader compile_wgsl(const WgslModule& module, const CompileOptions& opt);

// What the GPU layer calls for device.createShaderModule({code: wgsl}) + createComputePipeline:
// SPIR-V plus the reflection to derive bind group layouts from.
inline CompiledShader wgsl_to_spirv(std::string_view source, const std::string& entry,
                                    const std::map<std::string, double>& constants,
                                    std::string_view filename = "<wgsl>") {
  CompileOptions opt;
  opt.entry = entry;
  opt.overrides = constants;
  return compile_wgsl(source, filename, opt);
}

}  // namespace bs::wgsl
