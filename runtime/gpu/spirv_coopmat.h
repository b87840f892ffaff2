// SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix, on the SPIR-V words of a kernel.
//
// Debian's glslang (11 / 12) compiles GL_NV_cooperative_matrix only, but on the H100 NVIDIA's driver turns the
// KHR instructions into faster code: its column-major fragment loads, which every prefill GEMM makes for the
// weights, cost the NV path about a fifth of the GEMM's rate (benchmarks/results/2026-11-25-h100-session9.md).
// The two extensions have the same operations; KHR types also say how each matrix is used (A, B or the
// accumulator), loads and stores name a layout instead of a column-major flag, and the opcodes differ. This pass
// infers each matrix value's use from the multiply-adds it reaches (through loads, stores, variables, phis and
// arithmetic) and gives a type used two ways (the f16 16x16 fragment of A and of B) a second KHR type.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bs::gpu {

struct CoopmatRewrite {
  std::vector<uint32_t> words;  // the module with KHR cooperative matrices
  uint32_t types = 0;           // KHR matrix types emitted (a type used two ways counts twice)
};

// Whether the module declares the CooperativeMatrixNV capability.
bool uses_coopmat_nv(std::span<const uint32_t> words);

// The module rewritten to SPV_KHR_cooperative_matrix, or nullopt with `why` set when it cannot be: one value
// reaching two uses, matrices passed to functions, a matrix array of a type used two ways, a layout flag that
// is not a constant. Throws bs::Error on a malformed module (bad header or instruction lengths).
std::optional<CoopmatRewrite> coopmat_nv_to_khr(std::span<const uint32_t> words, std::string* why = nullptr);

}  // namespace bs::gpu
