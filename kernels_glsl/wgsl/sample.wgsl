// GPU sampling for the decode loop (sample.comp's twin): one workgroup over the vocabulary.
//   repetition penalty (HF: logit > 0 ? logit / r : logit * r, once per distinct token in the history)
//   -> temperature -> top-k -> top-p -> min-p -> a draw from Philox4x32-10(seed, step).
// Top-k and top-p are thresholds found by bisection on the logit value (no sort); the draw walks the
// kept probabilities in token order. Reductions are tree reductions in workgroup memory, so the same
// code runs with any subgroup size; WG must be a power of two.
struct SampleParams {
  vocab: u32,
  top_k: u32,
  temperature: f32,
  top_p: f32,
  min_p: f32,
  repeat_penalty: f32,
  seed_lo: u32,
  seed_hi: u32,
  max_tokens: u32,
  n_eos: u32,
  ignore_eos: u32,
  ring_size: u32,
}

var<push_constant> p: SampleParams;
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> history: array<u32>;
@group(0) @binding(3) var<storage, read_write> ring: array<u32>;
@group(0) @binding(4) var<storage, read> eos: array<u32>;
@group(0) @binding(5) var<storage, read_write> seen: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> tokens: array<u32>;
@group(0) @binding(7) var<storage, read> control: array<u32>;  // host-visible; [0] != 0 cancels

@id(0) override WG: u32 = 256;

var<workgroup> red: array<f32, WG>;
var<workgroup> red_idx: array<u32, WG>;
var<workgroup> s_token: u32;
var<workgroup> s_chunk: atomic<u32>;
var<workgroup> s_stop: u32;

fn workgroup_sum(v: f32, lid: u32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      red[lid] += red[lid + s];
    }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

// High 32 bits of a 32 x 32-bit product (GLSL's umulExtended; WGSL has none).
fn mul_hi(a: u32, b: u32) -> u32 {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}

