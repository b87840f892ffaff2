// Lexer (template lists, comments, literals), resolver (layout, abstract numerics, constant
// evaluation, overrides) and the GLSL the emitter writes for WGSL's own semantics.
#include "runtime/wgsl/ast.h"
#include "runtime/wgsl/token.h"
#include "tests/wgsl/wgsl_test.h"

namespace bs::testing {
namespace {

using wgsl::Tok;

std::vector<wgsl::Token> lex(const std::string& s) {
  wgsl::Diagnostics d(s, "t.wgsl");
  auto t = wgsl::tokenize(s, d);
  EXPECT_FALSE(d.has_errors()) << d.format();
  return t;
}

std::string kinds(const std::string& s) {
  std::string out;
  for (const auto& t : lex(s)) {
    if (t.kind == Tok::tmpl_start) out += "T<";
    else if (t.kind == Tok::tmpl_end) out += ">T";
    else if (t.kind != Tok::eof) out += t.text;
    out += ' ';
  }
  return out;
}

TEST(WgslLexer, TemplateListDisambiguation) {
  EXPECT_EQ(kinds("array<vec4<f32>>"), "array T< vec4 T< f32 >T >T  ");
  EXPECT_EQ(kinds("a < b && c > d"), "a < b && c > d  ");
  EXPECT_EQ(kinds("x = a<b>(c);"), "x = a T< b >T ( c ) ;  ");
  EXPECT_EQ(kinds("a << 2 >= b"), "a << 2 >= b  ");
  EXPECT_EQ(kinds("f(a < b, c > d)"), "f ( a T< b , c >T d )  ");  // WGSL's rule: this is a template list
  EXPECT_EQ(kinds("var<storage, read_write> x"), "var T< storage , read_write >T x  ");
  EXPECT_EQ(kinds("a<b<=c"), "a < b <= c  ");
  EXPECT_EQ(kinds("a>>=1"), "a >>= 1  ");
  EXPECT_EQ(kinds("ptr<function, array<u32, 4>>"), "ptr T< function , array T< u32 , 4 >T >T  ");
}

TEST(WgslLexer, CommentsLiteralsLocations) {
  auto t = lex("/* outer /* nested */ still comment */ x // line\n  0x1Fu 1.5e3f 2h .5 1e-2 0i 7 0x1.8p1");
  ASSERT_GE(t.size(), 9u);
  EXPECT_EQ(t[0].text, "x");
  EXPECT_EQ(t[0].loc.line, 1u);
  EXPECT_EQ(t[0].loc.col, 40u);
  EXPECT_EQ(t[1].text, "0x1Fu");
  EXPECT_EQ(t[1].kind, Tok::int_lit);
  EXPECT_EQ(t[1].loc.line, 2u);
  EXPECT_EQ(t[1].loc.col, 3u);
  EXPECT_EQ(t[2].kind, Tok::float_lit);
  EXPECT_EQ(t[3].text, "2h");
  EXPECT_EQ(t[3].kind, Tok::float_lit);
  EXPECT_EQ(t[4].text, ".5");
  EXPECT_EQ(t[5].text, "1e-2");
  EXPECT_EQ(t[6].kind, Tok::int_lit);
  EXPECT_EQ(t[8].text, "0x1.8p1");
  EXPECT_EQ(t[8].kind, Tok::float_lit);
}

const wgsl::Decl* find(const wgsl::WgslModule& m, const std::string& name) {
  for (const wgsl::Decl* d : m.ast->globals)
    if (d->name == name) return d;
  return nullptr;
}

TEST(WgslResolver, StructLayoutFollowsWgslRules) {
  auto m = wgsl::parse_and_resolve(corpus("layout.wgsl"), "layout.wgsl");
  const wgsl::Decl* t = find(m, "Tricky");
  ASSERT_TRUE(t);
  std::vector<uint32_t> offsets;
  for (const auto& mem : t->members) offsets.push_back(mem.offset);
  EXPECT_EQ(offsets, (std::vector<uint32_t>{0, 16, 28, 30, 48, 56, 80, 112, 128}));
  EXPECT_EQ(t->size, 144u);
  EXPECT_EQ(t->align, 16u);
  const wgsl::Decl* inner = find(m, "Inner");
  EXPECT_EQ(inner->members[1].offset, 8u);
  EXPECT_EQ(inner->size, 16u);
  const wgsl::Decl* u = find(m, "UniformTricky");
  EXPECT_EQ(u->members[3].offset, 48u);
  EXPECT_EQ(u->size, 64u);
}

TEST(WgslResolver, AbstractNumericsAndConstants) {
  auto m = wgsl::parse_and_resolve(R"(
    enable f16;
    const a = 1 + 2.5;            // abstract float
    const b = 1u << 31u;
    const c = vec3(1, 2, 3) * 2;  // abstract int vector
    const d = max(-7, 3) + i32(-3.9) + i32(1e10);
    const e = array(1.5, 2, 3)[1];
    const f = select(10, 20, 3 > 2) % -7;
    override o = 2u * 3u;
    const_assert a == 3.5 && b == 2147483648u && c.z == 6 && f == 6;
    @compute @workgroup_size(1) fn main() { let x = a; var y: f16 = 1; _ = x; _ = y; }
  )",
                                   "t.wgsl");
  (void)m;
}

TEST(WgslResolver, ConstValues) {
  auto m = wgsl::parse_and_resolve("const d = max(-7, 3) + i32(-3.9) + i32(1e10); const e = array(1.5, 2, 3)[1];"
                                   "const g = -2147483647 - 1; const h = 0xffffffffu; const k = 7 % -3;",
                                   "t.wgsl");
  EXPECT_EQ(find(m, "d")->value->i, 3 - 3 + 2147483647);  // float -> i32 saturates
  EXPECT_EQ(find(m, "e")->value->f, 2.0);
  EXPECT_EQ(find(m, "g")->value->i, -2147483648LL);
  EXPECT_EQ(find(m, "h")->value->i, 4294967295LL);
  EXPECT_EQ(find(m, "k")->value->i, 1);  // truncated remainder
}

TEST(WgslEmitter, IntegerDivisionAndShiftsUseHelpers) {
  std::string g = glsl_of(corpus("semantics.wgsl"), "int_ops");
  EXPECT_NE(g.find("int wgsl_div(int a, int b)"), std::string::npos) << g;
  EXPECT_NE(g.find("int wgsl_mod(int a, int b)"), std::string::npos);
  EXPECT_NE(g.find("uint wgsl_div(uint a, uint b)"), std::string::npos);
  EXPECT_NE(g.find("ivec2 wgsl_mod(ivec2 a, ivec2 b)"), std::string::npos);
  EXPECT_EQ(g.substr(g.find("void main()")).find(" % "), std::string::npos) << "no raw %:\n" << g;
  g = glsl_of(corpus("semantics.wgsl"), "shifts");
  EXPECT_NE(g.find("& 31u"), std::string::npos);
  EXPECT_EQ(g.find("wgsl_div"), std::string::npos);  // helpers appear only where used
  g = glsl_of(corpus("semantics.wgsl"), "casts");
  EXPECT_NE(g.find("2147483520.0"), std::string::npos);
  EXPECT_NE(g.find("4294967040.0"), std::string::npos);
  EXPECT_NE(g.find("wgsl_fmod"), std::string::npos);
}

TEST(WgslEmitter, WorkgroupMemoryIsZeroedAndUniformLoadIsFenced) {
  std::string g = glsl_of(corpus("workgroup_zero.wgsl"), "check");
  EXPECT_NE(g.find("gl_LocalInvocationIndex; wgsl_i0 < 300u; wgsl_i0 += 64u"), std::string::npos) << g;
  EXPECT_NE(g.find("if (gl_LocalInvocationIndex == 0u)"), std::string::npos);
  EXPECT_NE(g.find("barrier();"), std::string::npos);
  g = glsl_of(corpus("argmax.wgsl"));
  EXPECT_NE(g.find("barrier();\n  uint wgsl_t"), std::string::npos) << g;
}

TEST(WgslEmitter, ExtensionsOnlyWhenUsed) {
  std::string g = glsl_of(corpus("rope.wgsl"));
  EXPECT_EQ(g.find("float16"), std::string::npos);
  EXPECT_EQ(g.find("subgroup"), std::string::npos);
  g = glsl_of(corpus("gemv_f16_subgroup.wgsl"));
  EXPECT_NE(g.find("GL_EXT_shader_explicit_arithmetic_types_float16"), std::string::npos);
  EXPECT_NE(g.find("GL_EXT_shader_16bit_storage"), std::string::npos);
  EXPECT_NE(g.find("GL_KHR_shader_subgroup_arithmetic"), std::string::npos);
  EXPECT_EQ(g.find("GL_KHR_shader_subgroup_shuffle"), std::string::npos);
}

TEST(WgslEmitter, OverridesAreSubstitutedPerPipeline) {
  std::string g = glsl_of(corpus("rms_norm.wgsl"), "", {{"WG", 256}});
  EXPECT_NE(g.find("local_size_x = 256"), std::string::npos);
  EXPECT_NE(g.find("shared float partial[256]"), std::string::npos) << g;
  g = glsl_of(corpus("gemv_f16_subgroup.wgsl"), "", {{"ROWS", 4}});
  EXPECT_NE(g.find("[64][4]"), std::string::npos) << g;
}

TEST(WgslEmitter, LayoutPaddingAndBlocks) {
  std::string g = glsl_of(corpus("layout.wgsl"));
  EXPECT_NE(g.find("layout(set = 0, binding = 3, std140) uniform"), std::string::npos) << g;
  EXPECT_NE(g.find("layout(set = 0, binding = 0, std430) readonly buffer"), std::string::npos);
  EXPECT_NE(g.find("wgsl_pad"), std::string::npos);
  // A uniform whose layout std140 cannot express falls back to std430 (GL_EXT_scalar_block_layout).
  std::string src = R"(
    struct U { m: mat2x2<f32>, x: f32 }
    @group(0) @binding(0) var<uniform> u: U;
    @group(0) @binding(1) var<storage, read_write> o: f32;
    @compute @workgroup_size(1) fn main() { o = u.m[1][0] + u.x; })";
  wgsl::CompileOptions opt;
  auto s = wgsl::compile_wgsl(src, "t.wgsl", opt);
  EXPECT_TRUE(s.features.uniform_standard_layout);
  EXPECT_NE(s.glsl.find("std430) uniform"), std::string::npos) << s.glsl;
}

