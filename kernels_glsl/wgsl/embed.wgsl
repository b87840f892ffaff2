// Embedding rows, the WGSL twin of embed.comp: out[t, :] = W[tokens[t] - token_offset, :] * scale,
// one workgroup per token, W in f16 (WEIGHTS = 0) or Q8_0 (WEIGHTS = 1) bound as 32-bit words.
// A binding may hold a range of the table's rows (tables larger than one binding): rows outside it
// are left for the dispatch whose range holds them.
struct EmbedParams {
  dim: u32,
  n_tokens: u32,
  scale: f32,
  token_offset: u32,
}

var<push_constant> p: EmbedParams;
@group(0) @binding(0) var<storage, read> wt: array<u32>;
@group(0) @binding(1) var<storage, read> tokens: array<i32>;
@group(0) @binding(2) var<storage, read_write> out_rows: array<f32>;

@id(0) override WG: u32 = 128;
override WEIGHTS: u32 = 0;

fn row_bytes(k: u32) -> u32 {
  if (WEIGHTS == 0u) {
    return 2u * k;
  }
  return k / 32u * 34u;
}

fn f16_at(o: u32) -> f32 {
  return unpack2x16float(wt[o >> 2u] >> ((o & 2u) * 8u)).x;
}

fn weight_at(row: u32, k: u32, e: u32) -> f32 {
  if (WEIGHTS == 0u) {
    return f16_at(2u * (row * k + e));
  }
  let bo = (row * (k / 32u) + e / 32u) * 34u;
  let o = bo + 2u + (e & 31u);
  let q = i32(((wt[o >> 2u] >> (8u * (o & 3u))) & 0xffu) << 24u) >> 24u;
  return f16_at(bo) * f32(q);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let t = wid.x;
  if (t >= p.n_tokens) {
    return;
  }
  let row = tokens[t] - i32(p.token_offset);
  let bound = arrayLength(&wt) * 4u + 2u;
  if (row < 0 || u32(row) >= bound / row_bytes(p.dim)) {
    return;
  }
  for (var i = lid; i < p.dim; i += WG) {
    out_rows[t * p.dim + i] = weight_at(u32(row), p.dim, i) * p.scale;
  }
}