fn philox(c0: vec4u, k0: vec2u) -> vec4u {
  var c = c0;
  var k = k0;
  for (var r = 0; r < 10; r++) {
    let hi0 = mul_hi(0xD2511F53u, c.x);
    let lo0 = 0xD2511F53u * c.x;
    let hi1 = mul_hi(0xCD9E8D57u, c.z);
    let lo1 = 0xCD9E8D57u * c.z;
    c = vec4u(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k += vec2u(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// Count (as_count) or probability mass of the logits >= t, over the workgroup.
fn mass_at_least(t: f32, mx: f32, as_count: bool, lid: u32) -> f32 {
  var acc = 0.0f;
  for (var i = lid; i < p.vocab; i += WG) {
    if (logits[i] >= t) {
      acc += select(exp(logits[i] - mx), 1.0, as_count);
    }
  }
  return workgroup_sum(acc, lid);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32) {
  // Stopped already, or cancelled by the host (read once): a cancel stops the loop without a token.
  if (tid == 0u) {
    s_stop = select(select(0u, 2u, control[0] != 0u), 1u, state[2] != 0u);
  }
  let why = workgroupUniformLoad(&s_stop);
  if (why != 0u) {
    if (why == 2u && tid == 0u) {
      state[2] = 1u;
      ring[1] = 1u;
    }
    return;
  }
  let pos = state[1];
  let n_hist = pos + 1u;

  let penalize = p.repeat_penalty != 1.0;
  if (penalize) {
    for (var i = tid; i < n_hist; i += WG) {
      let t = history[i];
      if (t < p.vocab) {
        atomicOr(&seen[t >> 5u], 1u << (t & 31u));
      }
    }
    storageBarrier();
  }
  // Penalty and temperature in place; max and first argmax.
  var inv_t = 1.0f;
  if (p.temperature > 0.0) {
    inv_t = 1.0 / p.temperature;
  }
  var best = -3.402823466e38f;
  var best_i = 0xffffffffu;
  for (var i = tid; i < p.vocab; i += WG) {
    var l = logits[i];
    if (penalize && (atomicLoad(&seen[i >> 5u]) & (1u << (i & 31u))) != 0u) {
      l = select(l * p.repeat_penalty, l / p.repeat_penalty, l > 0.0);
    }
    l *= inv_t;
    logits[i] = l;
    if (l > best || (l == best && i < best_i)) {
      best = l;
      best_i = i;
    }
  }
  // Workgroup argmax, ties to the lowest id (as torch.argmax).
  red[tid] = best;
  red_idx[tid] = best_i;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (tid < s) {
      let ov = red[tid + s];
      let oi = red_idx[tid + s];
      if (ov > red[tid] || (ov == red[tid] && oi < red_idx[tid])) {
        red[tid] = ov;
        red_idx[tid] = oi;
      }
    }
    workgroupBarrier();
  }
  let mx = red[0];
  let arg = red_idx[0];
  workgroupBarrier();

  var token = arg;
  if (p.temperature > 0.0) {
    let lo = mx - 1e4;  // logits below mx - 1e4 have probability 0 in f32
    let hi = mx;
    var t = lo;
    if (p.top_k > 0u && p.top_k < p.vocab) {
      var a = lo;
      var b = hi;  // invariant: count(>= a) >= k
      for (var it = 0; it < 40; it++) {
        let m = 0.5 * (a + b);
        if (mass_at_least(m, mx, true, tid) >= f32(p.top_k)) {
          a = m;
        } else {
          b = m;
        }
      }
      t = max(t, a);
    }
    if (p.top_p > 0.0 && p.top_p < 1.0) {
      let total = mass_at_least(t, mx, false, tid);  // HF renormalizes after top-k: top-p is of this mass
      var a = t;
      var b = hi;  // invariant: mass(>= a) >= top_p * total
      for (var it = 0; it < 40; it++) {
        let m = 0.5 * (a + b);
        if (mass_at_least(m, mx, false, tid) >= p.top_p * total) {
          a = m;
        } else {
          b = m;
        }
      }
      t = max(t, a);
    }
    if (p.min_p > 0.0) {
      t = max(t, mx + log(p.min_p));
    }
    let kept = mass_at_least(t, mx, false, tid);
    let r = philox(vec4u(state[4], 0u, 0x5eed5eedu, 0u), vec2u(p.seed_lo, p.seed_hi));
    let u = (f32(r.x >> 8u) + 0.5) * (1.0 / 16777216.0) * kept;
    // Each invocation owns a contiguous chunk; an exclusive prefix over chunks finds the owner of u.
    let chunk = (p.vocab + WG - 1u) / WG;
    let b0 = tid * chunk;
    let b1 = min(b0 + chunk, p.vocab);
    var mine = 0.0f;
    for (var i = b0; i < b1; i++) {
      if (logits[i] >= t) {
        mine += exp(logits[i] - mx);
      }
    }
    red[tid] = mine;
    if (tid == 0u) {
      s_token = arg;
      atomicStore(&s_chunk, 0u);
    }
    workgroupBarrier();
    var before = 0.0f;
    for (var g = 0u; g < tid; g++) {
      before += red[g];
    }
    // The owner of u: the last chunk with kept mass whose prefix is <= u, so u never falls past the
    // chunks' f32 total (sample.comp says more); its walk ends on its last kept token if rounding
    // keeps the running sum below u.
    if (mine > 0.0 && u >= before) {
      atomicMax(&s_chunk, tid + 1u);
    }
    workgroupBarrier();
    if (atomicLoad(&s_chunk) == tid + 1u) {
      var acc = before;
      var pick = 0xffffffffu;
      var last = 0xffffffffu;
      for (var i = b0; i < b1 && pick == 0xffffffffu; i++) {
        if (logits[i] < t) {
          continue;
        }
        acc += exp(logits[i] - mx);
        last = i;
        if (u < acc) {
          pick = i;
        }
      }
      s_token = select(last, pick, pick != 0xffffffffu);
    }
    token = workgroupUniformLoad(&s_token);
  }

  if (penalize) {  // leave the bitmap clear for the next step
    workgroupBarrier();
    for (var i = tid; i < n_hist; i += WG) {
      let t = history[i];
      if (t < p.vocab) {
        atomicStore(&seen[t >> 5u], 0u);
      }
    }
  }
  if (tid == 0u) {
    let n = state[3];
    ring[2u + n % p.ring_size] = token;  // [0] count, [1] stop: the host reads these after each batch
    history[pos + 1u] = token;
    tokens[0] = token;
    state[0] = token;
    state[1] = pos + 1u;
    state[3] = n + 1u;
    state[4] = state[4] + 1u;
    var stop = n + 1u >= p.max_tokens;
    if (p.ignore_eos == 0u) {
      for (var e = 0u; e < p.n_eos; e++) {
        stop = stop || token == eos[e];
      }
    }
    state[2] = select(0u, 1u, stop);
    ring[1] = select(0u, 1u, stop);
    ring[0] = n + 1u;
  }
}
