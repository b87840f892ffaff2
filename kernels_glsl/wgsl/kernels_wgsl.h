// The WGSL kernel set (kernels_glsl/wgsl/*.wgsl), embedded as source text and looked up by the same
// variant names as the GLSL kernels (kernels_glsl/kernels.h). Compiled at run time by runtime/wgsl.
#pragma once
#include <span>
#include <string_view>

namespace bs::kernels::wgsl {

struct WgslKernel {
  std::string_view name;       // variant name, e.g. "matvec_q8_0"
  std::string_view file;       // e.g. "matvec.wgsl", for diagnostics
  const char* source;          // the file's text, NUL-terminated
  std::string_view entry;      // entry point; empty = the file's only one
  std::string_view overrides;  // fixed override values "NAME=VALUE,..." (the GLSL variant's defines)
};

std::span<const WgslKernel> all();
// nullptr when the WGSL set has no such variant.
const WgslKernel* find(std::string_view name);

}  // namespace bs::kernels::wgsl
