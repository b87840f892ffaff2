// Type expressions (vec3<f32>, array<T, N>, ptr<function, T>, the predeclared aliases like vec4f)
// and the conversion rules between abstract and concrete types.
#include <fmt/format.h>

#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

namespace {
// vec3f, vec2i, mat4x4h ... -> (base name, element scalar name)
bool split_shorthand(const std::string& n, std::string* base, char* suffix) {
  if (n.size() == 5 && n.compare(0, 3, "vec") == 0 && n[3] >= '2' && n[3] <= '4' &&
      (n[4] == 'f' || n[4] == 'i' || n[4] == 'u' || n[4] == 'h')) {
    *base = n.substr(0, 4);
    *suffix = n[4];
    return true;
  }
  if (n.size() == 7 && n.compare(0, 3, "mat") == 0 && n[3] >= '2' && n[3] <= '4' && n[4] == 'x' && n[5] >= '2' &&
      n[5] <= '4' && (n[6] == 'f' || n[6] == 'h')) {
    *base = n.substr(0, 6);
    *suffix = n[6];
    return true;
  }
  return false;
}
}  // namespace

const Type* Resolver::resolve_type(Expr* e) {
  if (e->kind != ExprKind::ident) fail(e->loc, "expected a type");
  const Type* t = type_from_ident(e);
  if (!t) fail(e->loc, fmt::format("unknown type '{}'", e->name));
  return t;
}

// The type an identifier (with its template list) names; null when it names no type. Element
// types of vecN/matCxR/array may be left out only in constructor calls, which handle that case.
const Type* Resolver::type_from_ident(Expr* e) {
  const std::string& n = e->name;
  // User declarations shadow the predeclared names.
  bool in_scope = false;
  for (auto& s : scopes_)
    if (s.count(n)) in_scope = true;
  if (in_scope || globals_.count(n)) {
    Decl* d = lookup(n, e->loc);
    if (d->kind == DeclKind::struct_ || d->kind == DeclKind::alias) {
      if (!e->tmpl.empty()) fail(e->loc, fmt::format("'{}' takes no template arguments", n));
      e->is_type = true;
      return d->type;
    }
    fail(e->loc, fmt::format("'{}' is not a type", n));
  }
  auto no_tmpl = [&] {
    if (!e->tmpl.empty()) fail(e->loc, fmt::format("'{}' takes no template arguments", n));
  };
  auto scalar_named = [&](const std::string& s, Loc loc) -> const Type* {
    if (s == "bool") return T.bool_t();
    if (s == "i32") return T.i32();
    if (s == "u32") return T.u32();
    if (s == "f32") return T.f32();
    if (s == "f16") {
      require_enable(loc, "f16", "the f16 type");
      return T.f16();
    }
    return nullptr;
  };
  if (const Type* s = scalar_named(n, e->loc)) {
    no_tmpl();
    e->is_type = true;
    return s;
  }
  std::string base = n;
  char suffix = 0;
  const Type* elem = nullptr;
  if (split_shorthand(n, &base, &suffix)) {
    no_tmpl();
    elem = suffix == 'f' ? T.f32() : suffix == 'i' ? T.i32() : suffix == 'u' ? T.u32() : nullptr;
    if (suffix == 'h') {
      require_enable(e->loc, "f16", fmt::format("'{}'", n));
      elem = T.f16();
    }
  }
  auto tmpl_type = [&](size_t i) {
    if (i >= e->tmpl.size()) fail(e->loc, fmt::format("'{}' needs {} template argument(s)", n, i + 1));
    return resolve_type(e->tmpl[i]);
  };
  if (base.size() == 4 && base.compare(0, 3, "vec") == 0 && base[3] >= '2' && base[3] <= '4') {
    if (!elem) {
      if (e->tmpl.empty()) return nullptr;  // inferred in a constructor
      if (e->tmpl.size() != 1) fail(e->loc, fmt::format("'{}' takes one template argument", n));
      elem = tmpl_type(0);
    }
    if (!is_scalar(elem)) fail(e->loc, fmt::format("vector elements must be scalars, not {}", type_name(elem)));
    e->is_type = true;
    return T.vec(uint32_t(base[3] - '0'), elem);
  }
  if (base.size() == 6 && base.compare(0, 3, "mat") == 0 && base[3] >= '2' && base[3] <= '4' && base[4] == 'x' &&
      base[5] >= '2' && base[5] <= '4') {
    if (!elem) {
      if (e->tmpl.empty()) return nullptr;
      if (e->tmpl.size() != 1) fail(e->loc, fmt::format("'{}' takes one template argument", n));
      elem = tmpl_type(0);
    }
    if (!is_float_scalar(elem)) fail(e->loc, fmt::format("matrix elements must be f32 or f16, not {}", type_name(elem)));
    e->is_type = true;
    return T.mat(uint32_t(base[3] - '0'), uint32_t(base[5] - '0'), elem);
  }
  if (n == "array") {
    if (e->tmpl.empty()) return nullptr;
    if (e->tmpl.size() > 2) fail(e->loc, "array takes an element type and an optional element count");
    const Type* et = tmpl_type(0);
    if (et->kind == TypeKind::array && et->n == 0) fail(e->tmpl[0]->loc, "arrays of runtime-sized arrays are not allowed");
    if (et->kind == TypeKind::ptr || et->kind == TypeKind::void_ || contains_runtime_array(et))
      fail(e->tmpl[0]->loc, fmt::format("arrays cannot hold {}", type_name(et)));
    uint32_t count = 0;
    if (e->tmpl.size() == 2) {
      int64_t c = const_int(e->tmpl[1], "the array element count");
      if (c < 1) fail(e->tmpl[1]->loc, fmt::format("array element count must be at least 1, got {}", c));
      if (c > (1 << 28)) fail(e->tmpl[1]->loc, fmt::format("array element count {} is too large", c));
      count = uint32_t(c);
      if (uint64_t(count) * array_stride(T.array(et, 1)) > (1ull << 30)) fail(e->loc, "array is larger than 1 GiB");
    }
    e->is_type = true;
    return T.array(et, count);
  }
  if (n == "atomic") {
    if (e->tmpl.size() != 1) fail(e->loc, "atomic takes one template argument");
    const Type* et = tmpl_type(0);
    if (et != T.i32() && et != T.u32()) fail(e->tmpl[0]->loc, fmt::format("atomic<{}> is not allowed; use i32 or u32", type_name(et)));
    e->is_type = true;
    return T.atomic(et);
  }
  if (n == "ptr") {
    if (e->tmpl.size() < 2 || e->tmpl.size() > 3) fail(e->loc, "ptr takes an address space, a type and an optional access mode");
    Expr* sp = e->tmpl[0];
    AddressSpace s = AddressSpace::none;
    if (sp->kind == ExprKind::ident) {
      if (sp->name == "function") s = AddressSpace::function;
      else if (sp->name == "private") s = AddressSpace::private_;
      else if (sp->name == "workgroup") s = AddressSpace::workgroup;
      else if (sp->name == "uniform") s = AddressSpace::uniform;
      else if (sp->name == "storage") s = AddressSpace::storage;
      else if (sp->name == "push_constant") s = AddressSpace::push_constant;
    }
    if (s == AddressSpace::none) fail(sp->loc, "expected an address space");
    const Type* et = tmpl_type(1);
    AccessMode a = s == AddressSpace::uniform || s == AddressSpace::storage || s == AddressSpace::push_constant
                       ? AccessMode::read : AccessMode::read_write;
    if (e->tmpl.size() == 3) {
      Expr* ac = e->tmpl[2];
      if (s != AddressSpace::storage) fail(ac->loc, "only storage pointers take an access mode");
      if (ac->kind == ExprKind::ident && ac->name == "read") a = AccessMode::read;
      else if (ac->kind == ExprKind::ident && ac->name == "read_write") a = AccessMode::read_write;
      else fail(ac->loc, "expected access mode 'read' or 'read_write'");
    }
    e->is_type = true;
    return T.ptr(s, et, a);
  }
  return nullptr;
}

