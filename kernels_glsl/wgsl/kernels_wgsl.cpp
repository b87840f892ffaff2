#include "kernels_glsl/wgsl/kernels_wgsl.h"

namespace bs::kernels::wgsl {

const WgslKernel* find(std::string_view name) {
  for (const auto& k : all())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace bs::kernels::wgsl
