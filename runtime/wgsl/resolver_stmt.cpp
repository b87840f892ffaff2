// Statements: local declarations, assignment (with the address-space and access-mode checks),
// control flow and where break / continue / return may appear.
#include <fmt/format.h>

#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

namespace {
// The variable a memory-view expression is rooted at, for messages ("'out' is read-only").
const Decl* root_var(const Expr* e) {
  while (e) {
    if (e->kind == ExprKind::ident) return e->decl;
    if (e->args.empty()) return nullptr;
    e = e->args[0];
  }
  return nullptr;
}
// Where an expression starts in the source (an assignment's target is reported there).
Loc start_loc(const Expr* e) {
  while ((e->kind == ExprKind::index || e->kind == ExprKind::member || e->kind == ExprKind::binary) && !e->args.empty())
    e = e->args[0];
  return e->loc;
}
}  // namespace

void Resolver::declare_local(Decl* d) {
  auto& scope = scopes_.back();
  auto [it, fresh] = scope.emplace(d->name, d);
  if (!fresh) fail(d->loc, fmt::format("redeclaration of '{}' (first declared at line {})", d->name, it->second->loc.line));
}

void Resolver::block(Stmt* s, bool new_scope) {
  if (new_scope) scopes_.emplace_back();
  for (Stmt* st : s->stmts) {
    try {
      stmt(st);
    } catch (const Abort&) {
      if (d_.full()) {
        if (new_scope) scopes_.pop_back();
        throw;
      }
    }
  }
  if (new_scope) scopes_.pop_back();
}

void Resolver::local_decl(Decl* d) {
  const Type* declared = d->type_expr ? resolve_type(d->type_expr) : nullptr;
  if (d->kind == DeclKind::var) {
    if (!d->var_tmpl.empty()) {
      Expr* sp = d->var_tmpl[0];
      if (sp->kind != ExprKind::ident || sp->name != "function" || d->var_tmpl.size() > 1)
        fail(sp->loc, "variables declared in a function are in the function address space: use 'var' or 'var<function>'");
    }
    d->space = AddressSpace::function;
    d->access = AccessMode::read_write;
    if (d->init) {
      value_of(d->init);
      d->init->type = unref(d->init->type);
      if (declared) materialize(d->init, declared); else concretize_expr(d->init);
      if (declared && unref(d->init->type) != declared)
        fail(d->init->loc, fmt::format("cannot initialize {} variable '{}' with {}", type_name(declared), d->name, type_name(unref(d->init->type))));
    }
    d->type = declared ? declared : d->init ? unref(d->init->type) : nullptr;
    if (!d->type) fail(d->loc, fmt::format("var '{}' needs a type or an initializer", d->name));
    if (!is_constructible(d->type)) fail(d->loc, fmt::format("function-scope var '{}' cannot have type {}", d->name, type_name(d->type)));
  } else if (d->kind == DeclKind::let) {
    expr(d->init);
    if (d->init->type->kind != TypeKind::ptr) {
      d->init->type = unref(d->init->type);
      if (declared) materialize(d->init, declared); else concretize_expr(d->init);
    }
    const Type* t = d->init->type;
    if (declared && t != declared)
      fail(d->init->loc, fmt::format("cannot initialize {} '{}' with {}", type_name(declared), d->name, type_name(t)));
    if (t->kind == TypeKind::void_) fail(d->init->loc, "the function returns no value");
    if (t->kind != TypeKind::ptr && !is_constructible(t)) fail(d->loc, fmt::format("let '{}' cannot have type {}", d->name, type_name(t)));
    d->type = t;
  } else {  // const
    value_of(d->init);
    if (d->init->stage != Stage::constant || !d->init->value)
      fail(d->init->loc, fmt::format("the initializer of const '{}' must be a const-expression", d->name));
    d->init->type = unref(d->init->type);
    if (declared) materialize(d->init, declared);
    d->type = d->init->type;
    d->value = d->init->value;
    d->stage = Stage::constant;
  }
  declare_local(d);
}

