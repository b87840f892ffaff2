// The compute kernels compiled from kernels_glsl/*.comp at build time, looked up by variant name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace bs::kernels {

struct EmbeddedKernel {
  std::string_view name;           // variant name from variants.cmake, e.g. "matvec_q4k"
  std::span<const uint32_t> spirv;
};

std::span<const EmbeddedKernel> all();
// nullptr when no variant has that name.
const EmbeddedKernel* find(std::string_view name);

}  // namespace bs::kernels
