// RoPE on q and k plus the KV-cache append in one dispatch (rope_kv.comp's twin). Workgroup x picks
// the job: [0, n_heads) rotates a q head in place; the next n_kv_heads rotate a k head into the f16
// k cache at state.pos + row; the next n_kv_heads copy a v head into the v cache.
enable f16;

struct RopeKvParams {
  rows: u32,
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
}

var<push_constant> p: RopeKvParams;
@group(0) @binding(0) var<storage, read_write> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<storage, read_write> kcache: array<f16>;
@group(0) @binding(6) var<storage, read_write> vcache: array<f16>;

const WG = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let job = wid.x;
  let row = wid.y;
  let half_rot = p.head_dim / 2u;
  let kv_dim = p.n_kv_heads * p.head_dim;
  let pos = state[1] + row;
  if (job < p.n_heads) {
    let base = (row * p.n_heads + job) * p.head_dim;
    for (var i = lid; i < half_rot; i += WG) {
      let a = f32(pos) * inv_freq[i];
      let c = cos(a);
      let s = sin(a);
      let x0 = q[base + i];
      let x1 = q[base + i + half_rot];
      q[base + i] = x0 * c - x1 * s;
      q[base + i + half_rot] = x1 * c + x0 * s;
    }
  } else if (job < p.n_heads + p.n_kv_heads) {
    let h = job - p.n_heads;
    let src = row * kv_dim + h * p.head_dim;
    let dst = pos * kv_dim + h * p.head_dim;
    for (var i = lid; i < half_rot; i += WG) {
      let a = f32(pos) * inv_freq[i];
      let c = cos(a);
      let s = sin(a);
      let x0 = k[src + i];
      let x1 = k[src + i + half_rot];
      kcache[dst + i] = f16(x0 * c - x1 * s);
      kcache[dst + i + half_rot] = f16(x1 * c + x0 * s);
    }
  } else {
    let h = job - p.n_heads - p.n_kv_heads;
    let src = row * kv_dim + h * p.head_dim;
    let dst = pos * kv_dim + h * p.head_dim;
    for (var i = lid; i < p.head_dim; i += WG) {
      vcache[dst + i] = f16(v[src + i]);
    }
  }
}
