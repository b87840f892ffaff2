#version 450
// LFM2's gated short convolution, prefill and decode alike: y = C * conv(B * x), the conv causal and
// depthwise (one filter of `kernel` taps per channel), then the rolling conv state advanced in place.
// Workgroups: x over channels, y over blocks of SHORT_CONV_ROWS rows; an invocation walks its block's
// rows of one channel. Only block 0 reads the old state (rows < kernel - 1 <= SHORT_CONV_ROWS) and only
// block 0 rewrites it, after its reads: no other invocation touches the state, so no barrier is needed.
// A replayed decode step (rows = 1) needs no host work: the position comes from the step state.
#include "params.h"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { ShortConvParams p; };
layout(std430, binding = 0) readonly buffer BCX { float bcx[]; };  // [rows, 3 * dim]: B | C | x
layout(std430, binding = 1) readonly buffer W { float w[]; };      // [dim, kernel]
layout(std430, binding = 2) buffer CS { float cs[]; };             // [kernel - 1, dim], oldest first
layout(std430, binding = 3) readonly buffer S { uint state[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };     // [rows, dim]

// The conv input at row s of this chunk (negative: the state's row hist + s; zero for a new sequence).
float conv_in(int s, uint c, uint hist, bool fresh) {
  if (s >= 0) {
    uint r = uint(s) * 3u * p.dim;
    return bcx[r + c] * bcx[r + 2u * p.dim + c];
  }
  return fresh ? 0.0 : cs[uint(int(hist) + s) * p.dim + c];
}

const uint SHORT_CONV_ROWS = 16u;  // rows per invocation (validate_config: kernel - 1 <= this)

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= p.dim) return;
  uint hist = p.kernel - 1u;
  bool fresh = state[1] == 0u;
  uint t0 = gl_WorkGroupID.y * SHORT_CONV_ROWS;
  for (uint t = t0; t < min(p.rows, t0 + SHORT_CONV_ROWS); ++t) {
    float acc = 0.0;
    for (uint k = 0u; k < p.kernel; ++k) acc += w[c * p.kernel + k] * conv_in(int(t) - int(hist) + int(k), c, hist, fresh);
    y[t * p.dim + c] = bcx[t * 3u * p.dim + p.dim + c] * acc;
  }
  if (gl_WorkGroupID.y != 0u) return;
  // New state row j = input rows - hist + j. In ascending j, a row still taken from the old state
  // (index rows + j > j) is read before it is overwritten.
  for (uint j = 0u; j < hist; ++j) cs[j * p.dim + c] = conv_in(int(p.rows) - int(hist) + int(j), c, hist, fresh);
}
