// Recursive-descent parser for Jinja, with Jinja2's operator precedence:
//   cond (a if c else b) < or < and < not < comparisons/in < + - < ~ < * / // % < ** < unary,
// and filters/tests binding to the unary operand ("-x|abs" is "(-x)|abs").
#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja_ast.h"
#include "runtime/tokenizer/jinja_lexer.h"

namespace bs::tok::jinja {

namespace {

using K = Token::Kind;

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& name) : t_(std::move(tokens)), name_(name) {}

  Body parse_all() {
    Body body = parse_body({});
    if (peek().kind != K::eof) error(peek(), fmt::format("unexpected '{}'", peek().s));
    return body;
  }

 private:
  const Token& peek(size_t k = 0) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = peek();
    if (i_ < t_.size() - 1) ++i_;
    return t;
  }
  [[noreturn]] void error(const Token& at, const std::string& msg) const {
    fail("{}:{}:{}: {}", name_, at.pos.line, at.pos.col, msg);
  }
  bool is_op(const char* op, size_t k = 0) const { return peek(k).kind == K::op && peek(k).s == op; }
  bool is_name(const char* n, size_t k = 0) const { return peek(k).kind == K::name && peek(k).s == n; }
  bool accept_op(const char* op) { return is_op(op) && (next(), true); }
  bool accept_name(const char* n) { return is_name(n) && (next(), true); }
  void expect_op(const char* op) {
    if (!accept_op(op)) error(peek(), fmt::format("expected '{}', got '{}'", op, describe(peek())));
  }
  std::string expect_name() {
    if (peek().kind != K::name) error(peek(), fmt::format("expected a name, got '{}'", describe(peek())));
    return next().s;
  }
  void expect_block_end() {
    if (peek().kind != K::block_end) error(peek(), fmt::format("expected '%}}', got '{}'", describe(peek())));
    next();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case K::eof: return "end of template";
      case K::block_end: return "%}";
      case K::var_end: return "}}";
      case K::text: return "text";
      default: return t.s;
    }
  }

  ExprPtr make(Expr::Kind k, Pos p) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->pos = p;
    return e;
  }
  std::unique_ptr<Stmt> make_stmt(Stmt::Kind k, Pos p) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->pos = p;
    return s;
  }

  // Statements until a {% NAME %} whose NAME is in `stop`; leaves the parser on that NAME.
  Body parse_body(std::initializer_list<const char*> stop) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == K::eof) {
        if (stop.size() == 0) return body;
        error(t, fmt::format("unexpected end of template; expected {{% {} %}}", *stop.begin()));
      }
      if (t.kind == K::text) {
        auto s = make_stmt(Stmt::Kind::text, t.pos);
        s->text = next().s;
        body.push_back(std::move(s));
      } else if (t.kind == K::var_begin) {
        auto s = make_stmt(Stmt::Kind::output, next().pos);
        s->expr = parse_expression();
        if (peek().kind != K::var_end) error(peek(), fmt::format("expected '}}}}', got '{}'", describe(peek())));
        next();
        body.push_back(std::move(s));
      } else if (t.kind == K::block_begin) {
        const Token& kw = peek(1);
        if (kw.kind != K::name) error(kw, "expected a statement name after '{%'");
        for (const char* s : stop)
          if (kw.s == s) {
            next();
            return body;
          }
        next();
        body.push_back(parse_statement());
      } else {
        error(t, fmt::format("unexpected '{}'", describe(t)));
      }
    }
  }

  std::unique_ptr<Stmt> parse_statement() {
    Nest nest(*this);
    nest.step();
    const Token& kw = next();
    Pos p = kw.pos;
    std::string k = kw.s;
    if (k == "if") return parse_if(p);
    if (k == "for") return parse_for(p);
    if (k == "set") return parse_set(p);
    if (k == "macro") return parse_macro(p);
    if (k == "break" || k == "continue") {
      expect_block_end();
      return make_stmt(k == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_, p);
    }
    if (k == "filter") {
      auto s = make_stmt(Stmt::Kind::filter_block, p);
      s->expr = parse_filter(nullptr);
      expect_block_end();
      s->body = parse_body({"endfilter"});
      next();
      expect_block_end();
      return s;
    }
    if (k == "generation") {  // HF's assistant-mask marker: renders its body unchanged
      expect_block_end();
      auto s = make_stmt(Stmt::Kind::if_, p);
      s->branches.emplace_back(literal(Value(true), p), parse_body({"endgeneration"}));
      next();
      expect_block_end();
      return s;
    }
    error(kw, fmt::format("unknown or unsupported statement '{}'", k));
  }

  ExprPtr literal(Value v, Pos p) {
    auto e = make(Expr::Kind::literal, p);
    e->value = std::move(v);
    return e;
  }

  std::unique_ptr<Stmt> parse_if(Pos p) {
    auto s = make_stmt(Stmt::Kind::if_, p);
    while (true) {
      ExprPtr cond = parse_expression();
      expect_block_end();
      Body body = parse_body({"elif", "else", "endif"});
      s->branches.emplace_back(std::move(cond), std::move(body));
      std::string k = next().s;
      if (k == "elif") continue;
      if (k == "else") {
        expect_block_end();
        s->else_body = parse_body({"endif"});
        next();
      }
      expect_block_end();
      return s;
    }
  }

  std::unique_ptr<Stmt> parse_for(Pos p) {
    auto s = make_stmt(Stmt::Kind::for_, p);
    do {
      s->targets.push_back(expect_name());
    } while (accept_op(","));
    if (!accept_name("in")) error(peek(), fmt::format("expected 'in' in for loop, got '{}'", describe(peek())));
    s->expr = parse_or();  // no conditional expression: a following "if" filters the loop
    if (accept_name("if")) s->cond = parse_expression();
    if (is_name("recursive")) error(peek(), "recursive loops are not supported");
    expect_block_end();
    s->body = parse_body({"else", "endfor"});
    if (next().s == "else") {
      expect_block_end();
      s->else_body = parse_body({"endfor"});
      next();
    }
    expect_block_end();
    return s;
  }

  std::unique_ptr<Stmt> parse_set(Pos p) {
    std::string first = expect_name();
    if (accept_op(".")) {
      auto s = make_stmt(Stmt::Kind::set, p);
      s->attr_target = true;
      s->targets = {first, expect_name()};
      expect_op("=");
      s->expr = parse_expression();
      expect_block_end();
      return s;
    }
    if (peek().kind == K::block_end) {
      next();
      auto s = make_stmt(Stmt::Kind::set_block, p);
      s->text = first;
      s->body = parse_body({"endset"});
      next();
      expect_block_end();
      return s;
    }
    auto s = make_stmt(Stmt::Kind::set, p);
    s->targets.push_back(first);
    while (accept_op(",")) s->targets.push_back(expect_name());
    expect_op("=");
    s->expr = parse_tuple_or_expression();
    expect_block_end();
    return s;
  }

  std::unique_ptr<Stmt> parse_macro(Pos p) {
    auto s = make_stmt(Stmt::Kind::macro, p);
    s->text = expect_name();
    expect_op("(");
    while (!accept_op(")")) {
      std::string param = expect_name();
      ExprPtr def;
      if (accept_op("=")) def = parse_expression();
      s->params.emplace_back(param, std::move(def));
      if (!is_op(")")) expect_op(",");
    }
    expect_block_end();
    s->body = parse_body({"endmacro"});
    next();
    if (peek().kind == K::name) next();  // {% endmacro name %}
    expect_block_end();
    return s;
  }

  // "a, b" on the right of set builds a tuple.
  ExprPtr parse_tuple_or_expression() {
    Pos p = peek().pos;
    ExprPtr e = parse_expression();
    if (!is_op(",")) return e;
    auto t = make(Expr::Kind::tuple, p);
    t->args.push_back(std::move(e));
    while (accept_op(",")) {
      if (peek().kind == K::block_end) break;
      t->args.push_back(parse_expression());
    }
    return t;
  }

 public:
  ExprPtr parse_expression() {
    Nest nest(*this);
    ExprPtr e = parse_or();
    while (is_name("if")) {
      nest.step();
      Pos p = next().pos;
      auto c = make(Expr::Kind::cond, p);
      c->args.push_back(std::move(e));
      c->args.push_back(parse_or());
      c->args.push_back(accept_name("else") ? parse_expression() : nullptr);
      e = std::move(c);
    }
    return e;
  }

 private:
  ExprPtr binary(std::string op, ExprPtr l, ExprPtr r, Pos p) {
    auto e = make(Expr::Kind::binary, p);
    e->name = std::move(op);
    e->args.push_back(std::move(l));
    e->args.push_back(std::move(r));
    return e;
  }
  ExprPtr unary(std::string op, ExprPtr x, Pos p) {
    auto e = make(Expr::Kind::unary, p);
    e->name = std::move(op);
    e->args.push_back(std::move(x));
    return e;
  }

  ExprPtr parse_or() {
    Nest nest(*this);
    ExprPtr e = parse_and();
    while (is_name("or")) {
      nest.step();
      Pos p = next().pos;
      e = binary("or", std::move(e), parse_and(), p);
    }
    return e;
  }
  ExprPtr parse_and() {
    Nest nest(*this);
    ExprPtr e = parse_not();
    while (is_name("and")) {
      nest.step();
      Pos p = next().pos;
      e = binary("and", std::move(e), parse_not(), p);
    }
    return e;
  }
  ExprPtr parse_not() {
    Nest nest(*this);
    if (is_name("not")) {
      nest.step();
      Pos p = next().pos;
      return unary("not", parse_not(), p);
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    Nest nest(*this);
    ExprPtr e = parse_math1();
    while (true) {
      Pos p = peek().pos;
      std::string op;
      if (peek().kind == K::op && (peek().s == "==" || peek().s == "!=" || peek().s == "<" || peek().s == "<=" ||
                                   peek().s == ">" || peek().s == ">=")) {
        op = next().s;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        return e;
      }
      nest.step();
      e = binary(op, std::move(e), parse_math1(), p);
    }
  }
  ExprPtr parse_math1() {
    Nest nest(*this);
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      nest.step();
      const Token& t = next();
      e = binary(t.s, std::move(e), parse_concat(), t.pos);
    }
    return e;
  }
  ExprPtr parse_concat() {
    Nest nest(*this);
    ExprPtr e = parse_math2();
    while (is_op("~")) {
      nest.step();
      Pos p = next().pos;
      e = binary("~", std::move(e), parse_math2(), p);
    }
    return e;
  }
  ExprPtr parse_math2() {
    Nest nest(*this);
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      nest.step();
      const Token& t = next();
      e = binary(t.s, std::move(e), parse_pow(), t.pos);
    }
    return e;
  }
  ExprPtr parse_pow() {
    Nest nest(*this);
    ExprPtr e = parse_unary(true);
    while (is_op("**")) {
      nest.step();
      Pos p = next().pos;
      e = binary("**", std::move(e), parse_unary(true), p);
    }
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    Nest nest(*this);
    nest.step();
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = unary(t.s, parse_unary(false), t.pos);
    } else {
      e = parse_postfix(parse_primary());
    }
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case K::name: {
        next();
        if (t.s == "true" || t.s == "True") return literal(Value(true), t.pos);
        if (t.s == "false" || t.s == "False") return literal(Value(false), t.pos);
        if (t.s == "none" || t.s == "None") return literal(Value(nullptr), t.pos);
        auto e = make(Expr::Kind::name, t.pos);
        e->name = t.s;
        return e;
      }
      case K::string: {
        std::string s = next().s;
        while (peek().kind == K::string) s += next().s;  // adjacent literals concatenate
        return literal(Value(std::move(s)), t.pos);
      }
      case K::integer: next(); return literal(Value(t.i), t.pos);
      case K::real: next(); return literal(Value(t.d), t.pos);
      case K::op:
        if (t.s == "(") {
          next();
          if (accept_op(")")) return make(Expr::Kind::tuple, t.pos);
          ExprPtr e = parse_expression();
          if (accept_op(")")) return e;
          auto tup = make(Expr::Kind::tuple, t.pos);
          tup->args.push_back(std::move(e));
          while (accept_op(",")) {
            if (is_op(")")) break;
            tup->args.push_back(parse_expression());
          }
          expect_op(")");
          return tup;
        }
        if (t.s == "[") {
          next();
          auto e = make(Expr::Kind::list, t.pos);
          while (!accept_op("]")) {
            e->args.push_back(parse_expression());
            if (!is_op("]")) expect_op(",");
          }
          return e;
        }
        if (t.s == "{") {
          next();
          auto e = make(Expr::Kind::dict, t.pos);
          while (!accept_op("}")) {
            e->args.push_back(parse_expression());
            expect_op(":");
            e->args.push_back(parse_expression());
            if (!is_op("}")) expect_op(",");
          }
          return e;
        }
        break;
      default: break;
    }
    error(t, fmt::format("expected an expression, got '{}'", describe(t)));
  }

  void parse_call_args(Expr& e) {
    while (!accept_op(")")) {
      if (peek().kind == K::name && is_op("=", 1)) {
        std::string k = next().s;
        next();
        e.kwargs.emplace_back(k, parse_expression());
      } else {
        if (!e.kwargs.empty()) error(peek(), "positional argument follows keyword argument");
        e.args.push_back(parse_expression());
      }
      if (!is_op(")")) expect_op(",");
    }
  }

  ExprPtr parse_postfix(ExprPtr e) {
    Nest nest(*this);
    while (true) {
      nest.step();
      const Token& t = peek();
      if (is_op(".")) {
        next();
        auto a = make(Expr::Kind::attr, t.pos);
        if (peek().kind == K::integer) {  // foo.0 is foo[0]
          a->kind = Expr::Kind::index;
          a->args.push_back(std::move(e));
          a->args.push_back(literal(Value(next().i), t.pos));
        } else {
          a->name = expect_name();
          a->args.push_back(std::move(e));
        }
        e = std::move(a);
      } else if (is_op("[")) {
        next();
        e = parse_subscript(std::move(e), t.pos);
      } else if (is_op("(")) {
        next();
        auto c = make(Expr::Kind::call, t.pos);
        c->args.push_back(std::move(e));
        parse_call_args(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, Pos p) {
    ExprPtr parts[3];
    int n = 0;
    bool slice = false;
    while (true) {
      if (is_op(":")) {
        next();
        slice = true;
        if (++n > 2) error(peek(), "too many ':' in slice");
        continue;
      }
      if (is_op("]")) break;
      if (parts[n]) error(peek(), "expected ':' or ']'");
      parts[n] = parse_expression();
    }
    next();
    if (!slice) {
      if (!parts[0]) error(peek(), "empty subscript");
      auto e = make(Expr::Kind::index, p);
      e->args.push_back(std::move(obj));
      e->args.push_back(std::move(parts[0]));
      return e;
    }
    auto e = make(Expr::Kind::slice, p);
    e->args.push_back(std::move(obj));
    for (auto& part : parts) e->args.push_back(std::move(part));
    return e;
  }

  // x | f(args) | g and x is [not] test(args), in any order.
  ExprPtr parse_filter_expr(ExprPtr e) {
    Nest nest(*this);
    while (true) {
      nest.step();
      if (is_op("|")) {
        next();
        e = parse_filter(std::move(e));
      } else if (is_name("is")) {
        Pos p = next().pos;
        auto t = make(Expr::Kind::test, p);
        t->negated = accept_name("not");
        t->name = expect_name();
        t->args.push_back(std::move(e));
        if (accept_op("(")) {
          parse_call_args(*t);
        } else if (starts_test_arg()) {
          t->args.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  // "x is divisibleby 3", "x is sameas none": one bare argument.
  bool starts_test_arg() const {
    const Token& t = peek();
    if (t.kind == K::string || t.kind == K::integer || t.kind == K::real) return true;
    if (t.kind == K::name)
      return !(t.s == "else" || t.s == "or" || t.s == "and" || t.s == "if" || t.s == "in" || t.s == "is" ||
               t.s == "not");
    return t.kind == K::op && (t.s == "[" || t.s == "{");
  }

  ExprPtr parse_filter(ExprPtr subject) {
    Pos p = peek().pos;
    auto f = make(Expr::Kind::filter, p);
    f->name = expect_name();
    while (accept_op(".")) f->name += "." + expect_name();
    f->args.push_back(std::move(subject));
    if (accept_op("(")) parse_call_args(*f);
    return f;
  }

  // Bounds the parse (and later evaluation) recursion: nesting and operator chains together.
  static constexpr int kMaxDepth = 256;
  struct Nest {
    Parser& p;
    int saved;
    explicit Nest(Parser& parser) : p(parser), saved(parser.depth_) {}
    ~Nest() { p.depth_ = saved; }
    void step() {
      if (++p.depth_ > kMaxDepth) p.error(p.peek(), "expression or block nested too deeply");
    }
  };

  std::vector<Token> t_;
  const std::string& name_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

std::shared_ptr<Program> parse_template(std::string_view source, const std::string& name) {
  auto prog = std::make_shared<Program>();
  prog->name = name;
  Parser parser(lex_template(source, name), name);
  prog->body = parser.parse_all();
  return prog;
}

}  // namespace bs::tok::jinja
