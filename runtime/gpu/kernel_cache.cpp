#include "runtime/gpu/kernel_cache.h"

#include <cstdlib>

#include "kernels_glsl/kernels.h"
#include "kernels_glsl/wgsl/kernels_wgsl.h"

namespace bs::gpu {

KernelSource parse_kernel_source(std::string_view name) {
  if (name == "glsl") return KernelSource::glsl;
  if (name == "wgsl") return KernelSource::wgsl;
  fail_kind(ErrorKind::usage, "kernel set '{}' is unknown; choose glsl or wgsl", name);
}

const char* kernel_source_name(KernelSource s) { return s == KernelSource::wgsl ? "wgsl" : "glsl"; }

// Kernels that need an optional device feature: the tensor-core matmuls and attention (matmul_cm_*,
// matmul_rows_cm_*, attention_fa_*) need cooperative matrices, and creating their pipelines elsewhere
// (lavapipe) would fail; the *_i8* kernels (SPV_KHR_integer_dot_product) need shaderIntegerDotProduct, the
// *_argmax ones (a 64-bit atomicMax) shaderBufferInt64Atomics.
static bool device_can_run(const Device& device, std::string_view name) {
  const bool coopmat = name.starts_with("matmul_cm_") || name.starts_with("matmul_rows_cm_") ||
                       name.starts_with("attention_fa_");
  if (name.find("_i8") != std::string_view::npos && !device.has_int_dot()) return false;
  if (name.ends_with("_argmax") && !device.has_int64_atomics()) return false;
  return !coopmat || device.has_coopmat_f16();
}

bool KernelCache::has(std::string_view name) const {
  if (!device_can_run(device_, name)) return false;
  return source_ == KernelSource::wgsl ? kernels::wgsl::find(name) != nullptr : kernels::find(name) != nullptr;
}

// "A=1,B=2.5" (a WGSL variant's fixed overrides) as a constants map.
static std::map<std::string, double> parse_overrides(std::string_view list, std::string_view variant) {
  std::map<std::string, double> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) fail_kind(ErrorKind::internal, "WGSL variant {}: bad override '{}'", variant, item);
    std::string value(item.substr(eq + 1));
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end) fail_kind(ErrorKind::internal, "WGSL variant {}: bad override value '{}'", variant, item);
    out[std::string(item.substr(0, eq))] = v;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

const ShaderModule& KernelCache::module(const std::string& name) {
  if (!device_can_run(device_, name))
    fail_kind(ErrorKind::internal, "kernel '{}' needs a device feature that {} lacks or has turned off (cooperative "
              "matrices, integer dot products or 64-bit atomics: see device_can_run); check KernelCache::has first",
              name, device_.adapter().name);
  auto& m = modules_[name];
  if (m) return *m;
  if (source_ == KernelSource::wgsl) {
    const auto* k = kernels::wgsl::find(name);
    if (!k)
      fail_kind(ErrorKind::internal, "the WGSL kernel set has no kernel named '{}' (see kernels_glsl/wgsl/CMakeLists.txt); "
                "run with the GLSL kernels, or add its WGSL twin", name);
    m = std::make_unique<ShaderModule>(device_.createShaderModuleWGSL(k->source, std::string(k->file)));
  } else {
    const auto* k = kernels::find(name);
    if (!k) fail_kind(ErrorKind::internal, "no embedded kernel named '{}' (see kernels_glsl/variants.cmake)", name);
    m = std::make_unique<ShaderModule>(device_, k->spirv, name);
  }
  return *m;
}

const ComputePipeline& KernelCache::get(const std::string& name, const std::vector<SpecConstant>& constants) {
  std::vector<std::pair<uint32_t, uint32_t>> key_consts;
  for (auto& c : constants) key_consts.push_back({c.id, c.value});
  auto key = std::make_pair(name, key_consts);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;

  ComputePipelineDesc desc{&module(name), constants, 0, name};
  if (source_ == KernelSource::wgsl) {
    const auto* k = kernels::wgsl::find(name);
    desc.entry_point = std::string(k->entry);
    desc.overrides = parse_overrides(k->overrides, name);
  }
  auto p = std::make_unique<ComputePipeline>(device_, desc);
  auto& ref = *p;
  pipelines_[key] = std::move(p);
  return ref;
}

}  // namespace bs::gpu