void Resolver::assignment(Stmt* s) {
  Expr* l = s->lhs;
  expr(l);
  const Decl* root = root_var(l);
  Loc at = start_loc(l);
  std::string what = root ? fmt::format("'{}'", root->name) : "the left-hand side";
  if (l->type->kind != TypeKind::ref) {
    if (root && (root->kind == DeclKind::let || root->kind == DeclKind::param))
      fail(at, fmt::format("cannot assign to {}: let values and parameters are immutable", what));
    fail(at, fmt::format("cannot assign to {}: it is not a variable", what));
  }
  if (l->type->access == AccessMode::read) {
    if (l->type->space == AddressSpace::uniform) fail(at, fmt::format("cannot assign to {}: uniform buffers are read-only", what));
    if (l->type->space == AddressSpace::push_constant) fail(at, fmt::format("cannot assign to {}: push constants are read-only", what));
    fail(at, fmt::format("cannot assign to {}: it is a read-only storage buffer (declare it var<storage, read_write>)", what));
  }
  const Type* st = l->type->elem;
  if (contains_atomic(st)) fail(at, fmt::format("cannot assign to atomic {}; use atomicStore", what));
  if (!is_constructible(st)) fail(at, fmt::format("cannot assign a value of type {}", type_name(st)));
  if (root && root->kind == DeclKind::var) const_cast<Decl*>(root)->assigned = true;
  if (s->kind == StmtKind::incdec) {
    if (st != T.i32() && st != T.u32()) fail(at, fmt::format("'{}' needs an i32 or u32 variable, not {}", s->op, type_name(st)));
    return;
  }
  if (s->op == "=") {
    value_of(s->rhs);
    s->rhs->type = unref(s->rhs->type);
    materialize(s->rhs, st);
    if (s->rhs->type != st) fail(s->rhs->loc, fmt::format("cannot assign {} to {} of type {}", type_name(s->rhs->type), what, type_name(st)));
    return;
  }
  // Compound assignment: type-check `lhs op rhs` and require the result to fit the variable.
  Expr* bin = m_.new_expr(ExprKind::binary, s->loc);
  bin->name = s->op.substr(0, s->op.size() - 1);
  bin->args = {l, s->rhs};
  resolve_binary(bin);
  s->combined = bin;
  if (unref(bin->type) != st)
    fail(s->loc, fmt::format("'{}' gives {}, which cannot be stored in {} of type {}", s->op, type_name(bin->type), what, type_name(st)));
}

