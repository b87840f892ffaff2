// Functions and statements. WGSL loops with a continuing block become `while (true)` loops whose
// continuing statements are emitted at the end of the body and in front of every `continue`;
// `for` and `while` stay GLSL loops when their condition and update need no hoisted statements.
#include <fmt/format.h>

#include "runtime/wgsl/emit_impl.h"

namespace bs::wgsl {

namespace {
bool has_call(const Expr* e) {
  if (!e) return false;
  if (e->kind == ExprKind::call) return true;
  for (const Expr* a : e->args)
    if (has_call(a)) return true;
  return false;
}
bool is_inline_compound(const Stmt* s) {
  // Compound assignments GLSL performs exactly as WGSL does; the rest are spelled out.
  const Type* t = unref(s->lhs->type);
  const Type* sc = scalar_of(t);
  if (s->op == "+=" || s->op == "-=" || s->op == "*=") return true;
  if (s->op == "/=") return sc && is_float_scalar(sc);
  if (s->op == "&=" || s->op == "|=" || s->op == "^=") return sc && sc->kind != TypeKind::bool_;
  return false;
}
}  // namespace

void Emitter::line(const std::string& s) {
  out_.append(size_t(indent_) * 2, ' ');
  out_ += s;
  out_ += '\n';
}

void Emitter::flush_prelude() {
  std::vector<std::string> p;
  p.swap(prelude_);
  for (const std::string& s : p) line(s);
}

std::string Emitter::local_name(const Decl* d) {
  auto it = local_names_.find(d);
  if (it != local_names_.end()) return it->second;
  std::string base = mangle(d->name), cand = base;
  for (int k = 1; used_names_.count(cand); ++k) cand = fmt::format("{}_{}", base, k);
  used_names_.insert(cand);
  local_names_[d] = cand;
  return cand;
}

void Emitter::function(const Decl* fn) {
  used_names_ = global_names_;
  local_names_.clear();
  ptr_alias_.clear();
  std::string params;
  for (const Decl* p : fn->params) {
    if (!params.empty()) params += ", ";
    if (p->type->kind == TypeKind::ptr) params += "inout " + decl_str(p->type->elem, local_name(p));
    else params += decl_str(p->type, local_name(p));
  }
  std::string ret = fn->type->kind == TypeKind::void_ ? "void" : type_str(fn->type);
  indent_ = 0;
  line(fmt::format("{} {}({}) {{", ret, name_of(fn), params));
  ++indent_;
  block_body(fn->body);
  --indent_;
  line("}");
}

void Emitter::block_body(const Stmt* b) {
  for (const Stmt* s : b->stmts) stmt(s);
}

std::string Emitter::hoist_lvalue(const Expr* e) {
  switch (e->kind) {
    case ExprKind::ident: return lvalue(e);
    case ExprKind::unary: return hoist_lvalue(e->args[0]);
    case ExprKind::member: {
      std::string base = hoist_lvalue(e->args[0]);
      const Type* bt = unref(e->args[0]->type);
      if (bt->kind == TypeKind::ptr) bt = bt->elem;
      return base + "." + mangle(bt->decl->members[size_t(e->member_index)].name);
    }
    case ExprKind::index: {
      std::string base = hoist_lvalue(e->args[0]);
      const Expr* idx = e->args[1];
      if (idx->value) return fmt::format("{}[{}]", base, expr(idx));
      // The pointer keeps the element chosen when it was formed, even if the index changes later.
      std::string t = temp();
      std::string v = expr(idx);
      flush_prelude();
      line(fmt::format("{} {} = {};", type_str(unref(idx->type)), t, v));
      return fmt::format("{}[{}]", base, t);
    }
    default: return lvalue(e);
  }
}

std::string Emitter::simple_text(const Stmt* s) {
  switch (s->kind) {
    case StmtKind::assign: {
      std::string lv = lvalue(s->lhs);
      if (s->op == "=") return fmt::format("{} = {}", lv, expr(s->rhs));
      if (is_inline_compound(s)) return fmt::format("{} {} {}", lv, s->op, expr(s->rhs));
      return fmt::format("{} = {}", lv, expr(s->combined));
    }
    case StmtKind::incdec: return lvalue(s->lhs) + s->op;
    case StmtKind::expr: return expr(s->lhs);
    case StmtKind::phony:
      if (s->lhs->type->kind == TypeKind::ptr || !has_call(s->lhs)) return "";
      return expr(s->lhs);
    default: return "";
  }
}

void Emitter::continue_site() {
  const Stmt* c = continuing_.empty() ? nullptr : continuing_.back();
  if (!c) {
    line("continue;");
    return;
  }
  bool break_if = false;
  if (c->kind == StmtKind::block)
    for (const Stmt* x : c->stmts) break_if = break_if || x->kind == StmtKind::break_if;
  if (break_if && switch_in_loop_.back() > 0)
    d_.error(c->loc, "blueshift cannot emit 'continue' inside a switch when the loop's continuing block has 'break if'");
  line("{");
  ++indent_;
  stmt(c);
  line("continue;");
  --indent_;
  line("}");
}

void Emitter::stmt(const Stmt* s) {
  switch (s->kind) {
    case StmtKind::block:
      line("{");
      ++indent_;
      block_body(s);
      --indent_;
      line("}");
      return;
    case StmtKind::decl: {
      const Decl* d = s->decl;
      if (d->kind == DeclKind::const_) return;  // consts are inlined where used
      if (d->kind == DeclKind::let && d->type->kind == TypeKind::ptr) {
        ptr_alias_[d] = hoist_lvalue(d->init);
        return;
      }
      if (d->kind == DeclKind::var && !d->init && d->type->kind == TypeKind::array && d->type->n > 16) {
        line(fmt::format("{};", decl_str(d->type, local_name(d))));
        zero_fill(local_name(d), d->type, "0u", "1u", 0);
        return;
      }
      std::string init = d->init ? expr(d->init) : zero(d->type);
      flush_prelude();
      line(fmt::format("{} = {};", decl_str(d->type, local_name(d)), init));
      return;
    }
    case StmtKind::assign: case StmtKind::incdec: case StmtKind::expr: case StmtKind::phony: {
      std::string text = simple_text(s);
      flush_prelude();
      if (!text.empty()) line(text + ";");
      return;
    }
    case StmtKind::if_: {
      std::string c = expr(s->lhs);
      flush_prelude();
      line(fmt::format("if ({}) {{", c));
      ++indent_;
      block_body(s->then);
      --indent_;
      if (s->els) {
        line("} else {");
        ++indent_;
        if (s->els->kind == StmtKind::block) block_body(s->els); else stmt(s->els);
        --indent_;
      }
      line("}");
      return;
    }
    case StmtKind::switch_: {
      std::string sel = expr(s->lhs);
      flush_prelude();
      line(fmt::format("switch ({}) {{", sel));
      if (!switch_in_loop_.empty()) ++switch_in_loop_.back();
      for (const SwitchCase& c : s->cases) {
        for (const Expr* v : c.selectors) line(fmt::format("case {}:", expr(v)));
        if (c.is_default) line("default:");
        line("{");
        ++indent_;
        block_body(c.body);
        line("break;");
        --indent_;
        line("}");
      }
      if (!switch_in_loop_.empty()) --switch_in_loop_.back();
      line("}");
      return;
    }
    case StmtKind::loop: {
      line("while (true) {");
      ++indent_;
      continuing_.push_back(s->els);
      switch_in_loop_.push_back(0);
      block_body(s->then);
      if (s->els) stmt(s->els);  // its own braces: the continuing block is a nested scope
      continuing_.pop_back();
      switch_in_loop_.pop_back();
      --indent_;
      line("}");
      return;
    }
    case StmtKind::for_: {
      line("{");
      ++indent_;
      if (s->init) stmt(s->init);
      std::string cond = s->lhs ? expr(s->lhs) : "";
      bool cond_ok = prelude_.empty();
      std::string upd = s->update && cond_ok ? simple_text(s->update) : "";
      bool simple = cond_ok && prelude_.empty();
      prelude_.clear();
      if (simple) {
        line(fmt::format("for (; {}; {}) {{", cond, upd));
        continuing_.push_back(nullptr);
      } else {
        line("while (true) {");
        ++indent_;
        if (s->lhs) {
          std::string c = expr(s->lhs);
          flush_prelude();
          line(fmt::format("if (!({})) {{ break; }}", c));
        }
        --indent_;
        continuing_.push_back(s->update);
      }
      switch_in_loop_.push_back(0);
      ++indent_;
      block_body(s->then);
      if (!simple && s->update) stmt(s->update);
      --indent_;
      continuing_.pop_back();
      switch_in_loop_.pop_back();
      line("}");
      --indent_;
      line("}");
      return;
    }
    case StmtKind::while_: {
      std::string c = expr(s->lhs);
      bool simple = prelude_.empty();
      prelude_.clear();
      continuing_.push_back(nullptr);
      switch_in_loop_.push_back(0);
      if (simple) {
        line(fmt::format("while ({}) {{", c));
        ++indent_;
      } else {
        line("while (true) {");
        ++indent_;
        c = expr(s->lhs);
        flush_prelude();
        line(fmt::format("if (!({})) {{ break; }}", c));
      }
      block_body(s->then);
      --indent_;
      line("}");
      continuing_.pop_back();
      switch_in_loop_.pop_back();
      return;
    }
    case StmtKind::break_: line("break;"); return;
    case StmtKind::break_if: {
      std::string c = expr(s->lhs);
      flush_prelude();
      line(fmt::format("if ({}) {{ break; }}", c));
      return;
    }
    case StmtKind::continue_: continue_site(); return;
    case StmtKind::return_: {
      if (!s->lhs) {
        line("return;");
        return;
      }
      std::string v = expr(s->lhs);
      flush_prelude();
      line(fmt::format("return {};", v));
      return;
    }
    case StmtKind::const_assert: return;
  }
}

}  // namespace bs::wgsl