bool Resolver::convertible(const Type* from, const Type* to) const {
  if (from == to) return true;
  if (!from || !to) return false;
  if (from->kind == TypeKind::abstract_int)
    return to->kind == TypeKind::abstract_float || to->kind == TypeKind::i32 || to->kind == TypeKind::u32 ||
           to->kind == TypeKind::f32 || to->kind == TypeKind::f16;
  if (from->kind == TypeKind::abstract_float) return to->kind == TypeKind::f32 || to->kind == TypeKind::f16;
  if (from->kind != to->kind) return false;
  if (from->kind == TypeKind::vec || from->kind == TypeKind::array) return from->n == to->n && convertible(from->elem, to->elem);
  if (from->kind == TypeKind::mat) return from->n == to->n && from->rows == to->rows && convertible(from->elem, to->elem);
  return false;
}

const Type* Resolver::common_type(const std::vector<const Type*>& ts) const {
  if (ts.empty()) return nullptr;
  // The most concrete candidate that every type converts to: try each type in turn.
  const Type* best = nullptr;
  for (const Type* cand : ts) {
    bool all = true;
    for (const Type* t : ts)
      if (!convertible(t, cand)) all = false;
    if (all && (!best || convertible(best, cand))) best = cand;
  }
  return best;
}

const Type* Resolver::concretize(const Type* t) {
  if (!t) return t;
  switch (t->kind) {
    case TypeKind::abstract_int: return T.i32();
    case TypeKind::abstract_float: return T.f32();
    case TypeKind::vec: return T.vec(t->n, concretize(t->elem));
    case TypeKind::mat: return T.mat(t->n, t->rows, concretize(t->elem));
    case TypeKind::array: return T.array(concretize(t->elem), t->n);
    default: return t;
  }
}

void Resolver::materialize(Expr* e, const Type* to) {
  const Type* from = unref(e->type);
  if (from == to) return;
  if (!convertible(from, to))
    fail(e->loc, fmt::format("expected {}, got {}", type_name(to), type_name(from)));
  e->type = to;
  if (e->value) fold(e, [&] { return convert_value(T, *e->value, to); });
}

}  // namespace bs::wgsl
