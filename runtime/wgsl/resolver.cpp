// Module-scope resolution: declarations in any order (each resolved on first use, cycles
// reported), types, struct layout, address spaces, overrides and entry points.
#include "runtime/wgsl/resolver.h"

#include <fmt/format.h>

#include <cmath>

namespace bs::wgsl {

void resolve_module(Module& m, Diagnostics& diags, const OverrideValues* overrides) {
  Resolver r(m, diags, overrides);
  r.run();
}

void Resolver::fail(Loc loc, std::string msg) {
  d_.error(loc, std::move(msg));
  throw Abort{};
}

void Resolver::require_enable(Loc loc, const char* ext, const std::string& what) {
  if (!m_.enables.count(ext)) fail(loc, fmt::format("{} requires 'enable {};' at the top of the module", what, ext));
}

void Resolver::note_use(Decl* d) {
  if (fn_ && d->module_scope && d != fn_) fn_->uses.push_back(d);
}

Stage Resolver::combine(std::initializer_list<Stage> s) {
  Stage out = Stage::constant;
  for (Stage x : s) out = std::max(out, x);
  return out;
}

void Resolver::fold(Expr* e, const std::function<Value()>& f) {
  try {
    e->value = f();
  } catch (const ConstError& err) {
    fail(e->loc, err.message);
  }
}

int64_t Resolver::const_int(Expr* e, const char* what) {
  const Type* t = value_of(e);
  if (!is_integer_scalar(t)) fail(e->loc, fmt::format("{} must be an integer, not {}", what, type_name(t)));
  if (!e->value) {
    if (e->stage == Stage::override_)
      fail(e->loc, fmt::format("{} depends on an override that has no value; give it one (--define NAME=VALUE)", what));
    fail(e->loc, fmt::format("{} must be a const-expression", what));
  }
  return e->value->i;
}

void Resolver::run() {
  for (Decl* g : m_.globals) {
    if (g->kind == DeclKind::const_assert) continue;
    auto [it, fresh] = globals_.emplace(g->name, g);
    if (!fresh) d_.error(g->loc, fmt::format("redeclaration of '{}' (first declared at line {})", g->name, it->second->loc.line));
  }
  for (Decl* g : m_.globals) {
    try {
      global(g);
    } catch (const Abort&) {
      if (d_.full()) return;
    }
  }
}

Decl* Resolver::lookup(const std::string& name, Loc loc) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return f->second;
  }
  auto g = globals_.find(name);
  if (g == globals_.end()) return nullptr;
  Decl* d = g->second;
  if (d->state == Decl::State::resolving) {
    if (d->kind == DeclKind::fn) fail(loc, fmt::format("recursion is not allowed in WGSL: '{}' calls itself", name));
    fail(loc, fmt::format("'{}' is used in its own declaration (a dependency cycle)", name));
  }
  if (d->state == Decl::State::unresolved) global(d);
  if (d->state == Decl::State::failed) throw Abort{};  // already reported where it failed
  note_use(d);
  return d;
}

void Resolver::global(Decl* d) {
  if (d->state != Decl::State::unresolved) return;
  d->state = Decl::State::resolving;
  // A declaration met while resolving a function body is resolved in a clean context.
  auto saved_scopes = std::move(scopes_);
  scopes_.clear();
  Decl* saved_fn = fn_;
  fn_ = nullptr;
  int saved[3] = {loop_depth_, switch_depth_, continuing_depth_};
  loop_depth_ = switch_depth_ = continuing_depth_ = 0;
  auto restore = [&] {
    scopes_ = std::move(saved_scopes);
    fn_ = saved_fn;
    loop_depth_ = saved[0], switch_depth_ = saved[1], continuing_depth_ = saved[2];
  };
  try {
    switch (d->kind) {
      case DeclKind::alias: d->type = resolve_type(d->type_expr); break;
      case DeclKind::struct_: struct_decl(d); break;
      case DeclKind::const_: case DeclKind::override_: global_value(d); break;
      case DeclKind::var: global_var(d); break;
      case DeclKind::fn: function(d); break;
      case DeclKind::const_assert: {
        const Type* t = value_of(d->init);
        if (t != T.bool_t() || !d->init->value || d->init->stage != Stage::constant)
          fail(d->init->loc, "const_assert needs a bool const-expression");
        if (!d->init->value->i) fail(d->loc, "const_assert failed");
        break;
      }
      default: break;
    }
  } catch (const Abort&) {
    d->state = Decl::State::failed;
    restore();
    throw;
  }
  restore();
  d->state = Decl::State::resolved;
  m_.order.push_back(d);
}

