#version 450
// Embedding rows: out[t, :] = W[tokens[t] - token_offset, :] * scale for W [rows, dim] in the weight
// dtype (W_F16 | W_Q8_0 | W_Q4K | W_Q6K, see weight_fetch.glsl). One workgroup per token; dispatch
// (n_tokens, 1, 1).
//
// Tables larger than one binding may hold (lavapipe: 128 MiB; a 262144 x 2304 f16 table is 1.2 GB) are
// bound in row ranges: a dispatch per range, token_offset = the range's first row, each writing only the
// tokens that fall in its range. The rows a binding holds are read off its length, so its range must be
// whole rows, optionally padded by fewer than row_bytes - 2 bytes (pad it to a multiple of 4).
// The host checks token ids against the vocabulary; an id outside every range leaves its row unwritten.
// Token t is tokens[t * TOKEN_STRIDE] (spec constant 1): serve's batched decode reads each sequence's token
// from its step state, rows of TOKEN_STRIDE words, in one dispatch.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "params.h"
#include "weight_fetch.glsl"
layout(local_size_x = 128, local_size_x_id = 0) in;
layout(constant_id = 1) const uint TOKEN_STRIDE = 1;
layout(push_constant) uniform PC { EmbedParams p; };
layout(std430, binding = 1) readonly buffer Tokens { int tokens[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_rows[]; };
void embed_store(uint i, float v) { out_rows[i] = v; }
#include "embed_row.glsl"
#ifdef W_I4
layout(std430, binding = 3) readonly buffer Scales { float row_scales[]; };  // [rows], indexed by token id
#endif

void main() {
  uint t = gl_WorkGroupID.x;
  if (t >= p.n_tokens) return;
  int tok = tokens[t * TOKEN_STRIDE], row = tok - int(p.token_offset);
  if (row < 0 || uint(row) >= embed_rows(p.dim)) return;
#ifdef W_I4
  float scale = p.scale * row_scales[tok];
#else
  float scale = p.scale;
#endif
  embed_row(uint(row), p.dim, scale, t * p.dim);
}
