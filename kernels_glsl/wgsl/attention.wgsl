// Decode/prefill attention against the f16 KV cache, the WGSL twin of attention.comp: one workgroup
// per (head, row) at position state.pos + row; causal, optional sliding window and softcap; GQA.
// Scores go to a scratch row in storage (contexts exceed workgroup memory), softmax in f32, then the
// weighted sum of v split over G = WG / (head_dim / 4) groups of invocations that each own 4 dims.
enable f16;

struct AttentionParams {
  rows: u32,
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
  max_ctx: u32,
  window: u32,
  scale: f32,
  softcap: f32,
}

var<push_constant> p: AttentionParams;
@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> kc4: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read> vc4: array<vec4<f16>>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;
@group(0) @binding(4) var<storage, read_write> scores: array<f32>;
@group(0) @binding(5) var<storage, read> state: array<u32>;

const WG = 256u;
const MAX_HEAD_DIM = 512u;
var<workgroup> s_part: array<vec4f, WG>;
var<workgroup> s_q: array<vec4f, MAX_HEAD_DIM / 4u>;
var<workgroup> red: array<f32, WG>;

fn workgroup_reduce(v: f32, lid: u32, is_max: bool) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      red[lid] = select(red[lid] + red[lid + s], max(red[lid], red[lid + s]), is_max);
    }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) tid: u32) {
  let h = wid.x;
  let row = wid.y;
  let kvh = h / (p.n_heads / p.n_kv_heads);
  let hd4 = p.head_dim / 4u;
  let kv_dim4 = p.n_kv_heads * hd4;
  let pos = state[1] + row;
  var lo = 0u;
  if (p.window > 0u && pos + 1u > p.window) {
    lo = pos + 1u - p.window;
  }
  let qbase = (row * p.n_heads + h) * p.head_dim;
  let sbase = (row * p.n_heads + h) * p.max_ctx;

  for (var d = tid; d < hd4; d += WG) {
    s_q[d] = vec4f(q[qbase + 4u * d], q[qbase + 4u * d + 1u], q[qbase + 4u * d + 2u], q[qbase + 4u * d + 3u]);
  }
  workgroupBarrier();

  var mx = -3.402823466e38f;
  for (var j = lo + tid; j <= pos; j += WG) {
    let kb = j * kv_dim4 + kvh * hd4;
    var s = 0.0f;
    for (var d = 0u; d < hd4; d++) {
      s += dot(s_q[d], vec4f(kc4[kb + d]));
    }
    s *= p.scale;
    if (p.softcap > 0.0) {
      s = p.softcap * tanh(s / p.softcap);
    }
    scores[sbase + j] = s;
    mx = max(mx, s);
  }
  mx = workgroup_reduce(mx, tid, true);
  var sum = 0.0f;
  for (var j = lo + tid; j <= pos; j += WG) {
    let e = exp(scores[sbase + j] - mx);
    scores[sbase + j] = e;
    sum += e;
  }
  sum = workgroup_reduce(sum, tid, false);
  storageBarrier();  // the weights written above are read by other invocations below

  let groups = WG / hd4;
  let g = tid / hd4;
  let d = tid % hd4;
  var acc = vec4f(0.0);
  if (g < groups) {
    for (var j = lo + g; j <= pos; j += groups) {
      acc += scores[sbase + j] * vec4f(vc4[j * kv_dim4 + kvh * hd4 + d]);
    }
  }
  s_part[tid] = acc;
  workgroupBarrier();
  if (tid < hd4) {
    var t = vec4f(0.0);
    for (var k = 0u; k < groups; k++) {
      t += s_part[k * hd4 + tid];
    }
    t /= sum;
    let ob = qbase + 4u * tid;
    o[ob] = t.x;
    o[ob + 1u] = t.y;
    o[ob + 2u] = t.z;
    o[ob + 3u] = t.w;
  }
}
