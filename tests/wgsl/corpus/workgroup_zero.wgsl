// Zero-initialised memory: workgroup and private variables read before any write hold zeros in
// WGSL (GLSL leaves them undefined). `dirty` fills the workgroup memory with garbage first, so a
// later dispatch of `check` on the same hardware would see it if nothing cleared it.

struct Pair {
  a: vec3<u32>,
  b: array<u32, 5>,
}

var<workgroup> big: array<u32, 300>;   // more elements than invocations
var<workgroup> pair: Pair;
var<workgroup> counter: atomic<u32>;
var<private> pv: array<u32, 4>;
var<private> pv_scalar: u32;

@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn dirty(@builtin(local_invocation_index) lid: u32) {
  for (var i = lid; i < 300u; i += 64u) {
    big[i] = 0xdeadbeefu;
  }
  if (lid == 0u) {
    pair.a = vec3u(7u);
    pair.b[2] = 9u;
    atomicStore(&counter, 1234u);
  }
  workgroupBarrier();
  out[lid] = big[(lid * 7u) % 300u] & 1u;
}

@compute @workgroup_size(64)
fn check(@builtin(local_invocation_index) lid: u32) {
  var sum = 0u;
  for (var i = lid; i < 300u; i += 64u) {
    sum += big[i];
  }
  sum += pair.a.x + pair.a.y + pair.a.z + pair.b[lid % 5u];
  sum += atomicLoad(&counter);
  sum += pv[lid % 4u] + pv_scalar;
  var local_arr: array<u32, 40>;   // function-scope variables are zeroed too
  var local_vec: vec4<u32>;
  sum += local_arr[lid % 40u] + local_vec.w;
  out[lid] = sum;
}
