// Invalid WGSL gives compiler-style diagnostics (file:line:col, the line, a caret) and never
// crashes; a legal module in any declaration order compiles.
#include "tests/wgsl/wgsl_test.h"

namespace bs::testing {
namespace {

// Expects `src` to fail with a diagnostic at line:col containing `what`.
void expect_error(const std::string& src, int line, int col, const std::string& what) {
  std::string d = diagnostics_of(src);
  ASSERT_FALSE(d.empty()) << "expected an error for:\n" << src;
  std::string loc = "bad.wgsl:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  EXPECT_NE(d.find(loc), std::string::npos) << "want " << loc << "\ngot:\n" << d;
  EXPECT_NE(d.find(what), std::string::npos) << "want '" << what << "'\ngot:\n" << d;
}

const char* kHeader = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n";

TEST(WgslDiagnostics, TypeErrors) {
  expect_error("fn f() {\n  let x: u32 = 1.5;\n}", 2, 16, "expected u32, got abstract-float");
  expect_error("fn f() {\n  let a = 1u;\n  let b = 2i;\n  let c = a + b;\n}", 4, 13, "no operator '+' for u32 and i32");
  expect_error("fn f() -> f32 {\n  return 1u;\n}", 2, 10, "expected f32, got u32");
  expect_error("fn f() {\n  if (1) {}\n}", 2, 7, "if condition must be bool");
  expect_error("fn f() {\n  let v = vec3<f32>(1.0, 2.0);\n}", 2, 11, "needs 3 components, got 2");
  expect_error("fn f() {\n  let x = max(1u, 2.5);\n}", 2, 11, "no overload of 'max'");
  expect_error("fn f() {\n  let x = 1;\n  x = 2;\n}", 3, 3, "let values and parameters are immutable");
  expect_error("fn f() -> i32 {\n  let x = 1;\n}", 1, 15, "must end in a return statement");
  expect_error("const x: i32 = 3000000000;", 1, 16, "does not fit in i32");
  expect_error("const x = 1 / 0;", 1, 13, "division by zero");
  expect_error("const x = 1u << 40u;", 1, 17, "shift by 40");
}

TEST(WgslDiagnostics, UnknownIdentifiers) {
  expect_error("fn f() {\n  let x = y + 1;\n}", 2, 11, "unknown identifier 'y'");
  expect_error("fn f() {\n  foo(1);\n}", 2, 3, "unknown function 'foo'");
  expect_error("var<private> v: vec3<flaot>;", 1, 22, "unknown type 'flaot'");
  expect_error("struct S { a: f32 }\nfn f(s: S) -> f32 {\n  return s.b;\n}", 3, 11, "struct 'S' has no member 'b'");
  expect_error("fn f() {\n  let v = vec2<f32>();\n  let w = v.xz;\n}", 3, 12, "invalid swizzle '.xz'");
}

TEST(WgslDiagnostics, MissingEnable) {
  expect_error("var<private> h: f16;", 1, 17, "the f16 type requires 'enable f16;'");
  expect_error("fn f() {\n  let x = 1.5h;\n}", 2, 11, "requires 'enable f16;'");
  expect_error("fn f() -> f32 {\n  return subgroupAdd(1.0);\n}", 2, 10, "requires 'enable subgroups;'");
  expect_error("@compute @workgroup_size(1)\nfn main(@builtin(subgroup_size) n: u32) {}", 2, 33,
               "requires 'enable subgroups;'");
  expect_error("enable f17;", 1, 8, "unsupported extension 'f17'");
}

TEST(WgslDiagnostics, AddressSpacesAndAccessModes) {
  expect_error("@group(0) @binding(0) var<storage> ro: array<f32>;\n"
               "@compute @workgroup_size(1) fn main() {\n  ro[0] = 1.0;\n}",
               3, 3, "cannot assign to 'ro': it is a read-only storage buffer");
  expect_error("struct P { n: u32 }\n@group(0) @binding(0) var<uniform> p: P;\n"
               "@compute @workgroup_size(1) fn main() {\n  p.n = 1u;\n}",
               4, 3, "uniform buffers are read-only");
  expect_error("var<function> x: f32;", 1, 5, "var<function> is only allowed inside functions");
  expect_error("@group(0) @binding(0) var<uniform> u: array<f32>;", 1, 39, "var<uniform> cannot hold array<f32>");
  expect_error("@group(0) @binding(0) var<uniform> u: array<f32, 4>;", 1, 36, "element stride that is a multiple of 16");
  expect_error("@group(0) @binding(0) var<storage, read> c: atomic<u32>;", 1, 42, "atomics in var<storage> need read_write");
  expect_error("var<workgroup> w: f32 = 1.0;", 1, 25, "var<workgroup> cannot have an initializer");
  expect_error("var<private, read> w: f32;", 1, 14, "only be given for var<storage>");
  expect_error("@group(0) var<storage> b: array<f32>;", 1, 24, "needs @group(N) and @binding(M)");
  expect_error("fn f() {\n  var<workgroup> x: f32;\n}", 2, 7, "function address space");
  expect_error("@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>>;\n"
               "@compute @workgroup_size(1) fn main() {\n  a[0] = 1u;\n}",
               3, 3, "use atomicStore");
}

TEST(WgslDiagnostics, ControlFlowAndDeclarations) {
  expect_error("fn f() {\n  break;\n}", 2, 3, "'break' outside a loop or switch");
  expect_error("fn f() {\n  loop {\n    continuing {\n      return;\n    }\n  }\n}", 4, 7, "not allowed in a continuing block");
  expect_error("fn f(x: i32) {\n  switch x {\n    case 1: {}\n  }\n}", 2, 3, "needs a default clause");
  expect_error("fn f(x: i32) {\n  switch x {\n    case 1, 1: {}\n    default: {}\n  }\n}", 3, 13, "duplicate case value 1");
  expect_error("fn f() -> i32 {\n  return g();\n}\nfn g() -> i32 {\n  return f();\n}", 5, 10, "recursion");
  expect_error("const a = b;\nconst b = a;", 2, 11, "dependency cycle");
  expect_error("const a = 1;\nconst a = 2;", 2, 7, "redeclaration of 'a'");
  expect_error("const_assert 1 > 2;", 1, 1, "const_assert failed");
  expect_error("@compute fn main() {}", 1, 13, "needs @workgroup_size");
  expect_error("@compute @workgroup_size(0) fn main() {}", 1, 26, "at least 1");
  expect_error("@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: u32) {}", 1, 69,
               "must be vec3<u32>");
  expect_error("@vertex fn main() {}", 1, 1, "not supported");
  expect_error("fn loop() {}", 1, 4, "'loop' is a keyword");
  expect_error("const __x = 1;", 1, 7, "reserved");
  expect_error("fn f() {\n  discard;\n}", 2, 3, "fragment shaders");
}

TEST(WgslDiagnostics, SyntaxErrorsReportSeveralAndShowTheLine) {
  std::string d = diagnostics_of("fn f() {\n  let x = ;\n  let y = 1 +;\n}\nfn g( {}\n");
  EXPECT_NE(d.find("bad.wgsl:2:11: error: expected an expression, found ';'"), std::string::npos) << d;
  EXPECT_NE(d.find("bad.wgsl:3:14: error:"), std::string::npos) << d;
  EXPECT_NE(d.find("bad.wgsl:5:7: error:"), std::string::npos) << d;
  // The source line and a caret under the column.
  EXPECT_NE(d.find("\n    let x = ;\n            ^\n"), std::string::npos) << d;
  expect_error("fn f() {\n  let x = a < b < c;\n}", 2, 17, "comparisons do not chain");
  expect_error("fn f() {\n  let x = 1 & 2 | 3;\n}", 2, 17, "needs parentheses");
  expect_error("/* never closed", 1, 1, "unterminated block comment");
  expect_error("fn f() { let x = 1$; }", 1, 19, "unexpected character '$'");
}

TEST(WgslDiagnostics, OutOfOrderModuleIsLegal) {
  // Uses come before declarations at module scope: functions, structs, consts, overrides, aliases.
  std::string src = std::string(kHeader) + R"(
    @compute @workgroup_size(N)
    fn main(@builtin(global_invocation_id) g: vec3u) { out[g.x] = helper(S(K, 2.0)); }
    fn helper(s: S) -> F { return s.a * s.b + f32(N); }
    struct S { a: F, b: f32 }
    alias F = f32;
    const K: F = 1.5;
    override N: u32 = M * 2u;
    const M = 16u;
  )";
  EXPECT_EQ(diagnostics_of(src), "");
  wgsl::CompileOptions opt;
  auto s = wgsl::compile_wgsl(src, "t.wgsl", opt);
  EXPECT_EQ(s.workgroup_size[0], 32u);
}

TEST(WgslDiagnostics, GarbageNeverCrashes) {
  for (const char* src : {"", "}", "fn", "fn f(", "struct", "@", "var<", "a<b<c<d", "@compute @workgroup_size(",
                          "fn f() { loop { continuing { break if; } } }", "const x = array<f32, 4294967296>();",
                          "fn f() { let p = &&x; }", "\xff\xfe\x00", "alias a = ptr<function>;"}) {
    std::string d = diagnostics_of(src);
    if (std::string(src).empty()) continue;  // an empty module is valid
    EXPECT_NE(d.find("error:"), std::string::npos) << src;
  }
}

}  // namespace
}  // namespace bs::testing
