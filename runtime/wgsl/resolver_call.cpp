// Calls: user functions, value constructors and conversions (scalars, vectors, matrices, arrays,
// structs), and the hand-off to builtin functions.
#include <fmt/format.h>

#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

namespace {
// Flattens the scalar components of constant values (for vector/matrix constructors).
void flatten(const Value& v, std::vector<Value>* out) {
  if (v.elems.empty()) {
    out->push_back(v);
    return;
  }
  for (const Value& e : v.elems) flatten(e, out);
}
}  // namespace

void Resolver::resolve_call(Expr* e) {
  const std::string& n = e->name;
  // A user declaration (function, struct, alias) shadows the builtins of the same name.
  bool user = globals_.count(n) > 0;
  for (auto& s : scopes_)
    if (s.count(n)) user = true;
  if (user) {
    Decl* d = lookup(n, e->loc);
    if (d->kind == DeclKind::fn) {
      if (!e->tmpl.empty()) fail(e->loc, "functions take no template arguments");
      if (d->is_entry) fail(e->loc, fmt::format("entry point '{}' cannot be called", n));
      if (e->args.size() != d->params.size())
        fail(e->loc, fmt::format("'{}' takes {} argument(s), got {}", n, d->params.size(), e->args.size()));
      for (size_t i = 0; i < e->args.size(); ++i) {
        Expr* a = e->args[i];
        const Type* pt = d->params[i]->type;
        expr(a);
        if (pt->kind == TypeKind::ptr) {
          if (a->type != pt) fail(a->loc, fmt::format("argument {} of '{}' must be {}, got {}", i + 1, n, type_name(pt), type_name(unref(a->type))));
        } else {
          a->type = unref(a->type);
          materialize(a, pt);
        }
      }
      e->decl = d;
      e->type = d->type;
      e->stage = Stage::runtime;
      return;
    }
    if (d->kind != DeclKind::struct_ && d->kind != DeclKind::alias)
      fail(e->loc, fmt::format("'{}' is not a function", n));
  }
  const Type* t = type_from_ident(e);
  if (!t && n != "array" && !(n.size() == 4 && n.compare(0, 3, "vec") == 0) && !(n.size() == 6 && n.compare(0, 3, "mat") == 0)) {
    int id = builtin_id(n);
    if (id < 0) fail(e->loc, fmt::format("unknown function '{}'", n));
    e->builtin = id;
    builtin_call(e);
    return;
  }
  // A value constructor or conversion. First the arguments.
  std::vector<const Type*> ats;
  Stage stage = Stage::constant;
  for (Expr* a : e->args) {
    ats.push_back(value_of(a));
    a->type = unref(a->type);
    stage = combine({stage, a->stage});
  }
  e->stage = stage;
  auto all_values = [&] {
    for (Expr* a : e->args)
      if (!a->value) return false;
    return true;
  };
  // Element type of vecN(...) / matCxR(...) / array(...) without a template: the arguments decide.
  if (!t) {
    if (e->args.empty()) fail(e->loc, fmt::format("'{}()' needs a template argument to know its type", n));
    std::vector<const Type*> scalars;
    for (const Type* a : ats) {
      if (n == "array") scalars.push_back(a);
      else if (const Type* s = scalar_of(a)) scalars.push_back(s);
      else fail(e->loc, fmt::format("'{}' cannot be built from {}", n, type_name(a)));
    }
    const Type* cs = common_type(scalars);
    if (!cs) fail(e->loc, fmt::format("the arguments of '{}' have no common type", n));
    if (n == "array") {
      if (!is_constructible(cs)) fail(e->loc, fmt::format("arrays of {} cannot be constructed", type_name(cs)));
      t = T.array(cs, uint32_t(e->args.size()));
    } else if (n[0] == 'v') {
      t = T.vec(uint32_t(n[3] - '0'), cs);
    } else {
      if (!is_float_scalar(cs)) fail(e->loc, "matrix elements must be floats");
      t = T.mat(uint32_t(n[3] - '0'), uint32_t(n[5] - '0'), cs);
    }
  }
  e->ctor = t;
  e->type = t;
  if (!is_constructible(t)) fail(e->loc, fmt::format("{} cannot be constructed", type_name(t)));
  size_t na = e->args.size();
  if (na == 0) {
    fold(e, [&] { return zero_value(T, t); });
    e->stage = Stage::constant;
    return;
  }
  if (is_scalar(t)) {
    if (na != 1 || !is_scalar(ats[0])) fail(e->loc, fmt::format("{}(...) converts exactly one scalar", type_name(t)));
    if (convertible(ats[0], t)) materialize(e->args[0], t);
    if (all_values()) fold(e, [&] { return convert_value(T, *e->args[0]->value, t); });
    return;
  }
  if (t->kind == TypeKind::vec || t->kind == TypeKind::mat) {
    const Type* es = t->elem;
    uint32_t comps = t->kind == TypeKind::vec ? t->n : t->n * t->rows;
    // Conversion from the same shape: vec3<f32>(vec3<i32>), mat2x2<f16>(mat2x2<f32>).
    if (na == 1 && ats[0]->kind == t->kind && ats[0]->n == t->n && ats[0]->rows == t->rows) {
      if (convertible(ats[0], t)) materialize(e->args[0], t);
      if (t->kind == TypeKind::mat && !is_float_scalar(scalar_of(ats[0])))
        fail(e->loc, fmt::format("cannot convert {} to {}", type_name(ats[0]), type_name(t)));
      if (all_values()) fold(e, [&] { return convert_value(T, *e->args[0]->value, t); });
      return;
    }
    uint32_t got = 0;
    for (size_t i = 0; i < na; ++i) {
      const Type* a = ats[i];
      if (t->kind == TypeKind::mat && a->kind == TypeKind::vec && a->n != t->rows)
        fail(e->args[i]->loc, fmt::format("matrix columns must be vec{}, got {}", t->rows, type_name(a)));
      if (a->kind == TypeKind::vec) {
        materialize(e->args[i], T.vec(a->n, es));
        got += a->n;
      } else if (is_scalar(a)) {
        materialize(e->args[i], es);
        got += 1;
      } else {
        fail(e->args[i]->loc, fmt::format("{} cannot be built from {}", type_name(t), type_name(a)));
      }
    }
    bool splat_one = na == 1 && got == 1 && t->kind == TypeKind::vec;
    if (!splat_one && got != comps) fail(e->loc, fmt::format("{} needs {} components, got {}", type_name(t), comps, got));
    if (all_values()) {
      fold(e, [&] {
        std::vector<Value> flat;
        for (Expr* a : e->args) flatten(*a->value, &flat);
        if (splat_one) return splat(T, flat[0], t);
        Value v;
        v.type = t;
        if (t->kind == TypeKind::vec) {
          v.elems = flat;
        } else {
          const Type* col = T.vec(t->rows, es);
          for (uint32_t c = 0; c < t->n; ++c) {
            Value cv;
            cv.type = col;
            cv.elems.assign(flat.begin() + c * t->rows, flat.begin() + (c + 1) * t->rows);
            v.elems.push_back(cv);
          }
        }
        return v;
      });
    }
    return;
  }
  // Arrays and structs: one argument per element / member.
  std::vector<const Type*> want;
  if (t->kind == TypeKind::array) want.assign(t->n, t->elem);
  else for (const StructMember& m : t->decl->members) want.push_back(m.type);
  if (na != want.size()) fail(e->loc, fmt::format("{} needs {} values, got {}", type_name(t), want.size(), na));
  for (size_t i = 0; i < na; ++i) materialize(e->args[i], want[i]);
  if (all_values()) {
    Value v;
    v.type = t;
    for (Expr* a : e->args) v.elems.push_back(*a->value);
    e->value = v;
  }
}

}  // namespace bs::wgsl
