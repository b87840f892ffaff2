// Push-constant blocks, defined once for GLSL and C++ (niagara's config.h idea). Every member is a
// 32-bit scalar so std430 and C++ layouts agree; the static_asserts in runtime/gpu/params_check.cpp
// hold the C++ side to that.
#ifdef __cplusplus
#pragma once
#include <cstdint>
namespace bs::kparams {
using uint = uint32_t;
#define BS_PARAMS(name) struct name
#else
#define BS_PARAMS(name) struct name
#endif

// stream_read: sums n_vec4 vec4s (bandwidth probe).
BS_PARAMS(StreamParams) { uint n_vec4; uint iters; };

// rms_norm: rows of n; y = x * rsqrt(mean(x^2) + eps) * (offset + w).
BS_PARAMS(RmsNormParams) { uint n; uint rows; float eps; float offset; };

// matvec: y[b*m + r] = sum_k W[r, k] * x[b*k_stride + k] (+ y when accumulate) for rows r < m.
BS_PARAMS(MatvecParams) { uint m; uint k; uint batch; uint accumulate; };

// reduce: sum or max over n elements, written to out[0].
BS_PARAMS(ReduceParams) { uint n; uint pad0; uint pad1; uint pad2; };

// --- weight kernels (matvec_*, matmul_*, embed_*) ---
// matvec_* and matmul_* take MatvecParams (matmul: batch = M tokens, Y [M, m] (+)= X [M, k] W[m, k]^T).
// embed: out[t, :] = W[tokens[t] - token_offset, :] * scale for t < n_tokens, rows of dim elements.
BS_PARAMS(EmbedParams) { uint dim; uint n_tokens; float scale; uint token_offset; };

#ifdef __cplusplus
}  // namespace bs::kparams
#endif
