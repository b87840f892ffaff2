// Fuzz target for the WGSL lexer, parser and resolver (and, for inputs that resolve, the GLSL
// emitter): any input must give diagnostics or a module, never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/base/error.h"
#include "runtime/wgsl/wgsl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view src(reinterpret_cast<const char*>(data), size);
  try {
    auto m = bs::wgsl::parse_and_resolve(src, "fuzz.wgsl");
    for (const auto& ep : m.entry_points) {
      bs::wgsl::CompileOptions opt;
      opt.entry = ep.name;
      opt.spirv = false;  // shaderc is not ours to fuzz; the emitter is
      try {
        bs::wgsl::compile_wgsl(m, opt);
      } catch (const bs::Error&) {
      }
    }
  } catch (const bs::Error&) {
  }
  return 0;
}
