// Statements and declarations: loop/continuing/break if, for with continue, while, switch with
// several selectors and a combined default, function pointers (ptr<function>/ptr<private>),
// pointer lets, alias, const/override with @id, const_assert, phony assignment, ++/--, compound
// assignment, and declarations used before they are declared. The host mirrors compute().

alias Vec = vec4<i32>;

@group(0) @binding(0) var<storage, read_write> out: array<i32>;

@id(7) override BIAS: i32 = 3;
override SCALE = 2 * BIAS;              // an override-expression
const TABLE = array<i32, 5>(1, -2, 3, -4, 5);
const_assert TABLE[2] == 3;

var<private> calls: i32;

fn bump(p: ptr<function, i32>, by: i32) {
  *p += by;
  calls++;
}

fn fill(v: ptr<function, Vec>, x: i32) -> i32 {
  (*v).x = x;
  v.y = x * 2;          // pointer member access without an explicit '*'
  (*v)[2] = -x;
  return dot(*v, Vec(1, 1, 1, 1));
}

fn classify(x: i32) -> i32 {
  switch (x % 7) {
    case 0, 1: { return 10; }
    case 2: { return 20; }
    case 3, default: { return 30 + helper_late(x); }
    case -1, -2 { return -40; }
  }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = i32(gid.x);
  out[gid.x] = compute(i);
}

fn compute(i: i32) -> i32 {
  var acc = 0;
  // loop with continuing and break if
  var j = 0;
  loop {
    if (j == 2) {
      j++;
      continue;
    }
    acc += j * TABLE[u32(j) % 5u];
    continuing {
      j++;
      break if j >= (i % 5) + 3;
    }
  }
  // for with continue and a runtime index into a const array
  for (var k = 0; k < 6; k++) {
    if (k % 2 == 1) {
      continue;
    }
    acc += TABLE[k % 5] * (i + 1);
  }
  // while with a decrement
  var w = i;
  while (w > 0) {
    w -= 3;
    acc ^= w;
  }
  // switch, pointers and function calls
  acc += classify(i - 3);
  bump(&acc, BIAS);
  var v = Vec();
  acc += fill(&v, i);
  var arr = array<i32, 4>(1, 2, 3, 4);
  let p = &arr[u32(i) % 4u];
  *p = *p * SCALE;
  acc += arr[0] + arr[1] + arr[2] + arr[3];
  let m = mat2x2<f32>(1.0, 2.0, 3.0, 4.0) * vec2<f32>(f32(i), 1.0);
  acc += i32(m.y);
  _ = helper_late(0);
  var b = i > 4 && i < 12;
  b = b || (i == 20);
  acc += select(0, 100, b) + calls;
  acc <<= 1u;
  acc %= 1000;
  return acc;
}

fn helper_late(x: i32) -> i32 {
  return x * 2;
}
