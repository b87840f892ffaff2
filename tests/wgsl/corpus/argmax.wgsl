// Argmax over n values in one workgroup: the largest value, ties to the lowest index (what greedy
// sampling needs). Each invocation scans a strided slice; a tree reduction merges (value, index).

struct Result {
  index: u32,
  value: f32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> result: Result;

const WG = 256u;
var<workgroup> best_v: array<f32, WG>;
var<workgroup> best_i: array<u32, WG>;
var<workgroup> n_total: u32;

fn better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
  return v > bv || (v == bv && i < bi);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    n_total = arrayLength(&logits);
  }
  // Every invocation gets the same count, as the spec requires for uniform control flow.
  let n = workgroupUniformLoad(&n_total);
  var bv = -3.4e38;
  var bi = 0xffffffffu;
  for (var i = lid; i < n; i += WG) {
    let v = logits[i];
    if (better(v, i, bv, bi)) {
      bv = v;
      bi = i;
    }
  }
  best_v[lid] = bv;
  best_i[lid] = bi;
  workgroupBarrier();
  var s = WG / 2u;
  while (s > 0u) {
    if (lid < s && better(best_v[lid + s], best_i[lid + s], best_v[lid], best_i[lid])) {
      best_v[lid] = best_v[lid + s];
      best_i[lid] = best_i[lid + s];
    }
    workgroupBarrier();
    s = s / 2u;
  }
  if (lid == 0u) {
    result = Result(best_i[0], best_v[0]);
  }
}
