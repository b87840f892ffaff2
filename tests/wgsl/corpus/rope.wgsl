// RoPE, the math of kernels_glsl/rope.comp: rotates the first rot_dim dims of each head of
// x[rows, n_heads, head_dim] in place with rotate-half (NeoX) pairing (i, i + rot_dim/2), at
// position pos0 + row. inv_freq[rot_dim/2] comes from the host.

struct RopeParams {
  rows: u32,
  n_heads: u32,
  head_dim: u32,
  rot_dim: u32,
  pos0: u32,
}

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(2) var<uniform> p: RopeParams;

fn rotate(a: f32, b: f32, angle: f32) -> vec2f {
  let c = cos(angle);
  let s = sin(angle);
  return vec2f(a * c - b * s, b * c + a * s);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let half_rot = p.rot_dim / 2u;
  let total = p.rows * p.n_heads * half_rot;
  let t = gid.x;
  if (t >= total) {
    return;
  }
  let i = t % half_rot;
  let head = (t / half_rot) % p.n_heads;
  let row = t / (half_rot * p.n_heads);
  let pos = f32(p.pos0 + row);
  let base = (row * p.n_heads + head) * p.head_dim;
  let r = rotate(x[base + i], x[base + i + half_rot], pos * inv_freq[i]);
  x[base + i] = r.x;
  x[base + i + half_rot] = r.y;
}
