#version 450
// Gemma 4's per-layer inputs, combined: for token row m and layer l (workgroup (m, l)),
//   y   = proj[m, l*P .. l*P + P) * proj_scale              (the main embedding's projection, / sqrt(dim))
//   out = (y * rsqrt(mean(y^2) + eps) * (offset + w) + rows[m, l*P ..]) * combine_scale
// written layer-major, out[(l * stride + m) * P + i], so each layer's rows are contiguous for the
// gated activation that reads them. `rows` are the per-layer embedding rows, already scaled.
#include "common.glsl"
#include "params.h"
layout(local_size_x = 64) in;
layout(push_constant) uniform PC { PleCombineParams p; };
layout(std430, binding = 0) readonly buffer Proj { float proj[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Rows { float rows[]; };
layout(std430, binding = 3) writeonly buffer Out { float o[]; };

void main() {
  uint m = gl_WorkGroupID.x, l = gl_WorkGroupID.y;
  uint in_base = (m * p.n_layers + l) * p.n, out_base = (l * p.stride + m) * p.n;
  float ss = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
    float y = proj[in_base + i] * p.proj_scale;
    ss += y * y;
  }
  float r = inversesqrt(workgroup_sum(ss) / float(p.n) + p.eps);
  for (uint i = gl_LocalInvocationID.x; i < p.n; i += gl_WorkGroupSize.x) {
    float y = proj[in_base + i] * p.proj_scale;
    o[out_base + i] = (y * r * (p.offset + w[i]) + rows[in_base + i]) * p.combine_scale;
  }
}
