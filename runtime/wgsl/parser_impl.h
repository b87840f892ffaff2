// Recursive-descent parser internals, shared by parser.cpp (directives, declarations, statements)
// and parser_expr.cpp (expressions, attributes, template lists).
#pragma once
#include <string_view>

#include "runtime/wgsl/ast.h"
#include "runtime/wgsl/token.h"

namespace bs::wgsl {

class Parser {
 public:
  Parser(Module& m, Diagnostics& d, std::vector<Token> toks) : m_(m), d_(d), t_(std::move(toks)) {}
  void parse_translation_unit();

  // Expressions (parser_expr.cpp).
  Expr* expression();
  Expr* unary();
  Expr* primary_with_postfix();
  Expr* type_specifier();  // ident with an optional template list
  std::vector<Expr*> template_list();
  std::vector<Attr> attributes();
  std::vector<Expr*> call_args();

  // Token helpers.
  const Token& peek(size_t k = 0) const { return t_[std::min(pos_ + k, t_.size() - 1)]; }
  bool is(std::string_view text) const { return peek().kind == Tok::punct && peek().text == text; }
  bool is_kw(std::string_view kw) const { return peek().kind == Tok::ident && peek().text == kw; }
  bool accept(std::string_view text);
  bool accept_kw(std::string_view kw);
  void expect(std::string_view text, std::string_view context);
  void expect_kw(std::string_view kw, std::string_view context);
  std::string expect_ident(std::string_view context);
  Token next() { Token t = peek(); if (pos_ + 1 < t_.size()) ++pos_; return t; }
  [[noreturn]] void error(Loc loc, std::string msg);
  [[noreturn]] void error_here(std::string_view expected);

  // Guards recursion so deeply nested input cannot exhaust the stack.
  struct Depth {
    Parser& p;
    explicit Depth(Parser& pp);
    ~Depth() { --p.depth_; }
  };

  Module& m_;
  Diagnostics& d_;

 private:
  // Declarations and statements (parser.cpp).
  void directive();
  void global_decl();
  Decl* var_decl(std::vector<Attr> attrs, bool module_scope);
  Decl* value_decl(DeclKind kind, std::vector<Attr> attrs);
  Decl* struct_decl();
  Decl* fn_decl(std::vector<Attr> attrs);
  Stmt* compound();
  Stmt* statement();
  Stmt* simple_statement(bool need_semicolon);  // assignment, ++/--, call, declaration
  Stmt* if_stmt();
  Stmt* switch_stmt();
  Stmt* loop_stmt();
  Stmt* for_stmt();
  Stmt* while_stmt();
  void recover_global();
  void recover_statement();
  std::string declared_name(std::string_view context);

  std::vector<Token> t_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool is_reserved_word(std::string_view name);
bool is_keyword(std::string_view name);

}  // namespace bs::wgsl
