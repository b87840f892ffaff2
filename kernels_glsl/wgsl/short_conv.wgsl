// LFM2's gated short convolution (short_conv.comp's twin): y = C * causal depthwise conv(B * x) per
// channel, the rolling conv state [kernel - 1, dim] read and advanced in place; state.pos == 0 (a new
// sequence) reads zeros before row 0. Workgroups: x over channels, y over blocks of ROWS rows.
struct ShortConvParams {
  rows: u32,
  dim: u32,
  kernel: u32,
  pad0: u32,
}

var<push_constant> p: ShortConvParams;
@group(0) @binding(0) var<storage, read> bcx: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> cs: array<f32>;
@group(0) @binding(3) var<storage, read> state: array<u32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

const WG = 64u;
const ROWS = 16u;  // rows per invocation (short_conv.comp's SHORT_CONV_ROWS)

// The conv input at row s of this chunk (negative: the state's row hist + s; zero for a new sequence).
fn conv_in(s: i32, c: u32, hist: u32, fresh: bool) -> f32 {
  if (s >= 0) {
    let r = u32(s) * 3u * p.dim;
    return bcx[r + c] * bcx[r + 2u * p.dim + c];
  }
  if (fresh) {
    return 0.0;
  }
  return cs[u32(i32(hist) + s) * p.dim + c];
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let c = gid.x;
  if (c >= p.dim) {
    return;
  }
  let hist = p.kernel - 1u;
  let fresh = state[1] == 0u;
  let t0 = wid.y * ROWS;
  for (var t = t0; t < min(p.rows, t0 + ROWS); t = t + 1u) {
    var acc = 0.0;
    for (var k = 0u; k < p.kernel; k = k + 1u) {
      acc = acc + w[c * p.kernel + k] * conv_in(i32(t) - i32(hist) + i32(k), c, hist, fresh);
    }
    y[t * p.dim + c] = bcx[t * 3u * p.dim + p.dim + c] * acc;
  }
  // Only block 0 reads the old state, and only it rewrites it, after its reads.
  if (wid.y != 0u) {
    return;
  }
  // Ascending j reads a row still in the old state (index rows + j > j) before it is overwritten.
  for (var j = 0u; j < hist; j = j + 1u) {
    cs[j * p.dim + c] = conv_in(i32(p.rows) - i32(hist) + i32(j), c, hist, fresh);
  }
}
