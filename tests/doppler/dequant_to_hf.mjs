// Writes a DOPPLER RDRR bundle back out as a float32 Hugging Face checkpoint, every Q4_K_M tensor
// dequantized by DOPPLER's own quantizer (src/converter/quantizer.js of the installed package). The
// oracle tests run blueshift on it through the HF path: what DOPPLER means by its bytes, read without
// blueshift's RDRR loader, so a misread block layout or span cannot hide in both sides of a check.
//   node dequant_to_hf.mjs DOPPLER_DIR BUNDLE_DIR HF_CONFIG_JSON OUT_DIR
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dopplerDir, bundleDir, configJson, outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node dequant_to_hf.mjs DOPPLER_DIR BUNDLE_DIR HF_CONFIG_JSON OUT_DIR');
  process.exit(2);
}
const quantizer = await import(pathToFileURL(path.join(dopplerDir, 'src', 'converter', 'quantizer.js')).href);
const manifest = JSON.parse(fs.readFileSync(path.join(bundleDir, 'manifest.json'), 'utf8'));
const shards = manifest.shards.map((s) => fs.readFileSync(path.join(bundleDir, s.filename ?? s.fileName)));

// A tensor's bytes, gathered from its spans (or its one shard range) into a fresh, aligned buffer.
function tensorBytes(name, t) {
  const spans = t.spans ?? [{ shardIndex: t.shard, offset: t.offset, size: t.size }];
  const out = new Uint8Array(t.size);
  let at = 0;
  for (const s of spans) {
    const shard = shards[s.shardIndex];
    if (!shard || s.offset + s.size > shard.length || at + s.size > t.size) {
      throw new Error(`${name}: span ${JSON.stringify(s)} leaves its shard or the tensor`);
    }
    out.set(shard.subarray(s.offset, s.offset + s.size), at);
    at += s.size;
  }
  if (at !== t.size) throw new Error(`${name}: spans cover ${at} of ${t.size} bytes`);
  return out;
}

function toFloat32(name, t, bytes) {
  const n = t.shape.reduce((a, b) => a * b, 1);
  switch (t.dtype) {
    case 'Q4_K_M': {
      const layout = t.layout ?? 'row';
      if (layout === 'row') return quantizer.dequantizeQ4KMRowWise(bytes, t.shape);
      if (layout !== 'col' || t.shape.length !== 2) throw new Error(`${name}: layout ${layout} of ${t.shape} is not read here`);
      // 'col': DOPPLER quantized the transpose [in, out] row-wise; undo both.
      const [rows, cols] = t.shape;
      const transposed = quantizer.dequantizeQ4KMRowWise(bytes, [cols, rows]);
      const out = new Float32Array(rows * cols);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r * cols + c] = transposed[c * rows + r];
      return out;
    }
    case 'F16': {
      const h = new Uint16Array(bytes.buffer, 0, n);
      return Float32Array.from(h, (x) => quantizer.float16ToFloat32(x));
    }
    case 'BF16': {
      const h = new Uint16Array(bytes.buffer, 0, n);
      return new Float32Array(Uint32Array.from(h, (x) => x << 16).buffer);
    }
    case 'F32':
      return new Float32Array(bytes.buffer, 0, n);
    default:
      throw new Error(`${name}: dtype ${t.dtype} is not read here`);
  }
}

// safetensors: u64 header length, the JSON header (padded with spaces to 8 bytes), then the data.
const header = {};
const parts = [];
let offset = 0;
for (const [name, t] of Object.entries(manifest.tensors)) {
  const f32 = toFloat32(name, t, tensorBytes(name, t));
  const data = new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength);
  header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + data.length] };
  parts.push(data);
  offset += data.length;
}
let json = JSON.stringify(header);
json += ' '.repeat((8 - (json.length % 8)) % 8);
const length = Buffer.alloc(8);
length.writeBigUInt64LE(BigInt(json.length));
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'model.safetensors'), Buffer.concat([length, Buffer.from(json), ...parts]));
fs.copyFileSync(configJson, path.join(outDir, 'config.json'));
console.log(`${outDir}: ${Object.keys(header).length} tensors, ${offset} bytes of float32`);
