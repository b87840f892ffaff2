// RoPE on q and k plus the KV-cache append in one dispatch (rope_kv.comp's twin, full rotary only). The
// workgroups of row y take its items grid-stride: the q pairs of every head (rotated in place), the k
// pairs (rotated into the f16 k cache at state.pos + y), the v values (into the v cache).
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

const WG = 128u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let row = wid.y;
  let half_rot = p.head_dim / 2u;
  let kv_dim = p.n_kv_heads * p.head_dim;
  let nq = p.n_heads * half_rot;
  let nk = p.n_kv_heads * half_rot;
  let n = nq + nk + kv_dim;
  let pos = state[1] + row;
  let q_dim = p.n_heads * p.head_dim;
  for (var it = wid.x * WG + lid; it < n; it += nwg.x * WG) {
    if (it < nq) {
      let b = row * q_dim + (it / half_rot) * p.head_dim + it % half_rot;
      let a = f32(pos) * inv_freq[it % half_rot];
      let c = cos(a);
      let s = sin(a);
      let x0 = q[b];
      let x1 = q[b + half_rot];
      q[b] = x0 * c - x1 * s;
      q[b + half_rot] = x1 * c + x0 * s;
    } else if (it < nq + nk) {
      let h = (it - nq) / half_rot;
      let i = (it - nq) % half_rot;
      let src = row * kv_dim + h * p.head_dim + i;
      let dst = pos * kv_dim + h * p.head_dim + i;
      let a = f32(pos) * inv_freq[i];
      let c = cos(a);
      let s = sin(a);
      let x0 = k[src];
      let x1 = k[src + half_rot];
      kcache[dst] = f16(x0 * c - x1 * s);
      kcache[dst + half_rot] = f16(x1 * c + x0 * s);
    } else {
      let i = it - nq - nk;
      vcache[pos * kv_dim + i] = f16(v[row * kv_dim + i]);
    }
  }
}
