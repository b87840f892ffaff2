// Appends rows of k (or v) to the f16 KV cache at positions state.pos + row (kv_store.comp's twin).
enable f16;

struct KvStoreParams {
  rows: u32,
  kv_dim: u32,
  pad0: u32,
  pad1: u32,
}

var<push_constant> p: KvStoreParams;
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> cache: array<f16>;
@group(0) @binding(2) var<storage, read> state: array<u32>;

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(global_invocation_id) gid: vec3u) {
  let row = wid.y;
  let i = gid.x;
  if (i >= p.kv_dim) {
    return;
  }
  cache[(state[1] + row) * p.kv_dim + i] = f16(src[row * p.kv_dim + i]);
}
