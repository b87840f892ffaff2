// Small elementwise kernels (elementwise.comp's twins), one entry point each: gated activation, bias
// add, softcap. Each entry point uses its own push-constant block and bindings.
struct GatedActParams {
  n: u32,
  act: u32,
  pad0: u32,
  pad1: u32,
}

struct BiasParams {
  n: u32,
  rows: u32,
  pad0: u32,
  pad1: u32,
}

struct SoftcapParams {
  n: u32,
  cap: f32,
  pad0: u32,
  pad1: u32,
}

const WG = 256u;

var<push_constant> pg: GatedActParams;
@group(0) @binding(0) var<storage, read> g: array<f32>;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> h: array<f32>;

// The 2-D grid folds y into the index: i = x + y * (num_workgroups.x * WG).
@compute @workgroup_size(WG)
fn gated_act(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= pg.n) {
    return;
  }
  let x = g[i];
  var a: f32;
  if (pg.act == 0u) {
    a = x / (1.0 + exp(-x));  // silu
  } else {
    let t = 0.7978845608028654 * (x + 0.044715 * x * x * x);  // gelu, tanh approximation
    a = 0.5 * x * (1.0 + tanh(t));
  }
  h[i] = a * u[i];
}

var<push_constant> pb: BiasParams;
@group(0) @binding(0) var<storage, read_write> yb: array<f32>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;

@compute @workgroup_size(WG)
fn add_bias(@builtin(global_invocation_id) gid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let i = gid.x;
  if (i < pb.n) {
    yb[wid.y * pb.n + i] += bias[i];
  }
}

var<push_constant> ps: SoftcapParams;
@group(0) @binding(0) var<storage, read_write> xs: array<f32>;

@compute @workgroup_size(WG)
fn softcap(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i < ps.n) {
    xs[i] = ps.cap * tanh(xs[i] / ps.cap);
  }
}
