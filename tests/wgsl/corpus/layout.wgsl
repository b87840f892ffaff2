// WGSL memory layout: vec3 aligns to 16, f16 has size 2, @size/@align move members, a struct's size
// rounds up to its alignment. The kernel copies each field of src[i] into a flat f32 array (so the
// host can check what was read from which offset) and writes dst[i] field by field (so the host can
// check where each field lands).
enable f16;

struct Inner {
  a: f16,
  @align(8) b: vec3<f16>,
}

struct Tricky {
  x: f32,                     // offset 0
  v: vec3<f32>,               // 16
  h: f16,                     // 28
  @size(10) h2: f16,          // 30, next free 40
  @align(16) y: u32,          // 48
  inner: Inner,               // 56 (align 8, size 16)
  arr: array<vec3<f32>, 2>,   // 80 (stride 16)
  m: mat2x2<f32>,             // 112 (align 8, size 16)
  last: f16,                  // 128; struct size 144 (align 16)
}

// For a uniform: @size/@align make padding; blueshift pads with scalar members so std140 still fits.
struct UniformTricky {
  x: f32,                     // 0
  v: vec3<f32>,               // 16
  @size(12) h: f32,           // 28, next free 40
  @align(16) y: u32,          // 48
  last: f32,                  // 52; size 64
}

struct Std140Ok {
  n: u32,
  scale: f32,
  offs: vec2<f32>,
  dir: vec4<f32>,
}

@group(0) @binding(0) var<storage, read> src: array<Tricky>;
@group(0) @binding(1) var<storage, read_write> dst: array<Tricky>;
@group(0) @binding(2) var<storage, read_write> flat: array<f32>;
@group(0) @binding(3) var<uniform> u: UniformTricky;
@group(0) @binding(4) var<uniform> u2: Std140Ok;    // std140-shaped

const_assert 144 == 144;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  let t = src[i];
  var o = i * 24u;
  flat[o] = t.x;
  flat[o + 1u] = t.v.x; flat[o + 2u] = t.v.y; flat[o + 3u] = t.v.z;
  flat[o + 4u] = f32(t.h);
  flat[o + 5u] = f32(t.h2);
  flat[o + 6u] = f32(t.y);
  flat[o + 7u] = f32(t.inner.a);
  flat[o + 8u] = f32(t.inner.b.x); flat[o + 9u] = f32(t.inner.b.y); flat[o + 10u] = f32(t.inner.b.z);
  flat[o + 11u] = t.arr[0].x; flat[o + 12u] = t.arr[1].z;
  flat[o + 13u] = t.m[0][0]; flat[o + 14u] = t.m[0][1]; flat[o + 15u] = t.m[1][0]; flat[o + 16u] = t.m[1][1];
  flat[o + 17u] = f32(t.last);
  flat[o + 18u] = u.v.y + u.h + f32(u.y) + u.last;
  flat[o + 19u] = f32(u2.n) + u2.scale + u2.offs.y + u2.dir.w;
  // Write a modified copy, partly whole-struct and partly per member.
  var c = t;
  c.x = t.x + 1.0;
  c.inner.b = t.inner.b * 2.0h;
  dst[i] = c;
  dst[i].y = t.y + 1u;
  dst[i].last = t.last + 1.0h;
}
