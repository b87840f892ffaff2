// Just enough SPIR-V reflection to derive a pipeline's plumbing from the shader (niagara-style):
// descriptor bindings and how each is accessed, push-constant size, workgroup size and its spec ids.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bs::gpu {

enum class BindingKind : uint8_t { storage, uniform };

struct ReflectedBinding {
  uint32_t set = 0, binding = 0;
  BindingKind kind = BindingKind::storage;
  bool reads = true;    // not decorated NonReadable
  bool writes = true;   // not decorated NonWritable (readonly in GLSL)
  std::string name;     // variable or block name, for messages
};

struct ReflectedShader {
  std::string entry = "main";
  std::vector<ReflectedBinding> bindings;      // sorted by (set, binding)
  uint32_t push_constant_bytes = 0;
  std::array<uint32_t, 3> local_size{1, 1, 1};
  std::array<int32_t, 3> local_size_spec_id{-1, -1, -1};  // spec constant id per dimension, -1 = fixed
};

// Throws bs::Error on a malformed module.
ReflectedShader reflect_spirv(std::span<const uint32_t> words);

}  // namespace bs::gpu
