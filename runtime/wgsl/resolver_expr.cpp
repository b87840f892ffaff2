// Expressions: literals, identifiers, indexing, member access and swizzles, unary and binary
// operators (with abstract-numeric concretization and constant folding), pointers.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

namespace {

const Type* replace_scalar(TypeTable& T, const Type* t, const Type* s) {
  if (is_scalar(t)) return s;
  if (t->kind == TypeKind::vec) return T.vec(t->n, s);
  if (t->kind == TypeKind::mat) return T.mat(t->n, t->rows, s);
  return t;
}

int swizzle_index(char c) {
  switch (c) {
    case 'x': case 'r': return 0;
    case 'y': case 'g': return 1;
    case 'z': case 'b': return 2;
    case 'w': case 'a': return 3;
    default: return -1;
  }
}

}  // namespace

const Type* Resolver::value_of(Expr* e) {
  expr(e);
  return unref(e->type);
}

void Resolver::expr(Expr* e) {
  switch (e->kind) {
    case ExprKind::literal: {
      e->stage = Stage::constant;
      Value v;
      if (e->lit == 3) {
        v.type = T.bool_t();
        v.i = e->name == "true";
      } else if (e->lit == 1) {
        std::string text = e->name;
        const Type* t = T.abstract_int();
        if (text.back() == 'i') t = T.i32(), text.pop_back();
        else if (text.back() == 'u') t = T.u32(), text.pop_back();
        bool hex = text.size() > 1 && (text[1] == 'x' || text[1] == 'X');
        if (!hex && text.size() > 1 && text[0] == '0') fail(e->loc, fmt::format("integer literal '{}' has a leading zero", e->name));
        errno = 0;
        unsigned long long x = std::strtoull(text.c_str(), nullptr, hex ? 16 : 10);
        uint64_t max = t == T.i32() ? INT32_MAX : t == T.u32() ? UINT32_MAX : INT64_MAX;
        if (errno == ERANGE || x > max) fail(e->loc, fmt::format("integer literal '{}' does not fit in {}", e->name, type_name(t)));
        v.type = t;
        v.i = int64_t(x);
      } else {
        std::string text = e->name;
        bool hex = text.size() > 1 && (text[1] == 'x' || text[1] == 'X');
        const Type* t = T.abstract_float();
        bool has_exp = text.find_first_of(hex ? "pP" : "eE") != std::string::npos;
        // 'f' is a hex digit: in a hex float the suffix only follows the exponent.
        if ((!hex || has_exp) && (text.back() == 'f' || text.back() == 'h')) {
          if (text.back() == 'h') {
            require_enable(e->loc, "f16", "an f16 literal");
            t = T.f16();
          } else {
            t = T.f32();
          }
          text.pop_back();
        }
        errno = 0;
        double x = std::strtod(text.c_str(), nullptr);
        v.type = T.abstract_float();
        v.f = x;
        e->type = t;
        if (!std::isfinite(x) || errno == ERANGE) {
          if (std::isinf(x) || !std::isfinite(x)) fail(e->loc, fmt::format("float literal '{}' is out of range", e->name));
        }
        e->value = v;
        e->type = T.abstract_float();
        if (t != T.abstract_float()) materialize(e, t);
        return;
      }
      e->type = v.type;
      e->value = v;
      return;
    }
    case ExprKind::ident: {
      Decl* d = lookup(e->name, e->loc);
      if (!d) {
        if (type_from_ident(e) || e->name == "array" || e->name == "vec2" || e->name == "vec3" || e->name == "vec4")
          fail(e->loc, fmt::format("'{}' is a type, not a value; construct one with '{}(...)'", e->name, e->name));
        if (builtin_id(e->name) >= 0) fail(e->loc, fmt::format("builtin function '{}' must be called", e->name));
        fail(e->loc, fmt::format("unknown identifier '{}'", e->name));
      }
      if (!e->tmpl.empty()) fail(e->loc, fmt::format("'{}' takes no template arguments", e->name));
      e->decl = d;
      switch (d->kind) {
        case DeclKind::var:
          e->type = T.ref(d->space, d->type, d->access);
          e->stage = Stage::runtime;
          break;
        case DeclKind::const_:
          e->type = d->type;
          e->value = d->value;
          e->stage = Stage::constant;
          break;
        case DeclKind::override_:
          e->type = d->type;
          e->value = d->value;
          e->stage = Stage::override_;
          break;
        case DeclKind::let: case DeclKind::param:
          e->type = d->type;
          e->stage = Stage::runtime;
          break;
        case DeclKind::struct_: case DeclKind::alias:
          fail(e->loc, fmt::format("'{}' is a type, not a value; construct one with '{}(...)'", e->name, e->name));
        case DeclKind::fn:
          fail(e->loc, fmt::format("function '{}' must be called", e->name));
        default:
          fail(e->loc, fmt::format("'{}' cannot be used here", e->name));
      }
      return;
    }
    case ExprKind::call:
      resolve_call(e);
      return;
    case ExprKind::index: {
      Expr* base = e->args[0];
      Expr* idx = e->args[1];
      expr(base);
      const Type* bt = base->type;
      bool view = bt->kind == TypeKind::ref || bt->kind == TypeKind::ptr;
      const Type* st = view ? bt->elem : bt;
      const Type* it = value_of(idx);
      if (!is_integer_scalar(it)) fail(idx->loc, fmt::format("an index must be i32 or u32, not {}", type_name(it)));
      if (it->kind == TypeKind::abstract_int) materialize(idx, T.i32());
      const Type* et = nullptr;
      if (st->kind == TypeKind::array) et = st->elem;
      else if (st->kind == TypeKind::vec) et = st->elem;
      else if (st->kind == TypeKind::mat) et = T.vec(st->rows, st->elem);
      else fail(e->loc, fmt::format("cannot index a value of type {}", type_name(st)));
      uint32_t n = st->n;
      if (idx->value && (idx->value->i < 0 || (n > 0 && idx->value->i >= int64_t(n))))
        fail(idx->loc, fmt::format("index {} is out of bounds for {}", idx->value->i, type_name(st)));
      if (!view && is_abstract(st) && !idx->value) {
        concretize_expr(base);
        return expr(e);
      }
      e->type = view ? T.ref(bt->space, et, bt->access) : et;
      e->stage = view ? Stage::runtime : combine({base->stage, idx->stage});
      if (!view && base->value && idx->value) e->value = base->value->elems[size_t(idx->value->i)];
      return;
    }
    case ExprKind::member:
      e->type = member_access(e);
      return;
    case ExprKind::unary: {
      Expr* x = e->args[0];
      const std::string& op = e->name;
      if (op == "&") {
        expr(x);
        if (x->type->kind != TypeKind::ref) fail(e->loc, "'&' needs a variable or a part of one");
        if (x->kind == ExprKind::member && !x->swizzle.empty()) fail(e->loc, "cannot take the address of a vector component");
        e->type = T.ptr(x->type->space, x->type->elem, x->type->access);
        return;
      }
      if (op == "*") {
        expr(x);
        if (x->type->kind != TypeKind::ptr) fail(e->loc, fmt::format("'*' needs a pointer, not {}", type_name(unref(x->type))));
        e->type = T.ref(x->type->space, x->type->elem, x->type->access);
        return;
      }
      const Type* t = value_of(x);
      const Type* s = scalar_of(t);
      bool ok = op == "!" ? s == T.bool_t() && t->kind != TypeKind::mat
              : op == "~" ? is_integer_scalar(s) && t->kind != TypeKind::mat
                          : is_signed_scalar(s);
      if (!ok) fail(e->loc, fmt::format("operator '{}' does not apply to {}", op, type_name(t)));
      e->type = t;
      e->stage = x->stage;
      if (x->value) fold(e, [&] { return eval_unary(T, op, *x->value, t); });
      return;
    }
    case ExprKind::binary:
      resolve_binary(e);
      return;
  }
}

