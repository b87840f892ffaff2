// Expressions in GLSL. Known values are printed as literals (consts, overrides, folded
// expressions); WGSL operators whose GLSL counterpart differs go through helpers.
#include <fmt/format.h>

#include "runtime/wgsl/emit_impl.h"

namespace bs::wgsl {

std::string Emitter::temp() { return fmt::format("wgsl_t{}", temp_counter_++); }

std::string Emitter::lvalue(const Expr* e) {
  switch (e->kind) {
    case ExprKind::ident: {
      const Decl* d = e->decl;
      if (d->kind == DeclKind::let && d->type->kind == TypeKind::ptr) return ptr_alias_.at(d);
      if (d->kind == DeclKind::var && d->module_scope &&
          (d->space == AddressSpace::storage || d->space == AddressSpace::uniform ||
           d->space == AddressSpace::push_constant)) {
        // Resource blocks wrap the variable in member "m" unless the struct was inlined into the block.
        bool inlined = d->type->kind == TypeKind::struct_ && contains_runtime_array(d->type);
        return inlined ? name_of(d) : name_of(d) + ".m";
      }
      return name_of(d);
    }
    case ExprKind::unary:
      return lvalue(e->args[0]);  // '&x' and '*p' both denote the memory itself
    case ExprKind::index:
      return fmt::format("{}[{}]", lvalue(e->args[0]), expr(e->args[1]));
    case ExprKind::member: {
      std::string base = lvalue(e->args[0]);
      if (!e->swizzle.empty()) return base + "." + std::string(1, "xyzw"[e->swizzle[0]]);
      const Type* bt = unref(e->args[0]->type);
      if (bt->kind == TypeKind::ptr) bt = bt->elem;
      return base + "." + mangle(bt->decl->members[size_t(e->member_index)].name);
    }
    default:
      return expr(e);
  }
}

std::string Emitter::convert(const std::string& x, const Type* from, const Type* to) {
  const Type* fs = scalar_of(from);
  const Type* ts = scalar_of(to);
  if (from == to) return x;
  std::string tt = type_str(to);
  if (fs && ts && is_float_scalar(fs) && (ts->kind == TypeKind::i32 || ts->kind == TypeKind::u32)) {
    // WGSL float -> int conversion saturates (to the nearest representable integer); GLSL's is
    // undefined out of range.
    return fmt::format("{}({})", helper(ts->kind == TypeKind::i32 ? "f2i" : "f2u", from), x);
  }
  return fmt::format("{}({})", tt, x);
}

std::string Emitter::expr(const Expr* e) {
  const Type* t = unref(e->type);
  if (e->value && e->stage != Stage::runtime && t->kind != TypeKind::ptr) return literal(*e->value, t);
  switch (e->kind) {
    case ExprKind::literal:
      return literal(*e->value, t);
    case ExprKind::ident: {
      const Decl* d = e->decl;
      if (d->kind == DeclKind::override_ || d->kind == DeclKind::const_) {
        d_.error(e->loc, fmt::format("override '{}' has no value; pass it (--define {}=VALUE)", d->name, d->name));
        return "0";
      }
      return lvalue(e);
    }
    case ExprKind::index: {
      const Expr* base = e->args[0];
      std::string b = base->type->kind == TypeKind::ref || base->type->kind == TypeKind::ptr ? lvalue(base) : expr(base);
      return fmt::format("{}[{}]", b, expr(e->args[1]));
    }
    case ExprKind::member: {
      const Expr* base = e->args[0];
      bool view = base->type->kind == TypeKind::ref || base->type->kind == TypeKind::ptr;
      std::string b = view ? lvalue(base) : expr(base);
      if (!view && base->kind != ExprKind::ident) b = "(" + b + ")";
      if (!e->swizzle.empty()) {
        std::string sw;
        for (int k : e->swizzle) sw += "xyzw"[k];
        return b + "." + sw;
      }
      const Type* bt = unref(base->type);
      if (bt->kind == TypeKind::ptr) bt = bt->elem;
      return b + "." + mangle(bt->decl->members[size_t(e->member_index)].name);
    }
    case ExprKind::unary: {
      const std::string& op = e->name;
      const Expr* x = e->args[0];
      if (op == "&" || op == "*") return lvalue(e);
      std::string v = expr(x);
      if (op == "!" && t->kind == TypeKind::vec) return fmt::format("not({})", v);
      return fmt::format("({}{})", op, v);
    }
    case ExprKind::binary:
      return binary(e);
    case ExprKind::call:
      return call(e);
  }
  return "0";
}

std::string Emitter::binary(const Expr* e) {
  const std::string& op = e->name;
  const Expr* l = e->args[0];
  const Expr* r = e->args[1];
  const Type* lt = unref(l->type);
  const Type* rt = unref(r->type);
  const Type* t = unref(e->type);
  std::string a = expr(l), b = expr(r);
  bool vec = t->kind == TypeKind::vec || lt->kind == TypeKind::vec;
  if (op == "<<" || op == ">>") {
    // WGSL takes the shift count modulo the bit width; GLSL leaves larger counts undefined.
    return fmt::format("({} {} ({} & 31u))", a, op, b);
  }
  static const std::map<std::string, const char*> kVecCmp = {{"==", "equal"}, {"!=", "notEqual"}, {"<", "lessThan"},
                                                           {"<=", "lessThanEqual"}, {">", "greaterThan"},
                                                           {">=", "greaterThanEqual"}};
  auto cmp = kVecCmp.find(op);
  if (cmp != kVecCmp.end()) {
    if (lt->kind == TypeKind::vec) return fmt::format("{}({}, {})", cmp->second, a, b);
    return fmt::format("({} {} {})", a, op, b);
  }
  const Type* s = scalar_of(t);
  if ((op == "&" || op == "|" || op == "^") && s && s->kind == TypeKind::bool_) {
    // GLSL has no bitwise operators on bool; both sides are evaluated, as WGSL requires.
    if (vec) return fmt::format("bvec{}(uvec{}({}) {} uvec{}({}))", t->n, t->n, a, op, t->n, b);
    return fmt::format("bool(uint({}) {} uint({}))", a, op, b);
  }
  if ((op == "/" || op == "%") && s && is_integer_scalar(s)) {
    // Splat a scalar operand so the helper sees two values of the result type.
    if (lt != t) a = fmt::format("{}({})", type_str(t), a);
    if (rt != t) b = fmt::format("{}({})", type_str(t), b);
    return fmt::format("{}({}, {})", helper(op == "/" ? "div" : "mod", t), a, b);
  }
  if (op == "%") {
    if (lt != t) a = fmt::format("{}({})", type_str(t), a);
    if (rt != t) b = fmt::format("{}({})", type_str(t), b);
    return fmt::format("{}({}, {})", helper("fmod", t), a, b);
  }
  return fmt::format("({} {} {})", a, op, b);
}

std::string Emitter::call(const Expr* e) {
  const Type* t = unref(e->type);
  if (e->decl) {
    std::string out = name_of(e->decl) + "(";
    for (size_t i = 0; i < e->args.size(); ++i) {
      const Expr* a = e->args[i];
      out += (i ? ", " : "") + (e->decl->params[i]->type->kind == TypeKind::ptr ? lvalue(a) : expr(a));
    }
    return out + ")";
  }
  if (e->builtin >= 0) return builtin(e);
  // Constructors and conversions.
  if (e->args.empty()) return zero(t);
  if (t->kind == TypeKind::struct_) {
    std::vector<std::string> ms;
    for (const Expr* a : e->args) ms.push_back(expr(a));
    type_str(t);
    return struct_ctor(t->decl, ms);
  }
  if (e->args.size() == 1) {
    const Type* at = unref(e->args[0]->type);
    if (at == t) return expr(e->args[0]);
    if (is_scalar(at) || at->kind == t->kind) return convert(expr(e->args[0]), at, t);
  }
  std::string out = type_str(t) + "(";
  for (size_t i = 0; i < e->args.size(); ++i) out += (i ? ", " : "") + expr(e->args[i]);
  return out + ")";
}

}  // namespace bs::wgsl
