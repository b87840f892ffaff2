// Atomics in storage and workgroup memory: a histogram (atomicAdd), extremes (atomicMax/Min on
// i32), a float sum through an atomicCompareExchangeWeak loop on bit patterns, and the other
// read-modify-write builtins on a workgroup counter.

struct Stats {
  max_v: atomic<i32>,
  min_v: atomic<i32>,
  sum_bits: atomic<u32>,
  ops: atomic<u32>,
}

@group(0) @binding(0) var<storage, read> values: array<i32>;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>, 16>;
@group(0) @binding(2) var<storage, read_write> stats: Stats;

var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_bits: atomic<u32>;

fn add_float(x: f32) {
  var old = atomicLoad(&stats.sum_bits);
  loop {
    let r = atomicCompareExchangeWeak(&stats.sum_bits, old, bitcast<u32>(bitcast<f32>(old) + x));
    if (r.exchanged) {
      break;
    }
    old = r.old_value;
  }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let n = arrayLength(&values);
  if (gid.x < n) {
    let v = values[gid.x];
    atomicAdd(&hist[u32(v) & 15u], 1u);
    atomicMax(&stats.max_v, v);
    atomicMin(&stats.min_v, v);
    add_float(f32(v & 7));
    atomicAdd(&wg_count, 1u);
    atomicOr(&wg_bits, 1u << (u32(v) & 31u));
  }
  workgroupBarrier();
  if (lid == 0u) {
    // ops: per workgroup, count ^ 1, then + count, - 1, xor/and/exchange leave a known value.
    let c = atomicLoad(&wg_count);
    atomicXor(&wg_count, 1u);
    atomicSub(&wg_count, 1u);
    atomicAnd(&wg_count, 0xffffu);
    let prev = atomicExchange(&wg_count, c);
    atomicAdd(&stats.ops, c + (prev & 0u) + countOneBits(atomicLoad(&wg_bits)) * 0u);
  }
}