void Resolver::struct_decl(Decl* d) {
  uint32_t cur = 0, align = 1;
  std::set<std::string> names;
  for (size_t i = 0; i < d->members.size(); ++i) {
    StructMember& mem = d->members[i];
    if (!names.insert(mem.name).second) fail(mem.loc, fmt::format("duplicate member '{}' in struct '{}'", mem.name, d->name));
    mem.type = resolve_type(mem.type_expr);
    const Type* t = mem.type;
    bool runtime = t->kind == TypeKind::array && t->n == 0;
    if (runtime && i + 1 != d->members.size())
      fail(mem.loc, "a runtime-sized array can only be the last member of a struct");
    if (t->kind == TypeKind::ptr || t->kind == TypeKind::void_ || (t->kind == TypeKind::struct_ && contains_runtime_array(t)))
      fail(mem.loc, fmt::format("'{}' cannot be a struct member type", type_name(t)));
    uint32_t ma = align_of(t), ms = runtime ? array_stride(t) : size_of(t);
    for (const Attr& a : mem.attrs) {
      if (a.name == "align" || a.name == "size") {
        if (a.args.size() != 1) fail(a.loc, fmt::format("@{} takes one argument", a.name));
        int64_t v = const_int(a.args[0], a.name == "align" ? "@align" : "@size");
        if (a.name == "align") {
          if (v < 1 || v > (1 << 30) || (v & (v - 1))) fail(a.loc, "@align must be a positive power of two");
          if (uint32_t(v) < align_of(t))
            fail(a.loc, fmt::format("@align({}) is below the alignment {} of {}", v, align_of(t), type_name(t)));
          ma = uint32_t(v);
        } else {
          if (runtime) fail(a.loc, "@size cannot apply to a runtime-sized array");
          if (v < ms || v > (1 << 30)) fail(a.loc, fmt::format("@size({}) is smaller than the size {} of {}", v, ms, type_name(t)));
          ms = uint32_t(v);
        }
      } else if (a.name == "builtin") {
        if (a.args.size() != 1 || a.args[0]->kind != ExprKind::ident) fail(a.loc, "@builtin takes a builtin value name");
        mem.builtin = a.args[0]->name;
      } else if (a.name != "location" && a.name != "interpolate" && a.name != "invariant") {
        fail(a.loc, fmt::format("unknown struct member attribute '@{}'", a.name));
      }
    }
    mem.offset = round_up(ma, cur);
    mem.align = ma;
    mem.size = ms;
    if (uint64_t(mem.offset) + ms > (1u << 30)) fail(mem.loc, "struct is larger than 1 GiB");
    cur = mem.offset + ms;
    align = std::max(align, ma);
  }
  d->align = align;
  d->size = round_up(align, cur);
  d->type = T.struct_of(d);
}

