// RoPE, the WGSL twin of rope.comp: rotate-half pairing (x[i], x[i + rot/2]) by (state.pos + row) *
// inv_freq[i], angles in f32 as HF computes them. One workgroup per (head, row).
struct RopeParams {
  rows: u32,
  n_heads: u32,
  head_dim: u32,
  rot_dim: u32,
}

var<push_constant> p: RopeParams;
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;

const WG = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let head = wid.x;
  let row = wid.y;
  let half_rot = p.rot_dim / 2u;
  let pos = f32(state[1] + row);
  let base = (row * p.n_heads + head) * p.head_dim;
  for (var i = lid; i < half_rot; i += WG) {
    let a = pos * inv_freq[i];
    let c = cos(a);
    let s = sin(a);
    let x0 = x[base + i];
    let x1 = x[base + i + half_rot];
    x[base + i] = x0 * c - x1 * s;
    x[base + i + half_rot] = x1 * c + x0 * s;
  }
}
