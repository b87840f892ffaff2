// Start of a recorded decode step (gate.comp's twin): the step's indirect dispatch counts, or zeros
// once the GPU has decided to stop (state[2]) or the host has cancelled (control[0]).
struct GateParams {
  n: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

var<push_constant> p: GateParams;
@group(0) @binding(0) var<storage, read> nominal: array<u32>;
@group(0) @binding(1) var<storage, read_write> args: array<u32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read> control: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i < p.n * 3u) {
    args[i] = select(nominal[i], 0u, state[2] != 0u || control[0] != 0u);
  }
}
