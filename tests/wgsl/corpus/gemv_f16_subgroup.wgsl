// f16 GEMV with subgroupAdd: y[r] = sum_k W[r, k] * x[k], W in f16 (rows of K), x and y in f32.
// One workgroup per ROWS rows; each subgroup sums its lanes with subgroupAdd, then the subgroups'
// partial sums meet in workgroup memory. Works for any subgroup size.
enable f16;
enable subgroups;

struct Dims {
  m: u32,
  k: u32,
}

@group(0) @binding(0) var<storage, read> w: array<vec2<f16>>;  // K is even
@group(0) @binding(1) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

override ROWS: u32 = 2;
const WG: u32 = 64;
var<workgroup> sums: array<array<f32, ROWS>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sg_size: u32) {
  let k2 = dims.k / 2u;
  for (var r = 0u; r < ROWS; r++) {
    let row = wg.x * ROWS + r;
    var acc = 0.0f;
    if (row < dims.m) {
      for (var i = lid; i < k2; i += WG) {
        acc = fma(dot(vec2<f32>(w[row * k2 + i]), x[i]), 1.0, acc);
      }
    }
    let s = subgroupAdd(acc);
    if (lane == 0u) {
      sums[lid / sg_size][r] = s;
    }
  }
  workgroupBarrier();
  if (lid < ROWS) {
    let row = wg.x * ROWS + lid;
    var total = 0.0;
    let n_sub = (WG + sg_size - 1u) / sg_size;
    for (var s = 0u; s < n_sub; s++) {
      total += sums[s][lid];
    }
    if (row < dims.m) {
      y[row] = total;
    }
  }
}
