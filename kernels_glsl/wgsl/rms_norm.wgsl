// RMSNorm over rows, the WGSL twin of rms_norm.comp: y = x * rsqrt(mean(x^2) + eps) * (offset + w),
// one workgroup per row, f32 accumulation. ACCUMULATE (variant rms_norm_add_f32) adds into y instead.
// Parameters come in wgpu's push-constant extension; @id(0) is the GLSL kernel's spec constant 0.
struct RmsNormParams {
  n: u32,
  rows: u32,
  eps: f32,
  offset: f32,
}

var<push_constant> p: RmsNormParams;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@id(0) override WG: u32 = 256;
override ACCUMULATE: bool = false;

var<workgroup> red: array<f32, WG>;

// Tree sum over the workgroup (WG is a power of two); every invocation gets the result.
fn workgroup_sum(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      red[lid] += red[lid + s];
    }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let base = wid.x * p.n;
  var ss = 0.0f;
  for (var i = lid; i < p.n; i += WG) {
    ss += x[base + i] * x[base + i];
  }
  let scale = inverseSqrt(workgroup_sum(ss, lid) / f32(p.n) + p.eps);
  for (var i = lid; i < p.n; i += WG) {
    let v = x[base + i] * scale * (p.offset + w[i]);
    if (ACCUMULATE) {
      y[base + i] += v;
    } else {
      y[base + i] = v;
    }
  }
}
