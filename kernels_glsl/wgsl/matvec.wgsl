// y = W x for the decode path, the WGSL twin of matvec_f16.comp / matvec_q8_0.comp (one file, the
// weight format picked by the WEIGHTS override: 0 = f16, 1 = Q8_0). W [m, k] row-major, x [batch, k],
// y [batch, m] in f32; y += W x when accumulate != 0 (the residual folded into the projection).
// Dispatch ((m + ROWS - 1) / ROWS, batch); @id(0) = workgroup size, @id(1) = ROWS, as the GLSL kernels.
//
// Weights are bound as 32-bit words: f16 pairs are decoded with unpack2x16float, and Q8_0 blocks
// {f16 d; i8 qs[32]} (34 bytes, so every other block starts mid-word) byte by byte. Partial sums meet
// through subgroupAdd, then per-subgroup slots in workgroup memory (subgroup s = invocations
// [s * subgroup_size, (s + 1) * subgroup_size), as on every Vulkan driver for 1-D workgroups).
enable subgroups;

struct MatvecParams {
  m: u32,
  k: u32,
  batch: u32,
  accumulate: u32,
}

var<push_constant> p: MatvecParams;
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@id(0) override WG: u32 = 256;
@id(1) override ROWS: u32 = 2;
override WEIGHTS: u32 = 0;

const MAX_ROWS = 8u;
const MAX_SUBGROUPS = 64u;
var<workgroup> red: array<array<f32, MAX_SUBGROUPS>, ROWS>;

fn byte_at(o: u32) -> u32 {
  return (w[o >> 2u] >> (8u * (o & 3u))) & 0xffu;
}

fn f16_at(o: u32) -> f32 {  // o is 2-byte aligned
  return unpack2x16float(w[o >> 2u] >> ((o & 2u) * 8u)).x;
}

fn weight(row: u32, e: u32) -> f32 {
  if (WEIGHTS == 0u) {
    return f16_at(2u * (row * p.k + e));
  }
  let bo = (row * (p.k / 32u) + e / 32u) * 34u;
  let q = i32(byte_at(bo + 2u + (e & 31u)) << 24u) >> 24u;  // sign-extend the code
  return f16_at(bo) * f32(q);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sg_size: u32) {
  let row0 = wid.x * ROWS;
  let b = wid.y;
  var acc: array<f32, MAX_ROWS>;
  if (WEIGHTS == 0u && (p.k & 1u) == 0u) {
    // f16 rows of whole words: one word (two weights) per step, x reused for all ROWS rows.
    let nw = p.k / 2u;
    for (var j = lid; j < nw; j += WG) {
      let xv = vec2f(x[b * p.k + 2u * j], x[b * p.k + 2u * j + 1u]);
      for (var r = 0u; r < ROWS; r++) {
        let row = min(row0 + r, p.m - 1u);  // rows past m compute a duplicate that is never written
        acc[r] += dot(unpack2x16float(w[row * nw + j]), xv);
      }
    }
  } else {
    for (var i = lid; i < p.k; i += WG) {
      let xv = x[b * p.k + i];
      for (var r = 0u; r < ROWS; r++) {
        acc[r] += weight(min(row0 + r, p.m - 1u), i) * xv;
      }
    }
  }
  for (var r = 0u; r < ROWS; r++) {
    let s = subgroupAdd(acc[r]);
    if (lane == 0u) {
      red[r][lid / sg_size] = s;
    }
  }
  workgroupBarrier();
  let n_sub = (WG + sg_size - 1u) / sg_size;
  for (var r = lid; r < ROWS; r += WG) {
    if (row0 + r >= p.m) {
      break;
    }
    var s = 0.0f;
    for (var i = 0u; i < n_sub; i++) {
      s += red[r][i];
    }
    let o = b * p.m + row0 + r;
    if (p.accumulate != 0u) {
      y[o] = y[o] + s;
    } else {
      y[o] = s;
    }
  }
}
