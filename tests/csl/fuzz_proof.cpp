// libFuzzer target: proof.json is outside input (a bundle comes back from elsewhere). parse_proof
// may reject it with bs::Error; anything else (a crash, another exception, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/csl/proof.h"
#include "runtime/base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    bs::csl::Proof p = bs::csl::parse_proof(std::string_view(reinterpret_cast<const char*>(data), size));
    // What verify-proof does next with a parsed proof must hold too: the plan is consistent.
    bs::csl::validate_plan(p.plan);
  } catch (const bs::Error&) {
  }
  return 0;
}
