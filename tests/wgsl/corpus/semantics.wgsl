// WGSL answers where GLSL has none or another one. Three entry points over the same data:
//   int_ops:   a / b, a % b for i32 and u32 (by zero, INT_MIN / -1, negative operands)
//   shifts:    a << s, a >> s with s >= 32 (WGSL takes s modulo 32)
//   casts:     i32(f), u32(f) saturate; f32 % is a truncated remainder

@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<i32>;
@group(0) @binding(3) var<storage, read> f: array<f32>;

@compute @workgroup_size(32)
fn int_ops(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= arrayLength(&a)) { return; }
  let x = a[i];
  let y = b[i];
  out[8u * i + 0u] = x / y;
  out[8u * i + 1u] = x % y;
  out[8u * i + 2u] = bitcast<i32>(bitcast<u32>(x) / bitcast<u32>(y));
  out[8u * i + 3u] = bitcast<i32>(bitcast<u32>(x) % bitcast<u32>(y));
  var q = x;
  q /= y;
  out[8u * i + 4u] = q;
  var r = vec2<i32>(x, y);
  r %= vec2<i32>(y);
  out[8u * i + 5u] = r.x;
  out[8u * i + 6u] = (vec3<i32>(x) / y).z;
  out[8u * i + 7u] = -x;
}

@compute @workgroup_size(32)
fn shifts(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= arrayLength(&a)) { return; }
  let x = a[i];
  let s = bitcast<u32>(b[i]);
  out[4u * i + 0u] = x << s;
  out[4u * i + 1u] = x >> s;
  out[4u * i + 2u] = bitcast<i32>(bitcast<u32>(x) >> s);
  var v = vec2<u32>(bitcast<u32>(x), 1u);
  v <<= vec2<u32>(s, s + 1u);
  out[4u * i + 3u] = bitcast<i32>(v.x ^ v.y);
}

@compute @workgroup_size(32)
fn casts(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= arrayLength(&f)) { return; }
  let v = f[i];
  out[4u * i + 0u] = i32(v);
  out[4u * i + 1u] = bitcast<i32>(u32(v));
  out[4u * i + 2u] = bitcast<i32>(v % 3.0);
  out[4u * i + 3u] = vec2<i32>(vec2<f32>(v, -v)).y;
}
