// Q4_K dequantizing GEMV: y[r] = sum_k dequant(W)[r, k] * x[k]. W rows are GGML block_q4_K blocks
// of 256 weights (144 bytes = 36 u32 words): f16 d, f16 dmin (word 0, read with
// unpack2x16float), u8 scales[12] (words 1..3: 6-bit scales and mins packed), u8 qs[128]
// (words 4..35: two 4-bit weights per byte). One workgroup per row, one thread per 32-weight
// sub-block pair, the result summed in workgroup memory.

const BLOCK_WORDS = 36u;
const QK = 256u;

struct Params { m: u32, k: u32 }

@group(0) @binding(0) var<storage, read> wq: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> partial: array<f32, 64>;

fn byte_at(word_base: u32, i: u32) -> u32 {
  return extractBits(wq[word_base + i / 4u], (i % 4u) * 8u, 8u);
}

// GGML's get_scale_min_k4: 6-bit scale and min of sub-block j (0..7).
fn scale_min(block: u32, j: u32) -> vec2<f32> {
  let s = block + 1u;  // scales start at word 1
  var sc: u32;
  var mn: u32;
  if (j < 4u) {
    sc = byte_at(s, j) & 63u;
    mn = byte_at(s, j + 4u) & 63u;
  } else {
    sc = (byte_at(s, j + 4u) & 0xFu) | ((byte_at(s, j - 4u) >> 6u) << 4u);
    mn = (byte_at(s, j + 4u) >> 4u) | ((byte_at(s, j) >> 6u) << 4u);
  }
  return vec2<f32>(f32(sc), f32(mn));
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = wg.x;
  let blocks = p.k / QK;
  var acc = 0.0;
  // Work item t: block t / 4, 64-weight chunk t % 4 (sub-blocks 2c and 2c+1).
  for (var t = lid; t < blocks * 4u; t += 64u) {
    let b = t / 4u;
    let c = t % 4u;
    let block = (row * blocks + b) * BLOCK_WORDS;
    let dm = unpack2x16float(wq[block]);
    let sm0 = scale_min(block, 2u * c);
    let sm1 = scale_min(block, 2u * c + 1u);
    let d0 = dm.x * sm0.x;
    let m0 = dm.y * sm0.y;
    let d1 = dm.x * sm1.x;
    let m1 = dm.y * sm1.y;
    let xbase = b * QK + c * 64u;
    for (var i = 0u; i < 8u; i++) {
      let q = wq[block + 4u + c * 8u + i];  // 4 bytes = weights 4i..4i+3 (low) and 32+4i.. (high)
      let lo = vec4<f32>(unpack4xU8(q & 0x0F0F0F0Fu));
      let hi = vec4<f32>(unpack4xU8((q >> 4u) & 0x0F0F0F0Fu));
      let xl = vec4<f32>(x[xbase + 4u * i], x[xbase + 4u * i + 1u], x[xbase + 4u * i + 2u], x[xbase + 4u * i + 3u]);
      let xh = vec4<f32>(x[xbase + 32u + 4u * i], x[xbase + 33u + 4u * i], x[xbase + 34u + 4u * i], x[xbase + 35u + 4u * i]);
      acc += dot(d0 * lo - vec4(m0), xl) + dot(d1 * hi - vec4(m1), xh);
    }
  }
  partial[lid] = acc;
  workgroupBarrier();
  for (var s = 32u; s > 0u; s /= 2u) {
    if (lid < s) {
      partial[lid] += partial[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u && row < p.m) {
    y[row] = partial[0];
  }
}
