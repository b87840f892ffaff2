// Decode attention with an online softmax, one workgroup per query head: each invocation walks
// keys j = lid, lid + WG, ... keeping a running max m, normaliser l and weighted sum acc; the
// invocations' states are then merged: m* = max m, l* = sum l * exp(m - m*), acc likewise.
// q[n_heads, D], k and v [len, n_kv_heads, D] in f32; GQA maps head h to kv head h / group.

struct AttnParams {
  len: u32,
  n_heads: u32,
  n_kv_heads: u32,
  scale: f32,
}

const D = 64u;    // head dimension
const WG = 32u;

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: AttnParams;

var<workgroup> wg_m: array<f32, WG>;
var<workgroup> wg_l: array<f32, WG>;
var<workgroup> wg_acc: array<array<f32, D>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid3: vec3u) {
  let lid = lid3.x;
  let h = wid.x;
  let kvh = h / (params.n_heads / params.n_kv_heads);
  var m = -3.0e38;
  var l = 0.0;
  var acc: array<f32, D>;
  var j = lid;
  loop {
    if (j >= params.len) {
      break;
    }
    let kb = (j * params.n_kv_heads + kvh) * D;
    var s = 0.0;
    for (var d = 0u; d < D; d++) {
      s += q[h * D + d] * k[kb + d];
    }
    s *= params.scale;
    let m_new = max(m, s);
    let corr = exp(m - m_new);
    let pw = exp(s - m_new);
    l = l * corr + pw;
    for (var d = 0u; d < D; d++) {
      acc[d] = acc[d] * corr + pw * v[kb + d];
    }
    m = m_new;
    continuing {
      j += WG;
    }
  }
  wg_m[lid] = m;
  workgroupBarrier();
  var m_all = wg_m[0];
  for (var i = 1u; i < WG; i++) {
    m_all = max(m_all, wg_m[i]);
  }
  let f = select(exp(m - m_all), 0.0, l == 0.0);
  wg_l[lid] = l * f;
  for (var d = 0u; d < D; d++) {
    wg_acc[lid][d] = acc[d] * f;
  }
  workgroupBarrier();
  var l_all = 0.0;
  for (var i = 0u; i < WG; i++) {
    l_all += wg_l[i];
  }
  for (var d = lid; d < D; d += WG) {
    var o = 0.0;
    for (var i = 0u; i < WG; i++) {
      o += wg_acc[i][d];
    }
    out[h * D + d] = o / l_all;
  }
}
