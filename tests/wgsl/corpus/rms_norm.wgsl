// RMSNorm, the math of kernels_glsl/rms_norm.comp: one workgroup per row,
// y = x * inverseSqrt(mean(x^2) + eps) * (offset + w).
// Declared out of order on purpose: main() comes before the types and variables it uses.

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  if (row >= params.rows) {
    return;
  }
  let base = row * params.n;
  var ss = 0.0;
  for (var i = lid; i < params.n; i += WG) {
    let v = x[base + i];
    ss += v * v;
  }
  partial[lid] = ss;
  workgroupBarrier();
  // Tree reduction; WG is a power of two (checked below).
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      partial[lid] += partial[lid + s];
    }
    workgroupBarrier();
  }
  let scale = inverseSqrt(partial[0] / f32(params.n) + params.eps);
  for (var i = lid; i < params.n; i += WG) {
    y[base + i] = x[base + i] * scale * (params.offset + w[i]);
  }
}

const_assert (WG_DEFAULT & (WG_DEFAULT - 1)) == 0;

var<workgroup> partial: array<f32, WG>;

@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

struct Params {
  n: u32,
  rows: u32,
  eps: f32,
  offset: f32,
}

@id(0) override WG: u32 = WG_DEFAULT;
const WG_DEFAULT = 128u;
