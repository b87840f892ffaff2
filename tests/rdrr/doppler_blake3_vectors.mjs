// Prints the DOPPLER "blake3" test table of tests/rdrr/test_blake3.cpp, computed by DOPPLER's own
// src/storage/blake3.js (its one-shot hash(), checked against its incremental hasher fed 777-byte
// pieces) over the BLAKE3 specification's test inputs (byte i = i mod 251).
// Usage: node tests/rdrr/doppler_blake3_vectors.mjs PATH/TO/doppler-gpu/src/storage/blake3.js
//   (npm install --prefix DIR doppler-gpu@0.5.1 puts it in DIR/node_modules/doppler-gpu)
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const { hash, createHasher } = await import(pathToFileURL(resolve(process.argv[2])).href);
const lengths = [0, 1, 2, 3, 63, 64, 65, 127, 128, 129, 1023, 1024, 1025, 2048, 2049, 3072, 3073, 4096,
  4097, 5120, 5121, 8192, 8193, 16384, 31744, 65536, 65537, 102400, 262144, 1048576, 1049601, 4194305];
for (const n of lengths) {
  const input = new Uint8Array(n);
  for (let i = 0; i < n; i++) input[i] = i % 251;
  const oneShot = Buffer.from(await hash(input)).toString('hex');
  const h = createHasher();
  for (let off = 0; off < n; off += 777) h.update(input.subarray(off, Math.min(n, off + 777)));
  if (Buffer.from(h.finalize()).toString('hex') !== oneShot) throw new Error(`length ${n}: hashers disagree`);
  console.log(`    {${n}, "${oneShot}"},`);
}
