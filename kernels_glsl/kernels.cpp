#include "kernels_glsl/kernels.h"

namespace bs::kernels {

const EmbeddedKernel* find(std::string_view name) {
  for (const auto& k : all())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace bs::kernels