void Resolver::global_value(Decl* d) {
  const Type* declared = d->type_expr ? resolve_type(d->type_expr) : nullptr;
  if (d->kind == DeclKind::const_) {
    for (const Attr& a : d->attrs) fail(a.loc, fmt::format("'@{}' does not apply to const declarations", a.name));
    value_of(d->init);
    if (d->init->stage != Stage::constant) fail(d->init->loc, fmt::format("the initializer of const '{}' must be a const-expression", d->name));
    if (declared) materialize(d->init, declared);
    d->type = unref(d->init->type);
    if (!is_constructible(d->type)) fail(d->loc, fmt::format("const '{}' cannot have type {}", d->name, type_name(d->type)));
    d->value = d->init->value;
    d->stage = Stage::constant;
    return;
  }
  // override
  for (const Attr& a : d->attrs) {
    if (a.name != "id") fail(a.loc, fmt::format("'@{}' does not apply to override declarations", a.name));
    if (a.args.size() != 1) fail(a.loc, "@id takes one argument");
    int64_t id = const_int(a.args[0], "@id");
    if (id < 0 || id > 65535) fail(a.loc, "@id must be in [0, 65535]");
    d->override_id = int(id);
  }
  if (d->init) {
    value_of(d->init);
    if (d->init->stage == Stage::runtime) fail(d->init->loc, "an override initializer must be a const- or override-expression");
    if (declared) materialize(d->init, declared); else concretize_expr(d->init);
  }
  d->type = declared ? declared : d->init ? unref(d->init->type) : nullptr;
  if (!d->type) fail(d->loc, fmt::format("override '{}' needs a type or an initializer", d->name));
  if (!is_scalar(d->type) || is_abstract(d->type))
    fail(d->loc, fmt::format("override '{}' must have a concrete scalar type, not {}", d->name, type_name(d->type)));
  d->stage = Stage::override_;
  if (overrides_) {
    auto it = overrides_->find(d->name);
    if (it == overrides_->end() && d->override_id >= 0) it = overrides_->find(std::to_string(d->override_id));
    if (it != overrides_->end()) {
      double v = it->second;
      Value in;
      if (is_float_scalar(d->type) || d->type->kind == TypeKind::bool_) {
        in.type = T.abstract_float();
        in.f = v;
      } else {
        if (v != std::trunc(v) || !std::isfinite(v))
          fail(d->loc, fmt::format("override '{}' is {} and needs an integer value, got {}", d->name, type_name(d->type), v));
        if (std::fabs(v) > 9.0e15) fail(d->loc, fmt::format("override '{}': value {} is out of range", d->name, v));
        in.type = T.abstract_int();
        in.i = int64_t(v);
      }
      try {
        d->value = convert_value(T, in, d->type);
      } catch (const ConstError& e) {
        fail(d->loc, fmt::format("override '{}': {}", d->name, e.message));
      }
      return;
    }
  }
  if (d->init && d->init->value) d->value = d->init->value;
}

void Resolver::global_var(Decl* d) {
  if (d->var_tmpl.empty()) fail(d->loc, fmt::format("module-scope var '{}' needs an address space: var<private>, var<workgroup>, var<uniform>, var<storage> or var<push_constant>", d->name));
  Expr* sp = d->var_tmpl[0];
  if (sp->kind != ExprKind::ident || !sp->tmpl.empty()) fail(sp->loc, "expected an address space");
  const std::string& s = sp->name;
  if (s == "private") d->space = AddressSpace::private_;
  else if (s == "workgroup") d->space = AddressSpace::workgroup;
  else if (s == "uniform") d->space = AddressSpace::uniform;
  else if (s == "storage") d->space = AddressSpace::storage;
  else if (s == "push_constant") d->space = AddressSpace::push_constant;
  else if (s == "function") fail(sp->loc, "var<function> is only allowed inside functions");
  else fail(sp->loc, fmt::format("unknown address space '{}'", s));
  d->access = d->space == AddressSpace::uniform || d->space == AddressSpace::push_constant ? AccessMode::read
              : d->space == AddressSpace::storage ? AccessMode::read : AccessMode::read_write;
  if (d->var_tmpl.size() > 2) fail(d->var_tmpl[2]->loc, "too many template arguments for var");
  if (d->var_tmpl.size() == 2) {
    Expr* ac = d->var_tmpl[1];
    if (d->space != AddressSpace::storage) fail(ac->loc, fmt::format("an access mode can only be given for var<storage>, not var<{}>", s));
    if (ac->kind == ExprKind::ident && ac->name == "read") d->access = AccessMode::read;
    else if (ac->kind == ExprKind::ident && ac->name == "read_write") d->access = AccessMode::read_write;
    else if (ac->kind == ExprKind::ident && ac->name == "write") fail(ac->loc, "storage buffers cannot be write-only; use read_write");
    else fail(ac->loc, "expected access mode 'read' or 'read_write'");
  }
  const Type* t = d->type_expr ? resolve_type(d->type_expr) : nullptr;
  if (d->init) {
    if (d->space != AddressSpace::private_) fail(d->init->loc, fmt::format("var<{}> cannot have an initializer", s));
    value_of(d->init);
    if (d->init->stage == Stage::runtime) fail(d->init->loc, "a module-scope initializer must be a const- or override-expression");
    if (t) materialize(d->init, t); else concretize_expr(d->init);
    t = unref(d->init->type);
  }
  if (!t) fail(d->loc, fmt::format("var '{}' needs a type", d->name));
  d->type = t;
  bool runtime = contains_runtime_array(t);
  if (d->space == AddressSpace::uniform || d->space == AddressSpace::storage) {
    if (!is_host_shareable(t)) fail(d->type_expr->loc, fmt::format("var<{}> needs a host-shareable type; {} is not", s, type_name(t)));
    if (d->space == AddressSpace::uniform && (runtime || contains_atomic(t)))
      fail(d->type_expr->loc, fmt::format("var<uniform> cannot hold {}", type_name(t)));
    if (d->space == AddressSpace::uniform) check_uniform_layout(t, d->loc, d->name);
    if (d->space == AddressSpace::storage && contains_atomic(t) && d->access != AccessMode::read_write)
      fail(d->loc, fmt::format("atomics in var<storage> need read_write access ('{}' is read-only)", d->name));
    int64_t group = -1, binding = -1;
    for (const Attr& a : d->attrs) {
      if (a.args.size() != 1) fail(a.loc, fmt::format("@{} takes one argument", a.name));
      if (a.name == "group") group = const_int(a.args[0], "@group");
      else if (a.name == "binding") binding = const_int(a.args[0], "@binding");
      else fail(a.loc, fmt::format("'@{}' does not apply to var declarations", a.name));
    }
    if (group < 0 || binding < 0) fail(d->loc, fmt::format("resource '{}' needs @group(N) and @binding(M) with N, M >= 0", d->name));
    if (group > 31 || binding > 65535) fail(d->loc, "@group must be <= 31 and @binding <= 65535");
    d->group = int(group);
    d->binding = int(binding);
  } else if (d->space == AddressSpace::push_constant) {
    // One block of 32-bit-or-wider plain data per entry point, set with setPushConstants (no binding).
    for (const Attr& a : d->attrs) fail(a.loc, fmt::format("'@{}' does not apply to var<push_constant> (it has no binding)", a.name));
    if (!is_host_shareable(t) || runtime || contains_atomic(t))
      fail(d->type_expr->loc, fmt::format("var<push_constant> needs a fixed-size host-shareable type without atomics; {} is not", type_name(t)));
  } else {
    for (const Attr& a : d->attrs) fail(a.loc, fmt::format("'@{}' only applies to uniform and storage variables", a.name));
    if (runtime) fail(d->loc, fmt::format("var<{}> cannot hold a runtime-sized array", s));
    if (d->space == AddressSpace::private_ && contains_atomic(t)) fail(d->loc, "atomics are only allowed in workgroup and storage variables");
    if (!is_constructible(t) && !contains_atomic(t)) fail(d->loc, fmt::format("var<{}> cannot have type {}", s, type_name(t)));
  }
}