TEST(WgslEmitter, NamesThatCollideWithGlslAreMangled) {
  std::string src = R"(
    struct input { sample: f32, gl_x: u32 }
    @group(0) @binding(0) var<storage, read_write> output: array<input>;
    fn texture(double: f32) -> f32 { let main = double * 2.0; let a__b = main; return a__b; }
    @compute @workgroup_size(1) fn main() { let mix = 1.0; output[0].sample = texture(mix); output[0].gl_x = 1u; })";
  wgsl::CompileOptions opt;
  auto s = wgsl::compile_wgsl(src, "t.wgsl", opt);  // compiles through shaderc: no collisions
  EXPECT_NE(s.glsl.find("m_0input"), std::string::npos);
  EXPECT_EQ(s.glsl.find("__"), std::string::npos);
}


// wgpu's native push-constant extension: one std430 push_constant block, read-only, no binding.
TEST(WgslPushConstants, BlockLayoutAndRules) {
  const char* src = R"(
struct P { n: u32, scale: f32, v: vec3f, last: f32 }
var<push_constant> pc: P;
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(1) fn main() { y[pc.n] = pc.scale * pc.v.y + pc.last; }
)";
  wgsl::CompileOptions opt;
  auto s = wgsl::compile_wgsl(src, "pc.wgsl", opt);
  EXPECT_EQ(s.push_constant_bytes, 32u);  // vec3f at offset 16 (align 16), last packed at 28
  EXPECT_NE(s.glsl.find("layout(push_constant, std430) uniform"), std::string::npos) << s.glsl;
  EXPECT_EQ(s.bindings.size(), 1u);
  EXPECT_NE(diagnostics_of("var<push_constant> pc: u32;\n@compute @workgroup_size(1) fn main() { pc = 1u; }")
                .find("push constants are read-only"), std::string::npos);
  EXPECT_NE(diagnostics_of("@group(0) @binding(0) var<push_constant> pc: u32;\n@compute @workgroup_size(1) fn main() { _ = pc; }")
                .find("has no binding"), std::string::npos);
  EXPECT_NE(diagnostics_of("var<push_constant> a: u32;\nvar<push_constant> b: u32;\n"
                           "@compute @workgroup_size(1) fn main() { _ = a + b; }").find("one push-constant block"),
            std::string::npos);
  EXPECT_NE(diagnostics_of("var<push_constant> a: array<u32>;\n@compute @workgroup_size(1) fn main() { _ = a[0]; }")
                .find("fixed-size"), std::string::npos);
}

// A compound assignment resolves its left-hand side twice; a swizzle in its index must stay one swizzle.
TEST(WgslEmitter, CompoundAssignmentWithSwizzledIndex) {
  std::string g = glsl_of(R"(
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_id) wid: vec3u) { y[wid.y * 2u] += 1.0; }
)");
  EXPECT_NE(g.find("wid.y * 2u"), std::string::npos) << g;
  EXPECT_EQ(g.find("wid.yy"), std::string::npos) << g;
}

}  // namespace
}  // namespace bs::testing