void Resolver::stmt(Stmt* s) {
  switch (s->kind) {
    case StmtKind::block: block(s); return;
    case StmtKind::decl: local_decl(s->decl); return;
    case StmtKind::assign: case StmtKind::incdec: assignment(s); return;
    case StmtKind::phony: {
      expr(s->lhs);
      if (s->lhs->type->kind != TypeKind::ptr) {
        s->lhs->type = unref(s->lhs->type);
        if (s->lhs->type->kind == TypeKind::void_) fail(s->lhs->loc, "the function returns no value");
        concretize_expr(s->lhs);
      }
      return;
    }
    case StmtKind::expr: {
      expr(s->lhs);
      if (s->lhs->kind != ExprKind::call) fail(s->loc, "only function calls can be statements");
      return;
    }
    case StmtKind::if_: {
      if (value_of(s->lhs) != T.bool_t()) fail(s->lhs->loc, fmt::format("an if condition must be bool, not {}", type_name(unref(s->lhs->type))));
      block(s->then);
      if (s->els) stmt(s->els);
      return;
    }
    case StmtKind::switch_: {
      const Type* t = value_of(s->lhs);
      if (!is_integer_scalar(t)) fail(s->lhs->loc, fmt::format("a switch selector must be i32 or u32, not {}", type_name(t)));
      std::vector<const Type*> ts = {t};
      for (auto& c : s->cases)
        for (Expr* sel : c.selectors) {
          value_of(sel);
          if (sel->stage != Stage::constant) fail(sel->loc, "case selectors must be const-expressions");
          ts.push_back(unref(sel->type));
        }
      const Type* ct = common_type(ts);
      if (!ct) fail(s->loc, "the switch selector and the case values have no common integer type");
      ct = concretize(ct);
      materialize(s->lhs, ct);
      std::vector<int64_t> seen;
      int defaults = 0;
      ++switch_depth_;
      for (auto& c : s->cases) {
        defaults += c.is_default;
        for (Expr* sel : c.selectors) {
          materialize(sel, ct);
          for (int64_t v : seen)
            if (v == sel->value->i) fail(sel->loc, fmt::format("duplicate case value {}", v));
          seen.push_back(sel->value->i);
        }
        block(c.body);
      }
      --switch_depth_;
      if (defaults != 1) fail(s->loc, defaults ? "a switch has more than one default clause" : "a switch needs a default clause");
      return;
    }
    case StmtKind::loop: {
      ++loop_depth_;
      scopes_.emplace_back();  // the continuing block sees the body's declarations
      for (Stmt* st : s->then->stmts) {
        try {
          stmt(st);
        } catch (const Abort&) {
          if (d_.full()) throw;
        }
      }
      if (s->els) {
        ++continuing_depth_;
        const auto& cs = s->els->stmts;
        for (size_t i = 0; i < cs.size(); ++i)
          if (cs[i]->kind == StmtKind::break_if && i + 1 != cs.size())
            d_.error(cs[i]->loc, "'break if' must be the last statement of the continuing block");
        block(s->els);
        --continuing_depth_;
      }
      scopes_.pop_back();
      --loop_depth_;
      return;
    }
    case StmtKind::for_: {
      scopes_.emplace_back();
      if (s->init) stmt(s->init);
      if (s->lhs && value_of(s->lhs) != T.bool_t()) fail(s->lhs->loc, "a for-loop condition must be bool");
      if (s->update) {
        if (s->update->kind == StmtKind::decl) fail(s->update->loc, "the for-loop update cannot declare");
        stmt(s->update);
      }
      ++loop_depth_;
      block(s->then);
      --loop_depth_;
      scopes_.pop_back();
      return;
    }
    case StmtKind::while_: {
      if (value_of(s->lhs) != T.bool_t()) fail(s->lhs->loc, "a while condition must be bool");
      ++loop_depth_;
      block(s->then);
      --loop_depth_;
      return;
    }
    case StmtKind::break_:
      if (continuing_depth_) fail(s->loc, "'break' is not allowed in a continuing block; use 'break if'");
      if (!loop_depth_ && !switch_depth_) fail(s->loc, "'break' outside a loop or switch");
      return;
    case StmtKind::break_if:
      if (!continuing_depth_) fail(s->loc, "'break if' is only allowed at the end of a continuing block");
      if (value_of(s->lhs) != T.bool_t()) fail(s->lhs->loc, "a break-if condition must be bool");
      return;
    case StmtKind::continue_:
      if (continuing_depth_) fail(s->loc, "'continue' is not allowed in a continuing block");
      if (!loop_depth_) fail(s->loc, "'continue' outside a loop");
      return;
    case StmtKind::return_: {
      if (continuing_depth_) fail(s->loc, "'return' is not allowed in a continuing block");
      const Type* rt = fn_->type;
      if (!s->lhs) {
        if (rt != T.void_t()) fail(s->loc, fmt::format("'{}' must return a {}", fn_->name, type_name(rt)));
        return;
      }
      if (rt == T.void_t()) fail(s->lhs->loc, fmt::format("'{}' returns no value", fn_->name));
      value_of(s->lhs);
      s->lhs->type = unref(s->lhs->type);
      materialize(s->lhs, rt);
      if (s->lhs->type != rt) fail(s->lhs->loc, fmt::format("return type is {}, got {}", type_name(rt), type_name(s->lhs->type)));
      return;
    }
    case StmtKind::const_assert: {
      const Type* t = value_of(s->decl->init);
      if (t != T.bool_t() || s->decl->init->stage != Stage::constant || !s->decl->init->value)
        fail(s->loc, "const_assert needs a bool const-expression");
      if (!s->decl->init->value->i) fail(s->loc, "const_assert failed");
      return;
    }
  }
}

// Whether every path through `s` ends in a return (a simplified behaviour analysis).
bool Resolver::returns(const Stmt* s) const {
  if (!s) return false;
  switch (s->kind) {
    case StmtKind::return_: return true;
    case StmtKind::block:
      for (const Stmt* st : s->stmts)
        if (returns(st)) return true;
      return false;
    case StmtKind::if_: return s->els && returns(s->then) && returns(s->els);
    case StmtKind::switch_:
      for (const auto& c : s->cases)
        if (!returns(c.body)) return false;
      return true;
    case StmtKind::loop: {
      // A loop without a break never falls through.
      std::function<bool(const Stmt*, int)> has_break = [&](const Stmt* x, int depth) -> bool {
        if (!x) return false;
        if ((x->kind == StmtKind::break_ && depth == 0) || (x->kind == StmtKind::break_if && depth == 0)) return true;
        int d = depth + (x->kind == StmtKind::loop || x->kind == StmtKind::for_ || x->kind == StmtKind::while_ ||
                         x->kind == StmtKind::switch_);
        for (const Stmt* c : x->stmts) if (has_break(c, d)) return true;
        for (const auto& c : x->cases) if (has_break(c.body, d)) return true;
        return has_break(x->then, d) || has_break(x->els, d) || has_break(x->init, d) || has_break(x->update, d);
      };
      return !has_break(s->then, 0) && !has_break(s->els, 0);
    }
    default: return false;
  }
}

}  // namespace bs::wgsl