// The uniform address space's extra layout rules (WGSL "Address Space Layout Constraints").
void Resolver::check_uniform_layout(const Type* t, Loc loc, const std::string& what) {
  if (t->kind == TypeKind::array) {
    if (array_stride(t) % 16)
      fail(loc, fmt::format("{}: arrays in var<uniform> need an element stride that is a multiple of 16, {} has {}; "
                            "use vec4 elements or wrap the element in a struct with @size(16)", what, type_name(t), array_stride(t)));
    check_uniform_layout(t->elem, loc, what);
  } else if (t->kind == TypeKind::struct_) {
    const auto& ms = t->decl->members;
    for (size_t i = 0; i < ms.size(); ++i) {
      const StructMember& m = ms[i];
      bool composite = m.type->kind == TypeKind::struct_ || m.type->kind == TypeKind::array;
      if (composite && m.offset % 16)
        fail(m.loc, fmt::format("{}: member '{}' of '{}' is at offset {}; in var<uniform> a struct or array member "
                                "must start at a multiple of 16 (add @align(16))", what, m.name, t->decl->name, m.offset));
      if (i > 0 && ms[i - 1].type->kind == TypeKind::struct_ &&
          m.offset - ms[i - 1].offset < round_up(16, size_of(ms[i - 1].type)))
        fail(m.loc, fmt::format("{}: member '{}' of '{}' must start at least {} bytes after the struct before it in "
                                "var<uniform> (add @align(16))", what, m.name, t->decl->name, round_up(16, size_of(ms[i - 1].type))));
      check_uniform_layout(m.type, m.loc, what);
    }
  }
}

