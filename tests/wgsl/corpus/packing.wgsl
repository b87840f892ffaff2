// Data packing, bit reinterpretation and bit builtins. Each invocation turns one input word and
// one input float into 16 output words; the host mirrors every line.

@group(0) @binding(0) var<storage, read> words: array<u32>;
@group(0) @binding(1) var<storage, read> floats: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= arrayLength(&words)) { return; }
  let w = words[i];
  let f = floats[i];
  let o = i * 16u;
  out[o + 0u] = pack2x16float(f.xy);
  out[o + 1u] = bitcast<u32>(unpack2x16float(w).y);
  out[o + 2u] = pack4x8unorm(clamp(f, vec4(0.0), vec4(1.0)));
  out[o + 3u] = pack4x8snorm(clamp(f, vec4(-1.0), vec4(1.0)));
  out[o + 4u] = bitcast<u32>(dot(unpack4x8unorm(w), vec4(1.0, 2.0, 3.0, 4.0)));
  out[o + 5u] = pack4xI8(vec4<i32>(f * 100.0));
  out[o + 6u] = pack4xU8Clamp(vec4<u32>(abs(f) * 100.0));
  out[o + 7u] = bitcast<u32>(unpack4xI8(w).z);
  out[o + 8u] = dot4U8Packed(w, 0x01020304u);
  out[o + 9u] = bitcast<u32>(dot4I8Packed(w, 0x01ff7f80u));
  out[o + 10u] = countOneBits(w) + (countLeadingZeros(w) << 8u) + (countTrailingZeros(w) << 16u);
  out[o + 11u] = extractBits(w, 5u, 9u);
  out[o + 12u] = bitcast<u32>(extractBits(bitcast<i32>(w), 20u, 40u));
  out[o + 13u] = insertBits(w, 0xabcdu, 8u, 12u);
  out[o + 14u] = reverseBits(w) ^ bitcast<u32>(firstLeadingBit(bitcast<i32>(w)));
  out[o + 15u] = firstTrailingBit(w) + bitcast<u32>(vec2<f32>(f.zw).x);
}
