// Directives, module-scope declarations and statements. On a syntax error the parser records it
// and resynchronizes at the next declaration or statement, so one run reports several errors.
#include <fmt/format.h>

#include "runtime/wgsl/parser_impl.h"

namespace bs::wgsl {

void parse_module(Module& m, Diagnostics& diags) {
  Parser p(m, diags, tokenize(m.source, diags));
  p.parse_translation_unit();
}

void Parser::parse_translation_unit() {
  bool seen_decl = false;
  while (peek().kind != Tok::eof) {
    try {
      bool is_directive = is_kw("enable") || is_kw("requires") || (is_kw("diagnostic") && peek(1).text == "(");
      if (is_directive) {
        if (seen_decl) error(peek().loc, "directives must come before all declarations");
        directive();
      } else {
        seen_decl = true;
        global_decl();
      }
    } catch (const Abort&) {
      if (d_.full()) return;
      recover_global();
    }
  }
}

void Parser::recover_global() {
  int braces = 0;
  while (peek().kind != Tok::eof) {
    const Token& t = peek();
    if (braces == 0 && t.kind == Tok::ident &&
        (t.text == "fn" || t.text == "struct" || t.text == "var" || t.text == "const" || t.text == "override" ||
         t.text == "alias" || t.text == "const_assert"))
      return;
    if (braces == 0 && t.kind == Tok::punct && t.text == "@") return;
    if (t.kind == Tok::punct && t.text == "{") ++braces;
    if (t.kind == Tok::punct && t.text == "}" && braces > 0) --braces;
    next();
  }
}

void Parser::recover_statement() {
  int braces = 0;
  while (peek().kind != Tok::eof) {
    const Token& t = peek();
    if (t.kind == Tok::punct && t.text == "{") ++braces;
    if (t.kind == Tok::punct && t.text == "}") {
      if (braces == 0) return;
      if (--braces == 0) {
        next();
        return;
      }
    }
    if (braces == 0 && t.kind == Tok::punct && t.text == ";") {
      next();
      return;
    }
    next();
  }
}

void Parser::directive() {
  Token kw = next();
  if (kw.text == "diagnostic") {
    call_args();  // severity and rule name: accepted; blueshift reports no filterable diagnostics
    expect(";", "after the diagnostic directive");
    return;
  }
  do {
    Token name = peek();
    std::string ext = expect_ident(fmt::format("after '{}'", kw.text));
    if (kw.text == "enable") {
      if (ext == "f16" || ext == "subgroups")
        m_.enables.insert(ext);
      else if (ext == "subgroups_f16")  // older spelling of f16 subgroup support, now implied
        m_.enables.insert("subgroups");
      else
        d_.error(name.loc, fmt::format("unsupported extension '{}' (blueshift supports f16, subgroups)", ext));
    } else if (ext != "readonly_and_readwrite_storage_textures" && ext != "packed_4x8_integer_dot_product" &&
               ext != "unrestricted_pointer_parameters" && ext != "pointer_composite_access") {
      d_.error(name.loc, fmt::format("unsupported language feature '{}'", ext));
    }
  } while (accept(",") && peek().kind == Tok::ident);
  expect(";", fmt::format("after the {} directive", kw.text));
}

std::string Parser::declared_name(std::string_view context) {
  Token t = peek();
  std::string name = expect_ident(context);
  if (is_keyword(name)) error(t.loc, fmt::format("'{}' is a keyword and cannot name a declaration", name));
  if (is_reserved_word(name)) error(t.loc, fmt::format("'{}' is a reserved word in WGSL", name));
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_')
    error(t.loc, fmt::format("identifiers starting with '__' are reserved: '{}'", name));
  return name;
}

void Parser::global_decl() {
  if (accept(";")) return;
  std::vector<Attr> attrs = attributes();
  Decl* d = nullptr;
  if (is_kw("var")) {
    d = var_decl(std::move(attrs), true);
    expect(";", "after the variable declaration");
  } else if (is_kw("override")) {
    d = value_decl(DeclKind::override_, std::move(attrs));
    expect(";", "after the override declaration");
  } else if (is_kw("const")) {
    d = value_decl(DeclKind::const_, std::move(attrs));
    expect(";", "after the const declaration");
  } else if (is_kw("alias")) {
    d = m_.new_decl(DeclKind::alias, next().loc);
    d->name = declared_name("after 'alias'");
    expect("=", "in the alias declaration");
    d->type_expr = type_specifier();
    expect(";", "after the alias declaration");
  } else if (is_kw("struct")) {
    d = struct_decl();
  } else if (is_kw("fn")) {
    d = fn_decl(std::move(attrs));
  } else if (is_kw("const_assert")) {
    d = m_.new_decl(DeclKind::const_assert, next().loc);
    d->init = expression();
    expect(";", "after const_assert");
  } else {
    error_here("a declaration (fn, var, const, override, struct, alias, const_assert)");
  }
  d->module_scope = true;
  m_.globals.push_back(d);
}

Decl* Parser::var_decl(std::vector<Attr> attrs, bool module_scope) {
  Decl* d = m_.new_decl(DeclKind::var, next().loc);
  d->attrs = std::move(attrs);
  if (peek().kind == Tok::tmpl_start) d->var_tmpl = template_list();
  d->loc = peek().loc;
  d->name = declared_name("naming the variable");
  if (accept(":")) d->type_expr = type_specifier();
  if (accept("=")) d->init = expression();
  d->module_scope = module_scope;
  return d;
}

Decl* Parser::value_decl(DeclKind kind, std::vector<Attr> attrs) {
  Token kw = next();
  Decl* d = m_.new_decl(kind, peek().loc);
  d->attrs = std::move(attrs);
  d->name = declared_name(fmt::format("after '{}'", kw.text));
  if (accept(":")) d->type_expr = type_specifier();
  if (accept("=")) {
    d->init = expression();
  } else if (kind != DeclKind::override_) {
    error_here(fmt::format("'=' and an initializer ('{}' declarations need one)", kw.text));
  }
  return d;
}

Decl* Parser::struct_decl() {
  next();
  Decl* d = m_.new_decl(DeclKind::struct_, peek().loc);
  d->name = declared_name("naming the struct");
  expect("{", "to open the struct body");
  while (!is("}")) {
    StructMember mem;
    mem.attrs = attributes();
    mem.loc = peek().loc;
    mem.name = declared_name("naming a struct member");
    expect(":", "after the member name");
    mem.type_expr = type_specifier();
    d->members.push_back(std::move(mem));
    if (!accept(",")) break;
  }
  expect("}", "to close the struct body");
  accept(";");  // tolerated, as Tint and naga do
  if (d->members.empty()) error(d->loc, fmt::format("struct '{}' has no members", d->name));
  return d;
}

Decl* Parser::fn_decl(std::vector<Attr> attrs) {
  next();
  Decl* d = m_.new_decl(DeclKind::fn, peek().loc);
  d->attrs = std::move(attrs);
  d->name = declared_name("naming the function");
  expect("(", "to open the parameter list");
  while (!is(")")) {
    std::vector<Attr> pattrs = attributes();
    Decl* p = m_.new_decl(DeclKind::param, peek().loc);
    p->attrs = std::move(pattrs);
    p->name = declared_name("naming a parameter");
    expect(":", "after the parameter name");
    p->type_expr = type_specifier();
    d->params.push_back(p);
    if (!accept(",")) break;
  }
  expect(")", "to close the parameter list");
  if (accept("->")) {
    d->ret_attrs = attributes();
    d->ret_type = type_specifier();
  }
  d->body = compound();
  return d;
}

Stmt* Parser::compound() {
  Depth guard(*this);
  Stmt* b = m_.new_stmt(StmtKind::block, peek().loc);
  expect("{", "to open a block");
  while (!is("}") && peek().kind != Tok::eof) {
    try {
      if (is_kw("continuing")) error(peek().loc, "'continuing' is only allowed as the last part of a loop");
      if (Stmt* s = statement()) b->stmts.push_back(s);
    } catch (const Abort&) {
      if (d_.full()) throw;
      recover_statement();
    }
  }
  expect("}", "to close the block");
  return b;
}

Stmt* Parser::statement() {
  Depth guard(*this);
  if (accept(";")) return nullptr;
  if (is("{")) return compound();
  if (is("@")) attributes();  // statement attributes (@diagnostic): accepted, not acted on
  Loc loc = peek().loc;
  if (is_kw("if")) return if_stmt();
  if (is_kw("switch")) return switch_stmt();
  if (is_kw("loop")) return loop_stmt();
  if (is_kw("for")) return for_stmt();
  if (is_kw("while")) return while_stmt();
  if (accept_kw("return")) {
    Stmt* s = m_.new_stmt(StmtKind::return_, loc);
    if (!is(";")) s->lhs = expression();
    expect(";", "after return");
    return s;
  }
  if (accept_kw("break")) {
    Stmt* s = m_.new_stmt(StmtKind::break_, loc);
    if (accept_kw("if")) {
      s->kind = StmtKind::break_if;
      s->lhs = expression();
    }
    expect(";", "after break");
    return s;
  }
  if (accept_kw("continue")) {
    expect(";", "after continue");
    return m_.new_stmt(StmtKind::continue_, loc);
  }
  if (is_kw("discard")) error(loc, "'discard' is only allowed in fragment shaders");
  if (accept_kw("const_assert")) {
    Stmt* s = m_.new_stmt(StmtKind::const_assert, loc);
    s->decl = m_.new_decl(DeclKind::const_assert, loc);
    s->decl->init = expression();
    expect(";", "after const_assert");
    return s;
  }
  return simple_statement(true);
}

Stmt* Parser::simple_statement(bool semi) {
  Loc loc = peek().loc;
  Stmt* s = nullptr;
  if (is_kw("var")) {
    s = m_.new_stmt(StmtKind::decl, loc);
    s->decl = var_decl({}, false);
  } else if (is_kw("let") || is_kw("const")) {
    s = m_.new_stmt(StmtKind::decl, loc);
    s->decl = value_decl(is_kw("let") ? DeclKind::let : DeclKind::const_, {});
  } else if (is_kw("_") && peek(1).kind == Tok::punct && peek(1).text == "=") {
    next();
    next();
    s = m_.new_stmt(StmtKind::phony, loc);
    s->lhs = expression();
  } else {
    Expr* lhs = unary();
    static const char* kAssignOps[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ">>=", "<<="};
    for (const char* op : kAssignOps) {
      if (is(op)) {
        s = m_.new_stmt(StmtKind::assign, next().loc);
        s->op = op;
        s->lhs = lhs;
        s->rhs = expression();
        break;
      }
    }
    if (!s && (is("++") || is("--"))) {
      s = m_.new_stmt(StmtKind::incdec, next().loc);
      s->op = t_[pos_ - 1].text;
      s->lhs = lhs;
    }
    if (!s) {
      if (lhs->kind != ExprKind::call) error_here("an assignment, '++', '--' or a function call statement");
      s = m_.new_stmt(StmtKind::expr, loc);
      s->lhs = lhs;
    }
  }
  if (semi) expect(";", "after the statement");
  return s;
}

Stmt* Parser::if_stmt() {
  Stmt* s = m_.new_stmt(StmtKind::if_, next().loc);
  s->lhs = expression();
  s->then = compound();
  if (accept_kw("else")) s->els = is_kw("if") ? if_stmt() : compound();
  return s;
}

Stmt* Parser::switch_stmt() {
  Stmt* s = m_.new_stmt(StmtKind::switch_, next().loc);
  s->lhs = expression();
  attributes();
  expect("{", "to open the switch body");
  while (!is("}")) {
    SwitchCase c;
    c.loc = peek().loc;
    if (accept_kw("default")) {
      c.is_default = true;
    } else {
      expect_kw("case", "or 'default' in the switch body");
      while (!is(":") && !is("{")) {
        if (accept_kw("default"))
          c.is_default = true;
        else
          c.selectors.push_back(expression());
        if (!accept(",")) break;
      }
    }
    accept(":");
    c.body = compound();
    s->cases.push_back(std::move(c));
  }
  expect("}", "to close the switch body");
  return s;
}

Stmt* Parser::loop_stmt() {
  Stmt* s = m_.new_stmt(StmtKind::loop, next().loc);
  attributes();
  Stmt* body = m_.new_stmt(StmtKind::block, peek().loc);
  expect("{", "to open the loop body");
  while (!is("}") && peek().kind != Tok::eof) {
    if (is_kw("continuing")) {
      next();
      attributes();
      s->els = compound();
      break;
    }
    try {
      if (Stmt* st = statement()) body->stmts.push_back(st);
    } catch (const Abort&) {
      if (d_.full()) throw;
      recover_statement();
    }
  }
  expect("}", "to close the loop (nothing may follow 'continuing')");
  s->then = body;
  return s;
}

Stmt* Parser::for_stmt() {
  Stmt* s = m_.new_stmt(StmtKind::for_, next().loc);
  expect("(", "after 'for'");
  if (!is(";")) s->init = simple_statement(false);
  expect(";", "after the for-loop initializer");
  if (!is(";")) s->lhs = expression();
  expect(";", "after the for-loop condition");
  if (!is(")")) s->update = simple_statement(false);
  expect(")", "to close the for-loop header");
  s->then = compound();
  return s;
}

Stmt* Parser::while_stmt() {
  Stmt* s = m_.new_stmt(StmtKind::while_, next().loc);
  s->lhs = expression();
  s->then = compound();
  return s;
}

}  // namespace bs::wgsl