void Resolver::function(Decl* d) {
  fn_ = d;
  scopes_.emplace_back();
  for (Decl* p : d->params) {
    p->type = resolve_type(p->type_expr);
    for (const Attr& a : p->attrs) {
      if (a.name == "builtin" && a.args.size() == 1 && a.args[0]->kind == ExprKind::ident) p->builtin = a.args[0]->name;
      else if (a.name != "location" && a.name != "interpolate" && a.name != "invariant") fail(a.loc, fmt::format("'@{}' does not apply to parameters", a.name));
    }
    if (p->type->kind == TypeKind::ptr) {
      AddressSpace sp = p->type->space;
      if (sp == AddressSpace::storage || sp == AddressSpace::uniform || sp == AddressSpace::workgroup ||
          sp == AddressSpace::push_constant)
        fail(p->loc, fmt::format("pointer parameters into the {} address space are not supported by blueshift "
                                 "(pass the index, or use function/private pointers)", space_name(sp)));
    } else if (!is_constructible(p->type)) {
      fail(p->loc, fmt::format("parameter '{}' cannot have type {}", p->name, type_name(p->type)));
    }
    declare_local(p);
  }
  d->type = d->ret_type ? resolve_type(d->ret_type) : T.void_t();
  if (d->ret_type && !is_constructible(d->type)) fail(d->ret_type->loc, fmt::format("functions cannot return {}", type_name(d->type)));
  for (const Attr& a : d->attrs) {
    if (a.name == "compute") d->is_entry = true;
    else if (a.name == "vertex" || a.name == "fragment") fail(a.loc, fmt::format("@{} entry points are not supported: blueshift runs compute shaders", a.name));
    else if (a.name != "workgroup_size" && a.name != "must_use" && a.name != "diagnostic") fail(a.loc, fmt::format("unknown function attribute '@{}'", a.name));
  }
  if (d->is_entry) entry_point(d);
  else if (find_attr(d->attrs, "workgroup_size")) fail(d->loc, "@workgroup_size needs @compute");
  block(d->body, false);
  if (d->type != T.void_t() && !returns(d->body)) fail(d->body->loc, fmt::format("function '{}' must end in a return statement", d->name));
  scopes_.pop_back();
}

void Resolver::entry_point(Decl* d) {
  const Attr* wg = find_attr(d->attrs, "workgroup_size");
  if (!wg) fail(d->loc, fmt::format("compute entry point '{}' needs @workgroup_size", d->name));
  if (wg->args.empty() || wg->args.size() > 3) fail(wg->loc, "@workgroup_size takes 1 to 3 arguments");
  for (size_t i = 0; i < wg->args.size(); ++i) {
    Expr* e = wg->args[i];
    const Type* t = value_of(e);
    if (!is_integer_scalar(t)) fail(e->loc, "@workgroup_size arguments must be integers");
    if (e->stage == Stage::runtime) fail(e->loc, "@workgroup_size arguments must be const- or override-expressions");
    concretize_expr(e);
    if (e->value && e->value->i < 1) fail(e->loc, "@workgroup_size arguments must be at least 1");
    d->wg_exprs[i] = e;
  }
  if (d->type != T.void_t()) fail(d->ret_type->loc, "compute entry points cannot return a value");
  auto check_builtin = [&](Loc loc, const std::string& b, const Type* t) {
    const Type* uvec3 = T.vec(3, T.u32());
    const Type* want = nullptr;
    if (b == "local_invocation_id" || b == "global_invocation_id" || b == "workgroup_id" || b == "num_workgroups") want = uvec3;
    else if (b == "local_invocation_index") want = T.u32();
    else if (b == "subgroup_invocation_id" || b == "subgroup_size") {
      require_enable(loc, "subgroups", fmt::format("@builtin({})", b));
      want = T.u32();
    } else if (b.empty()) {
      fail(loc, "compute entry point inputs need @builtin(...)");
    } else {
      fail(loc, fmt::format("'{}' is not a compute shader builtin value", b));
    }
    if (t != want) fail(loc, fmt::format("@builtin({}) must be {}, not {}", b, type_name(want), type_name(t)));
  };
  for (Decl* p : d->params) {
    if (p->type->kind == TypeKind::struct_ && p->builtin.empty()) {
      for (const StructMember& m : p->type->decl->members) check_builtin(m.loc, m.builtin, m.type);
    } else {
      check_builtin(p->loc, p->builtin, p->type);
    }
  }
}

}  // namespace bs::wgsl
