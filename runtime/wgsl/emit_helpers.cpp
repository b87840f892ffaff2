// Helper functions for the WGSL semantics that GLSL lacks, emitted only when a shader uses them,
// and the name mangling that keeps WGSL identifiers clear of GLSL's reserved names.
#include <fmt/format.h>

#include <unordered_set>

#include "runtime/wgsl/emit_impl.h"

namespace bs::wgsl {

namespace {

// GLSL 4.50 keywords, reserved words, types and builtin functions a WGSL name could collide with.
const std::unordered_set<std::string>& reserved() {
  static const std::unordered_set<std::string> k = {
      // keywords and reserved words
      "attribute", "const", "uniform", "varying", "buffer", "shared", "coherent", "volatile", "restrict",
      "readonly", "writeonly", "atomic_uint", "layout", "centroid", "flat", "smooth", "noperspective", "patch",
      "sample", "break", "continue", "do", "for", "while", "switch", "case", "default", "if", "else",
      "subroutine", "in", "out", "inout", "float", "double", "int", "void", "bool", "true", "false",
      "invariant", "precise", "discard", "return", "lowp", "mediump", "highp", "precision", "struct",
      "common", "partition", "active", "asm", "class", "union", "enum", "typedef", "template", "this",
      "resource", "goto", "inline", "noinline", "public", "static", "extern", "external", "interface",
      "long", "short", "half", "fixed", "unsigned", "superp", "input", "output", "filter", "sizeof", "cast",
      "namespace", "using", "main", "uint", "dvec2", "dvec3", "dvec4", "bvec2", "bvec3", "bvec4", "ivec2",
      "ivec3", "ivec4", "uvec2", "uvec3", "uvec4", "vec2", "vec3", "vec4", "mat2", "mat3", "mat4",
      "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4", "mat4x2", "mat4x3", "mat4x4", "hvec2",
      "hvec3", "hvec4", "fvec2", "fvec3", "fvec4", "sampler1D", "sampler2D", "sampler3D", "image1D",
      "image2D", "texture2D", "float16_t", "float32_t", "float64_t", "int8_t", "int16_t", "int32_t",
      "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "f16vec2", "f16vec3", "f16vec4",
      "f16mat2", "f16mat3", "f16mat4", "f16mat2x2", "f16mat2x3", "f16mat2x4", "f16mat3x2", "f16mat3x3",
      "f16mat3x4", "f16mat4x2", "f16mat4x3", "f16mat4x4", "i64vec2", "u64vec2", "demote", "nonuniformEXT",
      // builtin functions
      "radians", "degrees", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
      "acosh", "atanh", "pow", "exp", "log", "exp2", "log2", "sqrt", "inversesqrt", "abs", "sign", "floor",
      "trunc", "round", "roundEven", "ceil", "fract", "mod", "modf", "min", "max", "clamp", "mix", "step",
      "smoothstep", "isnan", "isinf", "floatBitsToInt", "floatBitsToUint", "intBitsToFloat",
      "uintBitsToFloat", "fma", "frexp", "ldexp", "packUnorm2x16", "packSnorm2x16", "packUnorm4x8",
      "packSnorm4x8", "unpackUnorm2x16", "unpackSnorm2x16", "unpackUnorm4x8", "unpackSnorm4x8",
      "packHalf2x16", "unpackHalf2x16", "packDouble2x32", "unpackDouble2x32", "packFloat2x16",
      "unpackFloat2x16", "length", "distance", "dot", "cross", "normalize", "faceforward", "reflect",
      "refract", "matrixCompMult", "outerProduct", "transpose", "determinant", "inverse", "lessThan",
      "lessThanEqual", "greaterThan", "greaterThanEqual", "equal", "notEqual", "any", "all", "not",
      "uaddCarry", "usubBorrow", "umulExtended", "imulExtended", "bitfieldExtract", "bitfieldInsert",
      "bitfieldReverse", "bitCount", "findLSB", "findMSB", "atomicAdd", "atomicMin", "atomicMax",
      "atomicAnd", "atomicOr", "atomicXor", "atomicExchange", "atomicCompSwap", "atomicLoad", "atomicStore",
      "barrier", "memoryBarrier", "memoryBarrierShared", "memoryBarrierBuffer", "memoryBarrierImage",
      "memoryBarrierAtomicCounter", "groupMemoryBarrier", "texture", "textureSize", "texelFetch",
      "imageLoad", "imageStore", "imageSize", "subgroupBarrier", "subgroupElect", "subgroupAll",
      "subgroupAny", "subgroupAllEqual", "subgroupBroadcast", "subgroupBroadcastFirst", "subgroupBallot",
      "subgroupAdd", "subgroupMul", "subgroupMin", "subgroupMax", "subgroupAnd", "subgroupOr",
      "subgroupXor", "subgroupInclusiveAdd", "subgroupExclusiveAdd", "subgroupInclusiveMul",
      "subgroupExclusiveMul", "subgroupShuffle", "subgroupShuffleXor", "subgroupShuffleUp",
      "subgroupShuffleDown", "controlBarrier", "length", "emit", "EmitVertex", "dFdx", "dFdy", "fwidth"};
  return k;
}

std::string glsl_scalar(const Type* t) {
  switch (t->kind) {
    case TypeKind::i32: return "int";
    case TypeKind::u32: return "uint";
    case TypeKind::f16: return "float16_t";
    case TypeKind::bool_: return "bool";
    default: return "float";
  }
}

}  // namespace

bool is_glsl_reserved(const std::string& name) { return reserved().count(name) > 0; }

// Names that could collide get "m_0" + an encoding where '_' becomes "_1" and non-ASCII bytes
// "_2XX": injective, never containing "__" (reserved in GLSL), and disjoint from the names left
// alone (those never start with "m_"). Helper and temporary names start with "wgsl_", which user
// names are therefore mangled away from.
std::string mangle(const std::string& name) {
  bool ascii = true;
  for (unsigned char c : name) ascii = ascii && c < 0x80;
  bool needs = !ascii || is_glsl_reserved(name) || name.rfind("gl_", 0) == 0 || name.rfind("wgsl_", 0) == 0 ||
               name.rfind("m_", 0) == 0 || name.find("__") != std::string::npos || name == "_" ||
               (!name.empty() && name[0] == '_') || (!name.empty() && name.back() == '_');
  if (!needs) return name;
  std::string out = "m_0";
  for (unsigned char c : name) {
    if (c == '_') out += "_1";
    else if (c >= 0x80) out += fmt::format("_2{:02x}", unsigned(c));
    else out += char(c);
  }
  return out;
}

std::string Emitter::helper(const std::string& kind, const Type* t) {
  std::string name = "wgsl_" + kind;
  std::string ty = type_str(t);
  std::string key = kind + ":" + ty;
  if (helper_code_.count(key)) return name;
  const Type* s = scalar_of(t);
  uint32_t w = width_of(t);
  std::string code;
  if (kind == "dot") {
    // GLSL's dot() takes float vectors only; WGSL's takes integer vectors too.
    std::string st = type_str(s), sum;
    for (uint32_t i = 0; i < w; ++i) sum += fmt::format("{}a.{} * b.{}", i ? " + " : "", "xyzw"[i], "xyzw"[i]);
    code = fmt::format("{} wgsl_dot({} a, {} b) {{ return {}; }}\n", st, ty, ty, sum);
  } else if (w > 1 && kind != "fmod") {
    // Component-wise through the scalar helper.
    helper(kind, s);
    static const char* comps = "xyzw";
    bool two = kind == "div" || kind == "mod";
    bool bits = kind == "extract_bits" || kind == "insert_bits";
    std::string params = two ? fmt::format("{} a, {} b", ty, ty)
                       : kind == "extract_bits" ? fmt::format("{} a, uint o, uint c", ty)
                       : kind == "insert_bits" ? fmt::format("{} a, {} b, uint o, uint c", ty, ty)
                                              : fmt::format("{} a", ty);
    std::string body;
    for (uint32_t i = 0; i < w; ++i) {
      std::string c(1, comps[i]);
      std::string call = two ? fmt::format("{}(a.{}, b.{})", name, c, c)
                       : kind == "extract_bits" ? fmt::format("{}(a.{}, o, c)", name, c)
                       : kind == "insert_bits" ? fmt::format("{}(a.{}, b.{}, o, c)", name, c, c)
                                              : fmt::format("{}(a.{})", name, c);
      body += (i ? ", " : "") + call;
    }
    (void)bits;
    std::string rty = ty;
    if (kind == "f2i") rty = "ivec" + std::to_string(w);
    if (kind == "f2u") rty = "uvec" + std::to_string(w);
    code = fmt::format("{} {}({}) {{ return {}({}); }}\n", rty, name, params, rty, body);
  } else if (kind == "div") {
    // WGSL: x / 0 == x, and for i32 INT_MIN / -1 == INT_MIN (no trap, no undefined value).
    code = s->kind == TypeKind::i32
               ? "int wgsl_div(int a, int b) { return (b == 0 || (a == (-2147483647 - 1) && b == -1)) ? a : a / b; }\n"
               : "uint wgsl_div(uint a, uint b) { return b == 0u ? a : a / b; }\n";
  } else if (kind == "mod") {
    // WGSL: x % 0 == 0, INT_MIN % -1 == 0, and the sign follows the dividend (GLSL's % on
    // negative operands is undefined, and glslang lowers it to OpSMod whose sign follows the divisor).
    code = s->kind == TypeKind::i32
               ? "int wgsl_mod(int a, int b) { int d = (b == 0 || (a == (-2147483647 - 1) && b == -1)) ? 1 : b; "
                 "return a - (a / d) * d; }\n"
               : "uint wgsl_mod(uint a, uint b) { return b == 0u ? 0u : a % b; }\n";
  } else if (kind == "fmod") {
    // WGSL's float % truncates (like C's fmod); GLSL's mod() floors.
    code = fmt::format("{} wgsl_fmod({} a, {} b) {{ return a - b * trunc(a / b); }}\n", ty, ty, ty);
  } else if (kind == "f2i" || kind == "f2u") {
    // Bounds: the largest floats inside the integer range; every finite f16 fits in i32.
    bool i = kind == "f2i";
    std::string rt = i ? "int" : "uint";
    if (s->kind == TypeKind::f16)
      code = i ? "int wgsl_f2i(float16_t a) { return int(a); }\n" : "uint wgsl_f2u(float16_t a) { return uint(max(a, float16_t(0))); }\n";
    else if (i)
      code = "int wgsl_f2i(float a) { return a > 2147483520.0 ? 2147483647 : a <= -2147483648.0 ? (-2147483647 - 1) : int(a); }\n";
    else
      code = "uint wgsl_f2u(float a) { return a > 4294967040.0 ? 4294967295u : a <= 0.0 ? 0u : uint(a); }\n";
    (void)rt;
  } else if (kind == "clz") {
    code = s->kind == TypeKind::i32
               ? "int wgsl_clz(int a) { return a == 0 ? 32 : 31 - findMSB(uint(a)); }\n"
               : "uint wgsl_clz(uint a) { return a == 0u ? 32u : uint(31 - findMSB(a)); }\n";
  } else if (kind == "ctz") {
    code = s->kind == TypeKind::i32 ? "int wgsl_ctz(int a) { return a == 0 ? 32 : findLSB(a); }\n"
                                    : "uint wgsl_ctz(uint a) { return a == 0u ? 32u : uint(findLSB(a)); }\n";
  } else if (kind == "extract_bits") {
    // WGSL clamps offset and count to the bit width instead of leaving them undefined.
    code = fmt::format("{0} wgsl_extract_bits({0} a, uint o, uint c) {{ uint o2 = min(o, 32u); uint c2 = min(c, 32u - o2); "
                       "return c2 == 0u ? {0}(0) : bitfieldExtract(a, int(o2), int(c2)); }}\n", ty);
  } else if (kind == "insert_bits") {
    code = fmt::format("{0} wgsl_insert_bits({0} a, {0} b, uint o, uint c) {{ uint o2 = min(o, 32u); uint c2 = min(c, 32u - o2); "
                       "return c2 == 0u ? a : bitfieldInsert(a, b, int(o2), int(c2)); }}\n", ty);
  } else if (kind == "dot4u8") {
    code = "uint wgsl_dot4u8(uint a, uint b) { uvec4 x = (uvec4(a) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu; "
           "uvec4 y = (uvec4(b) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu; return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w; }\n";
  } else if (kind == "dot4i8") {
    code = "int wgsl_dot4i8(uint a, uint b) { ivec4 x = ivec4(bitfieldExtract(int(a), 0, 8), bitfieldExtract(int(a), 8, 8), "
           "bitfieldExtract(int(a), 16, 8), bitfieldExtract(int(a), 24, 8)); ivec4 y = ivec4(bitfieldExtract(int(b), 0, 8), "
           "bitfieldExtract(int(b), 8, 8), bitfieldExtract(int(b), 16, 8), bitfieldExtract(int(b), 24, 8)); "
           "return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w; }\n";
  } else if (kind == "pack4xI8" || kind == "pack4xI8Clamp") {
    std::string v = kind == "pack4xI8" ? "a" : "clamp(a, ivec4(-128), ivec4(127))";
    code = fmt::format("uint wgsl_{}(ivec4 a) {{ uvec4 b = uvec4({}) & 0xffu; return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u); }}\n", kind, v);
  } else if (kind == "pack4xU8" || kind == "pack4xU8Clamp") {
    std::string v = kind == "pack4xU8" ? "a & 0xffu" : "min(a, uvec4(255u))";
    code = fmt::format("uint wgsl_{}(uvec4 a) {{ uvec4 b = {}; return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u); }}\n", kind, v);
  } else if (kind == "pack4x8snorm" || kind == "pack4x8unorm" || kind == "pack2x16snorm" || kind == "pack2x16unorm") {
    // WGSL rounds with floor(0.5 + x); GLSL's packSnorm/packUnorm round halves their own way.
    bool four = kind[4] == '4', snorm = kind.find("snorm") != std::string::npos;
    int bits = four ? 8 : 16;
    std::string scale = four ? (snorm ? "127.0" : "255.0") : (snorm ? "32767.0" : "65535.0");
    std::string vt = four ? "vec4" : "vec2", lo = snorm ? "-1.0" : "0.0";
    std::string conv = snorm ? fmt::format("uvec{}(ivec{}(v)) & {}u", four ? 4 : 2, four ? 4 : 2, (1u << bits) - 1)
                             : fmt::format("uvec{}(v)", four ? 4 : 2);
    std::string combine = four ? "b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u)" : "b.x | (b.y << 16u)";
    code = fmt::format("uint wgsl_{}({} a) {{ {} v = floor(0.5 + {} * clamp(a, {}, 1.0)); uvec{} b = {}; return {}; }}\n", kind, vt,
                       vt, scale, lo, four ? 4 : 2, conv, combine);
  } else if (kind == "unpack4xI8") {
    code = "ivec4 wgsl_unpack4xI8(uint a) { int s = int(a); return ivec4(bitfieldExtract(s, 0, 8), bitfieldExtract(s, 8, 8), "
           "bitfieldExtract(s, 16, 8), bitfieldExtract(s, 24, 8)); }\n";
  } else if (kind == "unpack4xU8") {
    code = "uvec4 wgsl_unpack4xU8(uint a) { return (uvec4(a) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu; }\n";
  } else if (kind == "quantize_f16") {
    code = "float wgsl_quantize_f16(float a) { return unpackHalf2x16(packHalf2x16(vec2(a, 0.0))).x; }\n";
  } else {
    code = fmt::format("// missing helper {}\n", key);
  }
  (void)glsl_scalar;
  helper_code_[key] = code;
  helper_order_.push_back(key);
  return name;
}

}  // namespace bs::wgsl
