// Subgroup builtins (any subgroup size): reductions, scans, shuffles, broadcast, ballot, elect.
// Output per invocation: 12 words; word 0 holds the subgroup size so the host can mirror the rest.
enable subgroups;

@group(0) @binding(0) var<storage, read> vals: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) n: u32) {
  let x = vals[lid];
  let u = lid * 3u + 1u;
  let o = lid * 12u;
  out[o + 0u] = n;
  out[o + 1u] = bitcast<u32>(subgroupAdd(x));
  out[o + 2u] = bitcast<u32>(subgroupMax(x));
  out[o + 3u] = subgroupMin(u) + subgroupExclusiveAdd(u) * 1000u;
  out[o + 4u] = subgroupInclusiveAdd(u);
  out[o + 5u] = bitcast<u32>(subgroupShuffle(x, (lane + 1u) % n));
  out[o + 6u] = subgroupShuffleXor(u, 1u);
  out[o + 7u] = select(0u, subgroupShuffleDown(u, 1u), lane + 1u < n) + select(0u, subgroupShuffleUp(u, 1u), lane > 0u) * 1000u;
  out[o + 8u] = subgroupBroadcast(u, 0u) + subgroupBroadcastFirst(u + 5u) * 1000u;
  out[o + 9u] = subgroupBallot(lane % 2u == 0u).x;
  out[o + 10u] = select(0u, 1u, subgroupElect()) + select(0u, 2u, subgroupAll(x > -10.0)) + select(0u, 4u, subgroupAny(lane == 1u));
  out[o + 11u] = subgroupOr(1u << lane) ^ subgroupAnd(u | 1u) ^ subgroupXor(u);
}