const Type* Resolver::member_access(Expr* e) {
  Expr* base = e->args[0];
  expr(base);
  const Type* bt = base->type;
  bool view = bt->kind == TypeKind::ref || bt->kind == TypeKind::ptr;
  const Type* st = view ? bt->elem : bt;
  e->stage = view ? Stage::runtime : base->stage;
  if (st->kind == TypeKind::struct_) {
    const Decl* s = st->decl;
    for (size_t i = 0; i < s->members.size(); ++i) {
      if (s->members[i].name != e->name) continue;
      e->member_index = int(i);
      const Type* mt = s->members[i].type;
      if (!view && base->value) e->value = base->value->elems[i];
      return view ? T.ref(bt->space, mt, bt->access) : mt;
    }
    fail(e->loc, fmt::format("struct '{}' has no member '{}'", s->name, e->name));
  }
  if (st->kind == TypeKind::vec) {
    const std::string& n = e->name;
    if (n.empty() || n.size() > 4) fail(e->loc, fmt::format("invalid swizzle '.{}'", n));
    bool xyzw = std::string("xyzw").find(n[0]) != std::string::npos;
    e->swizzle.clear();  // a compound assignment resolves its left-hand side twice (as `lhs op rhs` too)
    for (char c : n) {
      int k = swizzle_index(c);
      bool same_set = (std::string("xyzw").find(c) != std::string::npos) == xyzw;
      if (k < 0 || !same_set || uint32_t(k) >= st->n)
        fail(e->loc, fmt::format("invalid swizzle '.{}' for {}", n, type_name(st)));
      e->swizzle.push_back(k);
    }
    if (n.size() == 1) {
      if (!view && base->value) e->value = base->value->elems[size_t(e->swizzle[0])];
      return view ? T.ref(bt->space, st->elem, bt->access) : st->elem;
    }
    const Type* rt = T.vec(uint32_t(n.size()), st->elem);
    if (base->value && !view) {
      Value v;
      v.type = rt;
      for (int k : e->swizzle) v.elems.push_back(base->value->elems[size_t(k)]);
      e->value = v;
    }
    return rt;  // a multi-component swizzle is a value, never a memory view
  }
  fail(e->loc, fmt::format("{} has no member '{}'", type_name(st), e->name));
}

