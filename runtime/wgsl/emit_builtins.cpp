// Builtin function calls in GLSL: most map to a GLSL builtin of another name; the rest are small
// expressions, helpers, or statements hoisted in front of the current statement (barriers,
// workgroupUniformLoad, atomicCompareExchangeWeak).
#include <fmt/format.h>

#include "runtime/wgsl/emit_impl.h"

namespace bs::wgsl {

namespace {
const char* direct_name(BuiltinFn f) {
  using B = BuiltinFn;
  switch (f) {
    case B::abs: return "abs"; case B::acos: return "acos"; case B::acosh: return "acosh"; case B::asin: return "asin";
    case B::asinh: return "asinh"; case B::atan: return "atan"; case B::atanh: return "atanh"; case B::atan2: return "atan";
    case B::ceil: return "ceil"; case B::clamp: return "clamp"; case B::cos: return "cos"; case B::cosh: return "cosh";
    case B::cross: return "cross"; case B::degrees: return "degrees"; case B::determinant: return "determinant";
    case B::distance: return "distance"; case B::dot: return "dot"; case B::exp: return "exp"; case B::exp2: return "exp2";
    case B::faceForward: return "faceforward"; case B::floor: return "floor"; case B::fma: return "fma";
    case B::fract: return "fract"; case B::inverseSqrt: return "inversesqrt"; case B::ldexp: return "ldexp";
    case B::length: return "length"; case B::log: return "log"; case B::log2: return "log2"; case B::max: return "max";
    case B::min: return "min"; case B::mix: return "mix"; case B::normalize: return "normalize"; case B::pow: return "pow";
    case B::radians: return "radians"; case B::reflect: return "reflect"; case B::refract: return "refract";
    case B::round: return "roundEven"; case B::sign: return "sign"; case B::sin: return "sin"; case B::sinh: return "sinh";
    case B::smoothstep: return "smoothstep"; case B::sqrt: return "sqrt"; case B::step: return "step"; case B::tan: return "tan";
    case B::tanh: return "tanh"; case B::transpose: return "transpose"; case B::trunc: return "trunc";
    case B::reverseBits: return "bitfieldReverse";
    case B::pack2x16float: return "packHalf2x16"; case B::unpack4x8snorm: return "unpackSnorm4x8";
    case B::unpack4x8unorm: return "unpackUnorm4x8"; case B::unpack2x16snorm: return "unpackSnorm2x16";
    case B::unpack2x16unorm: return "unpackUnorm2x16"; case B::unpack2x16float: return "unpackHalf2x16";
    default: return nullptr;
  }
}
}  // namespace

std::string Emitter::builtin(const Expr* e) {
  using B = BuiltinFn;
  B f = B(e->builtin);
  const Type* t = unref(e->type);
  std::vector<std::string> a;
  auto arg_type = [&](size_t i) { return unref(e->args[i]->type); };
  bool pointer_first = is_atomic_builtin(f) || f == B::arrayLength || f == B::workgroupUniformLoad;
  for (size_t i = 0; i < e->args.size(); ++i) a.push_back(i == 0 && pointer_first ? lvalue(e->args[0]) : expr(e->args[i]));
  auto join = [&](const char* name) {
    std::string out = std::string(name) + "(";
    for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + a[i];
    return out + ")";
  };
  if (is_subgroup_builtin(f)) {
    features_.subgroups = true;
    if (scalar_of(t) && scalar_of(t)->kind == TypeKind::f16) features_.subgroup_f16 = true;
  }
  if (f == B::dot && is_integer_scalar(scalar_of(t)))
    return fmt::format("{}({}, {})", helper("dot", arg_type(0)), a[0], a[1]);
  if (const char* n = direct_name(f)) return join(n);
  switch (f) {
    case B::saturate: return fmt::format("clamp({}, {}, {})", a[0], zero(t), literal(Value{T.abstract_float(), 0, 1.0, {}}, scalar_of(t)));
    case B::quantizeToF16: return fmt::format("{}({})", helper("quantize_f16", t), a[0]);
    case B::all: case B::any:
      if (arg_type(0)->kind != TypeKind::vec) return a[0];
      return join(f == B::all ? "all" : "any");
    case B::select:
      if (arg_type(2)->kind == TypeKind::vec) return fmt::format("mix({}, {}, {})", a[0], a[1], a[2]);
      return fmt::format("({} ? {} : {})", a[2], a[1], a[0]);
    case B::countOneBits: case B::firstLeadingBit: case B::firstTrailingBit: {
      // GLSL returns int (or ivecN) here even for unsigned arguments.
      const char* n = f == B::countOneBits ? "bitCount" : f == B::firstLeadingBit ? "findMSB" : "findLSB";
      std::string call = fmt::format("{}({})", n, a[0]);
      return scalar_of(t)->kind == TypeKind::u32 ? fmt::format("{}({})", type_str(t), call) : call;
    }
    case B::countLeadingZeros: return fmt::format("{}({})", helper("clz", t), a[0]);
    case B::countTrailingZeros: return fmt::format("{}({})", helper("ctz", t), a[0]);
    case B::extractBits: return fmt::format("{}({}, {}, {})", helper("extract_bits", t), a[0], a[1], a[2]);
    case B::insertBits: return fmt::format("{}({}, {}, {}, {})", helper("insert_bits", t), a[0], a[1], a[2], a[3]);
    case B::dot4U8Packed: return fmt::format("{}({}, {})", helper("dot4u8", T.u32()), a[0], a[1]);
    case B::dot4I8Packed: return fmt::format("{}({}, {})", helper("dot4i8", T.u32()), a[0], a[1]);
    case B::pack4x8snorm: case B::pack4x8unorm: case B::pack2x16snorm: case B::pack2x16unorm:
    case B::pack4xI8: case B::pack4xU8: case B::pack4xI8Clamp: case B::pack4xU8Clamp: case B::unpack4xI8:
    case B::unpack4xU8:
      return fmt::format("{}({})", helper(std::string(builtin_name(f)), T.u32()), a[0]);
    case B::bitcast: {
      const Type* from = arg_type(0);
      const Type* fs = scalar_of(from);
      const Type* ts = scalar_of(t);
      if (from == t) return a[0];
      std::string tt = type_str(t);
      bool f_f32 = fs->kind == TypeKind::f32, t_f32 = ts->kind == TypeKind::f32;
      if (fs->kind != TypeKind::f16 && ts->kind != TypeKind::f16) {
        if (f_f32) return fmt::format("{}({})", ts->kind == TypeKind::i32 ? "floatBitsToInt" : "floatBitsToUint", a[0]);
        if (t_f32) return fmt::format("{}({})", fs->kind == TypeKind::i32 ? "intBitsToFloat" : "uintBitsToFloat", a[0]);
        return fmt::format("{}({})", tt, a[0]);  // i32 <-> u32 keeps the bits
      }
      features_.f16 = true;
      // f16 vectors pack two halves per 32-bit word.
      auto word_to_u32 = [&](const std::string& w, const Type* s) {
        if (s->kind == TypeKind::u32) return w;
        return s->kind == TypeKind::i32 ? fmt::format("uint({})", w) : fmt::format("floatBitsToUint({})", w);
      };
      auto u32_to_word = [&](const std::string& u, const Type* s) {
        if (s->kind == TypeKind::u32) return u;
        return s->kind == TypeKind::i32 ? fmt::format("int({})", u) : fmt::format("uintBitsToFloat({})", u);
      };
      if (fs->kind == TypeKind::f16) {  // vec2<f16> -> 32-bit scalar, vec4<f16> -> 2-vector
        if (from->n == 2) return u32_to_word(fmt::format("packFloat2x16({})", a[0]), ts);
        std::string v = temp();
        prelude(fmt::format("{} {} = {};", type_str(from), v, a[0]));
        return fmt::format("{}({}, {})", tt, u32_to_word(fmt::format("packFloat2x16({}.xy)", v), ts),
                           u32_to_word(fmt::format("packFloat2x16({}.zw)", v), ts));
      }
      if (t->n == 2) return fmt::format("unpackFloat2x16({})", word_to_u32(a[0], fs));
      std::string v = temp();
      prelude(fmt::format("{} {} = {};", type_str(from), v, a[0]));
      return fmt::format("f16vec4(unpackFloat2x16({}), unpackFloat2x16({}))", word_to_u32(v + ".x", fs),
                         word_to_u32(v + ".y", fs));
    }
    case B::arrayLength: return fmt::format("uint({}.length())", a[0]);
    case B::atomicLoad: return fmt::format("atomicOr({}, {})", a[0], zero(t));
    case B::atomicStore: return fmt::format("atomicExchange({}, {})", a[0], a[1]);
    case B::atomicAdd: return join("atomicAdd");
    case B::atomicSub:
      return t->kind == TypeKind::u32 ? fmt::format("atomicAdd({}, 0u - ({}))", a[0], a[1])
                                      : fmt::format("atomicAdd({}, -({}))", a[0], a[1]);
    case B::atomicMax: return join("atomicMax");
    case B::atomicMin: return join("atomicMin");
    case B::atomicAnd: return join("atomicAnd");
    case B::atomicOr: return join("atomicOr");
    case B::atomicXor: return join("atomicXor");
    case B::atomicExchange: return join("atomicExchange");
    case B::atomicCompareExchangeWeak: {
      const Type* vt = arg_type(1);
      std::string cmp = temp(), old = temp();
      prelude(fmt::format("{} {} = {};", type_str(vt), cmp, a[1]));
      prelude(fmt::format("{} {} = atomicCompSwap({}, {}, {});", type_str(vt), old, a[0], cmp, a[2]));
      type_str(t);
      return struct_ctor(t->decl, {old, fmt::format("{} == {}", old, cmp)});
    }
    case B::workgroupBarrier: return "barrier()";
    case B::storageBarrier:
      prelude("memoryBarrierBuffer();");
      return "barrier()";
    case B::workgroupUniformLoad: {
      // A barrier, the load, a barrier: every invocation sees the same value.
      std::string v = temp();
      prelude("barrier();");
      prelude(fmt::format("{} = {};", decl_str(t, v), a[0]));
      prelude("barrier();");
      return v;
    }
    case B::subgroupAdd: case B::subgroupExclusiveAdd: case B::subgroupInclusiveAdd: case B::subgroupMul:
    case B::subgroupExclusiveMul: case B::subgroupInclusiveMul: case B::subgroupMin: case B::subgroupMax:
    case B::subgroupAnd: case B::subgroupOr: case B::subgroupXor:
      features_.subgroup_arithmetic = true;
      return join(builtin_name(f).data());
    case B::subgroupShuffle: case B::subgroupShuffleXor: case B::subgroupShuffleUp: case B::subgroupShuffleDown: {
      if (f == B::subgroupShuffle || f == B::subgroupShuffleXor) features_.subgroup_shuffle = true;
      else features_.subgroup_shuffle_relative = true;
      std::string lane = arg_type(1)->kind == TypeKind::u32 ? a[1] : fmt::format("uint({})", a[1]);
      return fmt::format("{}({}, {})", builtin_name(f), a[0], lane);
    }
    case B::subgroupBroadcast: {
      features_.subgroup_ballot = true;
      std::string lane = arg_type(1)->kind == TypeKind::u32 ? a[1] : fmt::format("uint({})", a[1]);
      return fmt::format("subgroupBroadcast({}, {})", a[0], lane);
    }
    case B::subgroupBroadcastFirst: case B::subgroupBallot:
      features_.subgroup_ballot = true;
      return join(builtin_name(f).data());
    case B::subgroupAll: case B::subgroupAny:
      features_.subgroup_vote = true;
      return join(builtin_name(f).data());
    case B::subgroupElect: return "subgroupElect()";
    default:
      d_.error(e->loc, fmt::format("blueshift cannot emit builtin '{}'", builtin_name(f)));
      return "0";
  }
}

}  // namespace bs::wgsl
