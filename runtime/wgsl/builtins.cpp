// Overload resolution for the builtin functions compute kernels use. Each family checks its
// argument types, converts abstract arguments to the chosen overload, sets the result type and
// folds the call when every argument is known and blueshift can evaluate it.
#include "runtime/wgsl/builtins.h"

#include <fmt/format.h>

#include <array>

#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

namespace {
constexpr std::array<std::string_view, size_t(BuiltinFn::count)> kNames = {
#define BS_X(name) #name,
    BS_WGSL_BUILTINS(BS_X)
#undef BS_X
};
}  // namespace

int builtin_id(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return int(i);
  return -1;
}
std::string_view builtin_name(BuiltinFn f) { return kNames[size_t(f)]; }

void Resolver::builtin_call(Expr* e) {
  using B = BuiltinFn;
  B fn = B(e->builtin);
  const std::string& n = e->name;
  auto& args = e->args;
  if (!e->tmpl.empty() && fn != B::bitcast) fail(e->loc, fmt::format("'{}' takes no template arguments", n));
  auto nargs = [&](size_t k) {
    if (args.size() != k) fail(e->loc, fmt::format("'{}' takes {} argument(s), got {}", n, k, args.size()));
  };
  auto bad = [&](const std::string& want) -> void {
    std::string got;
    for (Expr* a : args) got += (got.empty() ? "" : ", ") + type_name(unref(a->type));
    fail(e->loc, fmt::format("no overload of '{}' for ({}): expected {}", n, got, want));
  };
  if (is_subgroup_builtin(fn)) require_enable(e->loc, "subgroups", fmt::format("'{}'", n));

  // Pointer-taking builtins resolve their arguments themselves.
  if (is_atomic_builtin(fn) || fn == B::arrayLength || fn == B::workgroupUniformLoad) {
    if (args.empty()) bad("a pointer argument");
    Expr* p = args[0];
    expr(p);
    const Type* pt = p->type;
    if (pt->kind != TypeKind::ptr) bad(fmt::format("a pointer (&variable) as the first argument"));
    e->stage = Stage::runtime;
    if (fn == B::arrayLength) {
      nargs(1);
      if (pt->space != AddressSpace::storage || pt->elem->kind != TypeKind::array || pt->elem->n != 0)
        bad("ptr<storage, array<T>> (a runtime-sized array)");
      e->type = T.u32();
      return;
    }
    if (fn == B::workgroupUniformLoad) {
      nargs(1);
      if (pt->space != AddressSpace::workgroup || !is_constructible(pt->elem)) bad("ptr<workgroup, T> with a constructible T");
      e->type = pt->elem;
      return;
    }
    const Type* at = pt->elem;
    if (at->kind != TypeKind::atomic) bad("ptr<storage|workgroup, atomic<i32|u32>, read_write>");
    if (pt->access != AccessMode::read_write) fail(p->loc, "atomics need a read_write storage buffer");
    const Type* vt = at->elem;
    size_t want = fn == B::atomicLoad ? 1 : fn == B::atomicCompareExchangeWeak ? 3 : 2;
    nargs(want);
    for (size_t i = 1; i < args.size(); ++i) {
      value_of(args[i]);
      args[i]->type = unref(args[i]->type);
      materialize(args[i], vt);
    }
    if (fn == B::atomicStore) {
      e->type = T.void_t();
    } else if (fn == B::atomicCompareExchangeWeak) {
      // __atomic_compare_exchange_result<T>: { old_value: T, exchanged: bool }
      std::string sname = fmt::format("__atomic_compare_exchange_result_{}", type_name(vt));
      Decl* s = nullptr;
      for (Decl* d : m_.synthesized)
        if (d->name == sname) s = d;
      if (!s) {
        s = m_.new_decl(DeclKind::struct_, e->loc);
        s->name = sname;
        StructMember a, b;
        a.name = "old_value", a.type = vt, a.offset = 0, a.size = 4, a.align = 4;
        b.name = "exchanged", b.type = T.bool_t(), b.offset = 4, b.size = 4, b.align = 4;
        s->members = {a, b};
        s->size = 8, s->align = 4;
        s->state = Decl::State::resolved;
        s->type = T.struct_of(s);
        m_.synthesized.push_back(s);
      }
      e->type = s->type;
    } else {
      e->type = vt;
    }
    return;
  }

  // Everything else takes values.
  std::vector<const Type*> ts;
  Stage stage = Stage::constant;
  for (Expr* a : args) {
    ts.push_back(value_of(a));
    a->type = unref(a->type);
    stage = combine({stage, a->stage});
  }
  e->stage = stage;
  // Unifies args[first..] to one type satisfying `ok`; returns it.
  auto unify = [&](size_t first, size_t count, auto ok, const char* want) -> const Type* {
    std::vector<const Type*> sub(ts.begin() + long(first), ts.begin() + long(first + count));
    const Type* c = common_type(sub);
    if (!c || !ok(c)) bad(want);
    for (size_t i = first; i < first + count; ++i) materialize(args[i], c);
    return c;
  };
  auto float_sv = [](const Type* t) { return (is_float_scalar(t) || (t->kind == TypeKind::vec && is_float_scalar(t->elem))); };
  auto num_sv = [](const Type* t) { return is_numeric_scalar(scalar_of(t)) && t->kind != TypeKind::mat; };
  auto int_sv = [](const Type* t) { return is_integer_scalar(scalar_of(t)) && t->kind != TypeKind::mat; };
  auto fvec = [&](const Type* t) { return t->kind == TypeKind::vec && is_float_scalar(t->elem); };
  auto u32_only = [&](size_t i) {
    materialize(args[i], T.u32());
    if (unref(args[i]->type) != T.u32()) bad("u32");
  };
  const Type* r = nullptr;
  switch (fn) {
    case B::acos: case B::acosh: case B::asin: case B::asinh: case B::atan: case B::atanh: case B::ceil:
    case B::cos: case B::cosh: case B::degrees: case B::exp: case B::exp2: case B::floor: case B::fract:
    case B::inverseSqrt: case B::log: case B::log2: case B::radians: case B::round: case B::saturate:
    case B::sin: case B::sinh: case B::sqrt: case B::tan: case B::tanh: case B::trunc:
      nargs(1);
      r = unify(0, 1, float_sv, "a float scalar or vector");
      break;
    case B::quantizeToF16:
      nargs(1);
      r = unify(0, 1, [&](const Type* t) { return scalar_of(t) == T.f32() && t->kind != TypeKind::mat; }, "f32 or vecN<f32>");
      break;
    case B::abs:
      nargs(1);
      r = unify(0, 1, num_sv, "a numeric scalar or vector");
      break;
    case B::sign:
      nargs(1);
      r = unify(0, 1, [&](const Type* t) { return num_sv(t) && is_signed_scalar(scalar_of(t)); }, "a signed numeric scalar or vector");
      break;
    case B::min: case B::max:
      nargs(2);
      r = unify(0, 2, num_sv, "two numeric scalars or vectors of one type");
      break;
    case B::clamp:
      nargs(3);
      r = unify(0, 3, num_sv, "three numeric scalars or vectors of one type");
      break;
    case B::pow: case B::atan2: case B::step: case B::distance: case B::reflect:
      nargs(2);
      r = unify(0, 2, float_sv, "two float scalars or vectors of one type");
      if (fn == B::distance) r = scalar_of(r);
      if (fn == B::reflect && !fvec(r)) bad("float vectors");
      break;
    case B::fma: case B::smoothstep: case B::faceForward:
      nargs(3);
      r = unify(0, 3, float_sv, "three float scalars or vectors of one type");
      break;
    case B::mix:
      nargs(3);
      if (width_of(ts[2]) == 1 && width_of(ts[0]) > 1) {
        r = unify(0, 2, float_sv, "float vectors");
        materialize(args[2], r->elem);
        if (unref(args[2]->type) != r->elem) bad("a blend factor of the element type");
      } else {
        r = unify(0, 3, float_sv, "three float scalars or vectors of one type");
      }
      break;
    case B::refract:
      nargs(3);
      r = unify(0, 2, fvec, "float vectors");
      materialize(args[2], r->elem);
      break;
    case B::length:
      nargs(1);
      r = scalar_of(unify(0, 1, float_sv, "a float scalar or vector"));
      break;
    case B::normalize:
      nargs(1);
      r = unify(0, 1, fvec, "a float vector");
      break;
    case B::cross:
      nargs(2);
      r = unify(0, 2, [&](const Type* t) { return fvec(t) && t->n == 3; }, "two vec3 of floats");
      break;
    case B::dot:
      nargs(2);
      r = unify(0, 2, [&](const Type* t) { return t->kind == TypeKind::vec && is_numeric_scalar(t->elem); }, "two numeric vectors of one type");
      r = r->elem;
      break;
    case B::determinant:
      nargs(1);
      if (ts[0]->kind != TypeKind::mat || ts[0]->n != ts[0]->rows) bad("a square matrix");
      concretize_expr(args[0]);
      r = unref(args[0]->type)->elem;
      break;
    case B::transpose:
      nargs(1);
      if (ts[0]->kind != TypeKind::mat) bad("a matrix");
      concretize_expr(args[0]);
      r = T.mat(ts[0]->rows, ts[0]->n, unref(args[0]->type)->elem);
      break;
    case B::ldexp:
      nargs(2);
      r = unify(0, 1, float_sv, "a float scalar or vector");
      if (width_of(ts[1]) != width_of(r) || !is_integer_scalar(scalar_of(ts[1]))) bad("(T float, i32 with T's width)");
      materialize(args[1], width_of(r) == 1 ? T.i32() : T.vec(width_of(r), T.i32()));
      break;
    case B::countLeadingZeros: case B::countOneBits: case B::countTrailingZeros: case B::firstLeadingBit:
    case B::firstTrailingBit: case B::reverseBits:
      nargs(1);
      r = unify(0, 1, int_sv, "an i32/u32 scalar or vector");
      break;
    case B::extractBits:
      nargs(3);
      r = unify(0, 1, int_sv, "an i32/u32 scalar or vector");
      u32_only(1);
      u32_only(2);
      break;
    case B::insertBits:
      nargs(4);
      r = unify(0, 2, int_sv, "two i32/u32 scalars or vectors of one type");
      u32_only(2);
      u32_only(3);
      break;
    case B::dot4U8Packed: case B::dot4I8Packed:
      nargs(2);
      u32_only(0);
      u32_only(1);
      r = fn == B::dot4U8Packed ? T.u32() : T.i32();
      break;
    case B::all: case B::any:
      nargs(1);
      if (scalar_of(ts[0]) != T.bool_t() || ts[0]->kind == TypeKind::mat) bad("bool or vecN<bool>");
      r = T.bool_t();
      break;
    case B::select: {
      nargs(3);
      r = unify(0, 2, [&](const Type* t) { return is_scalar(scalar_of(t)) && t->kind != TypeKind::mat; }, "two scalars or vectors of one type");
      const Type* c = ts[2];
      if (c != T.bool_t() && !(c->kind == TypeKind::vec && c->elem == T.bool_t() && c->n == width_of(r)))
        bad("a bool condition (or vecN<bool> matching the operands)");
      break;
    }
    case B::bitcast: {
      nargs(1);
      if (e->tmpl.size() != 1) fail(e->loc, "bitcast needs one template argument: bitcast<T>(x)");
      r = resolve_type(e->tmpl[0]);
      if (is_abstract(ts[0])) concretize_expr(args[0]);
      const Type* from = unref(args[0]->type);
      auto bits = [](const Type* t) -> uint32_t {
        const Type* s = scalar_of(t);
        if (!s || t->kind == TypeKind::mat || s->kind == TypeKind::bool_) return 0;
        return width_of(t) * (s->kind == TypeKind::f16 ? 16 : 32);
      };
      if (!bits(r) || bits(r) != bits(from))
        fail(e->loc, fmt::format("cannot bitcast {} to {}: sizes differ or a type is not numeric", type_name(from), type_name(r)));
      e->stage = Stage::runtime;
      e->type = r;
      return;
    }
    case B::pack4x8snorm: case B::pack4x8unorm:
      nargs(1);
      materialize(args[0], T.vec(4, T.f32()));
      r = T.u32();
      break;
    case B::pack4xI8: case B::pack4xI8Clamp:
      nargs(1);
      materialize(args[0], T.vec(4, T.i32()));
      r = T.u32();
      break;
    case B::pack4xU8: case B::pack4xU8Clamp:
      nargs(1);
      materialize(args[0], T.vec(4, T.u32()));
      r = T.u32();
      break;
    case B::pack2x16snorm: case B::pack2x16unorm: case B::pack2x16float:
      nargs(1);
      materialize(args[0], T.vec(2, T.f32()));
      r = T.u32();
      break;
    case B::unpack4x8snorm: case B::unpack4x8unorm: case B::unpack4xI8: case B::unpack4xU8:
    case B::unpack2x16snorm: case B::unpack2x16unorm: case B::unpack2x16float:
      nargs(1);
      u32_only(0);
      r = fn == B::unpack4xI8 ? T.vec(4, T.i32()) : fn == B::unpack4xU8 ? T.vec(4, T.u32())
        : (fn == B::unpack4x8snorm || fn == B::unpack4x8unorm) ? T.vec(4, T.f32()) : T.vec(2, T.f32());
      break;
    case B::storageBarrier: case B::workgroupBarrier:
      nargs(0);
      e->type = T.void_t();
      e->stage = Stage::runtime;
      return;
    case B::subgroupElect:
      nargs(0);
      r = T.bool_t();
      break;
    case B::subgroupAll: case B::subgroupAny:
      nargs(1);
      if (ts[0] != T.bool_t()) bad("bool");
      r = T.bool_t();
      break;
    case B::subgroupBallot:
      nargs(1);
      if (ts[0] != T.bool_t()) bad("bool");
      r = T.vec(4, T.u32());
      break;
    case B::subgroupAdd: case B::subgroupExclusiveAdd: case B::subgroupInclusiveAdd: case B::subgroupMul:
    case B::subgroupExclusiveMul: case B::subgroupInclusiveMul: case B::subgroupMin: case B::subgroupMax:
    case B::subgroupBroadcastFirst:
      nargs(1);
      concretize_expr(args[0]);
      ts[0] = unref(args[0]->type);
      if (!num_sv(ts[0])) bad("a concrete numeric scalar or vector");
      r = ts[0];
      break;
    case B::subgroupAnd: case B::subgroupOr: case B::subgroupXor:
      nargs(1);
      concretize_expr(args[0]);
      r = unref(args[0]->type);
      if (!int_sv(r)) bad("an i32/u32 scalar or vector");
      break;
    case B::subgroupShuffle: case B::subgroupShuffleXor: case B::subgroupShuffleUp: case B::subgroupShuffleDown:
    case B::subgroupBroadcast: {
      nargs(2);
      concretize_expr(args[0]);
      r = unref(args[0]->type);
      if (!num_sv(r)) bad("a concrete numeric scalar or vector, then a lane index");
      const Type* it = unref(args[1]->type);
      if (!is_integer_scalar(it)) bad("an i32/u32 lane index");
      if (it->kind == TypeKind::abstract_int) materialize(args[1], T.u32());
      if (fn == B::subgroupBroadcast && args[1]->stage != Stage::constant)
        fail(args[1]->loc, "subgroupBroadcast needs a const-expression lane; use subgroupShuffle for a dynamic one");
      break;
    }
    default:
      fail(e->loc, fmt::format("builtin '{}' is not supported in compute shaders", n));
  }
  if (is_subgroup_builtin(fn)) e->stage = Stage::runtime;
  e->type = r;
  bool known = e->stage != Stage::runtime;
  for (Expr* a : args) known = known && a->value.has_value();
  if (known) {
    std::vector<Value> vals;
    for (Expr* a : args) vals.push_back(*a->value);
    Value out;
    bool ok = false;
    try {
      ok = eval_builtin(T, fn, vals, r, &out);
    } catch (const ConstError& err) {
      fail(e->loc, err.message);
    }
    if (ok) {
      e->value = out;
      return;
    }
  }
  if (is_abstract(r)) {
    // Not foldable here: evaluate at run time on the concrete type.
    for (Expr* a : args) concretize_expr(a);
    e->type = concretize(r);
  }
  if (!e->value && e->stage != Stage::runtime) e->stage = Stage::runtime;
}

}  // namespace bs::wgsl