void Resolver::resolve_binary(Expr* e) {
  Expr* l = e->args[0];
  Expr* r = e->args[1];
  const std::string& op = e->name;
  const Type* lt = value_of(l);
  const Type* rt = value_of(r);
  auto bad = [&]() -> void {
    fail(e->loc, fmt::format("no operator '{}' for {} and {}", op, type_name(lt), type_name(rt)));
  };
  e->stage = combine({l->stage, r->stage});
  const Type* result = nullptr;
  if (op == "&&" || op == "||") {
    if (lt != T.bool_t() || rt != T.bool_t()) bad();
    result = T.bool_t();
  } else if (op == "<<" || op == ">>") {
    const Type* ls = scalar_of(lt);
    if (!is_integer_scalar(ls) || lt->kind == TypeKind::mat || width_of(lt) != width_of(rt) || !is_integer_scalar(scalar_of(rt)))
      bad();
    materialize(r, replace_scalar(T, rt, T.u32()));
    if (ls->kind == TypeKind::abstract_int && !r->value) concretize_expr(l);
    result = unref(l->type);
    if (r->value && !is_abstract(result)) {
      // A constant shift count must be below the bit width even when the shifted value is not constant.
      const Value& rv = *r->value;
      auto check = [&](int64_t c) {
        if (c >= 32) fail(r->loc, fmt::format("shift by {} is not less than the bit width of {}", c, type_name(result)));
      };
      if (rv.elems.empty()) check(rv.i);
      for (const Value& c : rv.elems) check(c.i);
    }
  } else {
    bool cmp = op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
    const Type* ls = scalar_of(lt);
    const Type* rs = scalar_of(rt);
    if (!ls || !rs) bad();
    const Type* cs = common_type({ls, rs});
    if (!cs) bad();
    bool lmat = lt->kind == TypeKind::mat, rmat = rt->kind == TypeKind::mat;
    if (lmat || rmat) {
      if (!is_float_scalar(cs) || cmp) bad();
      const Type* l2 = replace_scalar(T, lt, cs);
      const Type* r2 = replace_scalar(T, rt, cs);
      if (op == "+" || op == "-") {
        if (l2 != r2) bad();
        result = l2;
      } else if (op == "*") {
        if (lmat && rmat) {
          if (l2->n != r2->rows) bad();
          result = T.mat(r2->n, l2->rows, cs);
        } else if (lmat && rt->kind == TypeKind::vec) {
          if (l2->n != r2->n) bad();
          result = T.vec(l2->rows, cs);
        } else if (rmat && lt->kind == TypeKind::vec) {
          if (l2->n != r2->rows) bad();
          result = T.vec(r2->n, cs);
        } else {
          result = lmat ? l2 : r2;  // scalar * matrix
        }
      } else {
        bad();
      }
      materialize(l, l2);
      materialize(r, r2);
    } else {
      uint32_t lw = width_of(lt), rw = width_of(rt);
      if (!lw || !rw) bad();
      bool arith = op == "+" || op == "-" || op == "*" || op == "/" || op == "%";
      bool bits = op == "&" || op == "|" || op == "^";
      if (lw != rw && !(arith && (lw == 1 || rw == 1))) bad();
      if (arith && !is_numeric_scalar(cs)) bad();
      if (bits && !(cs == T.bool_t() || is_integer_scalar(cs))) bad();
      if ((op == "<" || op == "<=" || op == ">" || op == ">=") && !is_numeric_scalar(cs)) bad();
      materialize(l, replace_scalar(T, lt, cs));
      materialize(r, replace_scalar(T, rt, cs));
      uint32_t w = std::max(lw, rw);
      const Type* vs = cmp ? T.bool_t() : cs;
      result = w == 1 ? vs : T.vec(w, vs);
    }
  }
  e->type = result;
  if (l->value && r->value) {
    try {
      e->value = eval_binary(T, op, *l->value, *r->value, result);
    } catch (const ConstError& err) {
      // What blueshift cannot fold (matrix products) stays a run-time expression when concrete.
      if (!err.unsupported || is_abstract(result)) fail(e->loc, err.message);
      e->stage = Stage::runtime;
    }
  }
}

}  // namespace bs::wgsl
