// Expressions, attributes and template lists. The expression grammar is WGSL's: relational
// operators do not chain, and mixing bitwise operators (or a bitwise with a logical one) needs
// parentheses.
#include <fmt/format.h>

#include <array>
#include <algorithm>

#include "runtime/wgsl/parser_impl.h"

namespace bs::wgsl {

namespace {
constexpr int kMaxDepth = 200;

constexpr std::string_view kKeywords[] = {
    "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic",
    "discard", "else", "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires",
    "return", "struct", "switch", "true", "var", "while", "_"};

constexpr std::string_view kReserved[] = {
    "NULL", "Self", "abstract", "active", "alignas", "alignof", "as", "asm", "asm_fragment", "async",
    "attribute", "auto", "await", "become", "cast", "catch", "class", "co_await", "co_return", "co_yield",
    "coherent", "column_major", "common", "compile", "compile_fragment", "concept", "const_cast",
    "consteval", "constexpr", "constinit", "crate", "debugger", "decltype", "delete", "demote",
    "demote_to_helper", "do", "dynamic_cast", "enum", "explicit", "export", "extends", "extern",
    "external", "fallthrough", "filter", "final", "finally", "friend", "from", "fxgroup", "get", "goto",
    "groupshared", "highp", "impl", "implements", "import", "inline", "instanceof", "interface",
    "layout", "lowp", "macro", "macro_rules", "match", "mediump", "meta", "mod", "module", "move", "mut",
    "mutable", "namespace", "new", "nil", "noexcept", "noinline", "nointerpolation", "non_coherent",
    "noncoherent", "noperspective", "null", "nullptr", "of", "operator", "package", "packoffset",
    "partition", "pass", "patch", "pixelfragment", "precise", "precision", "premerge", "priv",
    "protected", "pub", "public", "readonly", "ref", "regardless", "register", "reinterpret_cast",
    "require", "resource", "restrict", "self", "set", "shared", "sizeof", "smooth", "snorm", "static",
    "static_assert", "static_cast", "std", "subroutine", "super", "target", "template", "this",
    "thread_local", "throw", "trait", "try", "type", "typedef", "typeid", "typename", "typeof", "union",
    "unless", "unorm", "unsafe", "unsized", "use", "using", "varying", "virtual", "volatile", "wgsl",
    "where", "with", "writeonly", "yield"};
}  // namespace

bool is_keyword(std::string_view n) { return std::find(std::begin(kKeywords), std::end(kKeywords), n) != std::end(kKeywords); }
bool is_reserved_word(std::string_view n) {
  return std::find(std::begin(kReserved), std::end(kReserved), n) != std::end(kReserved);
}

Parser::Depth::Depth(Parser& pp) : p(pp) {
  if (++p.depth_ > kMaxDepth) p.error(p.peek().loc, "expression or statement nesting is too deep");
}

void Parser::error(Loc loc, std::string msg) {
  d_.error(loc, std::move(msg));
  throw Abort{};
}

void Parser::error_here(std::string_view expected) {
  const Token& t = peek();
  std::string got = t.kind == Tok::eof ? "end of file" : fmt::format("'{}'", t.text);
  error(t.loc, fmt::format("expected {}, found {}", expected, got));
}

bool Parser::accept(std::string_view text) {
  if (!is(text)) return false;
  next();
  return true;
}
bool Parser::accept_kw(std::string_view kw) {
  if (!is_kw(kw)) return false;
  next();
  return true;
}
void Parser::expect(std::string_view text, std::string_view context) {
  if (!accept(text)) error_here(fmt::format("'{}' {}", text, context));
}
void Parser::expect_kw(std::string_view kw, std::string_view context) {
  if (!accept_kw(kw)) error_here(fmt::format("'{}' {}", kw, context));
}
std::string Parser::expect_ident(std::string_view context) {
  if (peek().kind != Tok::ident) error_here(fmt::format("an identifier {}", context));
  return next().text;
}

std::vector<Expr*> Parser::template_list() {
  if (peek().kind != Tok::tmpl_start) error_here("'<'");
  next();
  std::vector<Expr*> out;
  while (peek().kind != Tok::tmpl_end) {
    out.push_back(expression());
    if (!accept(",")) break;
  }
  if (peek().kind != Tok::tmpl_end) error_here("'>' closing the template list");
  next();
  return out;
}

Expr* Parser::type_specifier() {
  Loc loc = peek().loc;
  std::string name = expect_ident("naming a type");
  Expr* e = m_.new_expr(ExprKind::ident, loc);
  e->name = std::move(name);
  if (peek().kind == Tok::tmpl_start) e->tmpl = template_list();
  return e;
}

std::vector<Expr*> Parser::call_args() {
  expect("(", "to start the argument list");
  std::vector<Expr*> out;
  while (!is(")")) {
    out.push_back(expression());
    if (!accept(",")) break;
  }
  expect(")", "to close the argument list");
  return out;
}

std::vector<Attr> Parser::attributes() {
  std::vector<Attr> out;
  while (is("@")) {
    Attr a;
    a.loc = next().loc;
    a.name = expect_ident("after '@'");
    if (is("(")) a.args = call_args();
    out.push_back(std::move(a));
  }
  return out;
}

Expr* Parser::primary_with_postfix() {
  Depth guard(*this);
  const Token& t = peek();
  Expr* e = nullptr;
  if (t.kind == Tok::int_lit || t.kind == Tok::float_lit) {
    e = m_.new_expr(ExprKind::literal, t.loc);
    e->lit = t.kind == Tok::int_lit ? 1 : 2;
    e->name = next().text;
  } else if (t.kind == Tok::ident && (t.text == "true" || t.text == "false")) {
    e = m_.new_expr(ExprKind::literal, t.loc);
    e->lit = 3;
    e->name = next().text;
  } else if (t.kind == Tok::ident) {
    if (t.text == "_" ) error(t.loc, "'_' can only be used on the left of a phony assignment");
    e = type_specifier();
    if (is("(")) {
      e->kind = ExprKind::call;
      e->args = call_args();
    }
  } else if (accept("(")) {
    e = expression();
    expect(")", "to close the parenthesized expression");
  } else {
    error_here("an expression");
  }
  while (true) {
    if (is("[")) {
      Loc loc = next().loc;
      Expr* idx = m_.new_expr(ExprKind::index, loc);
      idx->args = {e, expression()};
      expect("]", "to close the index");
      e = idx;
    } else if (is(".")) {
      Loc loc = next().loc;
      Expr* mem = m_.new_expr(ExprKind::member, loc);
      mem->name = expect_ident("after '.'");
      mem->args = {e};
      e = mem;
    } else {
      return e;
    }
  }
}

Expr* Parser::unary() {
  Depth guard(*this);
  if (is("-") || is("!") || is("~") || is("*") || is("&")) {
    Token op = next();
    Expr* e = m_.new_expr(ExprKind::unary, op.loc);
    e->name = op.text;
    e->args = {unary()};
    return e;
  }
  if (is("&&")) {  // "&&x" is '&' '&' x: address-of an address-of, which the resolver rejects
    Token op = next();
    // assign(1, '&'), not = "&": gcc 12 at -O3 reports a false -Wrestrict overlap for the literal's copy.
    Expr* inner = m_.new_expr(ExprKind::unary, op.loc);
    inner->name.assign(1, '&');
    inner->args = {unary()};
    Expr* e = m_.new_expr(ExprKind::unary, op.loc);
    e->name.assign(1, '&');
    e->args = {inner};
    return e;
  }
  return primary_with_postfix();
}

namespace {
Expr* binary(Module& m, const Token& op, Expr* l, Expr* r) {
  Expr* e = m.new_expr(ExprKind::binary, op.loc);
  e->name = op.text;
  e->args = {l, r};
  return e;
}
bool is_relational(const Token& t) {
  return t.kind == Tok::punct &&
         (t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">=" || t.text == "==" || t.text == "!=");
}
}  // namespace

Expr* Parser::expression() {
  Depth guard(*this);
  Expr* l = unary();
  if (is("&") || is("|") || is("^")) {
    std::string op = peek().text;
    while (is(op)) {
      Token t = next();
      l = binary(m_, t, l, unary());
    }
    if (is("&") || is("|") || is("^") || is("&&") || is("||"))
      error(peek().loc, fmt::format("mixing '{}' with '{}' needs parentheses", op, peek().text));
    return l;
  }
  // multiplicative, additive, shift, relational, starting from the unary already parsed.
  auto multiplicative = [&](Expr* u) {
    while (is("*") || is("/") || is("%")) {
      Token t = next();
      u = binary(m_, t, u, unary());
    }
    return u;
  };
  auto shift_or_additive = [&](Expr* u) {
    if (is("<<") || is(">>")) {
      Token t = next();
      return binary(m_, t, u, unary());
    }
    Expr* a = multiplicative(u);
    while (is("+") || is("-")) {
      Token t = next();
      a = binary(m_, t, a, multiplicative(unary()));
    }
    return a;
  };
  auto relational = [&](Expr* u) {
    Expr* s = shift_or_additive(u);
    if (is_relational(peek())) {
      Token t = next();
      s = binary(m_, t, s, shift_or_additive(unary()));
      if (is_relational(peek())) error(peek().loc, "comparisons do not chain; add parentheses");
    }
    return s;
  };
  l = relational(l);
  if (is("&&") || is("||")) {
    std::string op = peek().text;
    while (is(op)) {
      Token t = next();
      l = binary(m_, t, l, relational(unary()));
    }
    if (is("&&") || is("||")) error(peek().loc, "mixing '&&' and '||' needs parentheses");
  }
  return l;
}

const Attr* find_attr(const std::vector<Attr>& attrs, std::string_view name) {
  for (const auto& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace bs::wgsl
