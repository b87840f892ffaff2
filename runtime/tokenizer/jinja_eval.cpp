// The Jinja evaluator: walks the parsed template with Python semantics and Jinja's scoping
// (a for loop body gets a fresh scope each iteration; if does not scope; namespace() objects
// are the way to carry state out of a loop; macros see the globals and their arguments).
#include <algorithm>
#include <climits>
#include <cmath>
#include <unordered_map>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja.h"
#include "runtime/tokenizer/jinja_ast.h"
#include "runtime/tokenizer/jinja_builtins.h"

namespace bs::tok {
namespace jinja {

namespace {

// A runtime error that already names its template location.
class LocatedError : public Error {
 public:
  using Error::Error;
};

using Frame = std::unordered_map<std::string, Value>;

class Renderer {
 public:
  Renderer(const Program& p, Frame globals, const Limits& limits) : limits_(limits), prog_(p) {
    frames_.push_back(std::make_shared<Frame>(std::move(globals)));
  }

  std::string run() {
    std::string out;
    exec(prog_.body, out);
    return out;
  }

 private:
  enum class Flow { normal, break_, continue_ };

  [[noreturn]] void error_at(Pos p, const std::string& msg) const {
    throw LocatedError(fmt::format("{}:{}:{}: {}", prog_.name, p.line, p.col, msg));
  }

  Value lookup(const std::string& name) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
      auto f = (*it)->find(name);
      if (f != (*it)->end()) return f->second;
    }
    return Value();
  }
  void assign(const std::string& name, Value v) { (*frames_.back())[name] = std::move(v); }

  Flow exec(const Body& body, std::string& out) {
    for (auto& s : body) {
      Flow f = exec(*s, out);
      if (f != Flow::normal) return f;
    }
    return Flow::normal;
  }

  Flow exec(const Stmt& s, std::string& out) {
    if (++steps_ > limits_.max_steps) error_at(s.pos, fmt::format("template runs too long (over {} steps)", limits_.max_steps));
    if (out.size() > limits_.max_output) error_at(s.pos, fmt::format("template output over {} bytes", limits_.max_output));
    switch (s.kind) {
      case Stmt::Kind::text: out += s.text; return Flow::normal;
      case Stmt::Kind::output: out += eval(*s.expr).str(); return Flow::normal;
      case Stmt::Kind::if_:
        for (auto& [cond, body] : s.branches)
          if (eval(*cond).truthy()) return exec(body, out);
        return exec(s.else_body, out);
      case Stmt::Kind::for_: return exec_for(s, out);
      case Stmt::Kind::set: {
        Value v = eval(*s.expr);
        if (s.attr_target) {
          Value ns = lookup(s.targets[0]);
          if (!ns.is_object() || !ns.as_object().is_namespace)
            error_at(s.pos, fmt::format("cannot assign attribute on '{}': not a namespace()", s.targets[0]));
          // Namespace attributes are the one way a value outlives a loop iteration, so the one
          // way to build unboundedly nested values; bound them (Python would overflow too).
          if (nesting(v, kMaxNesting) >= kMaxNesting) error_at(s.pos, "value nested too deeply");
          ns.as_object().set(s.targets[1], std::move(v));
        } else {
          unpack(s.targets, v, s.pos);
        }
        return Flow::normal;
      }
      case Stmt::Kind::set_block: {
        std::string captured;
        exec(s.body, captured);
        assign(s.text, Value(captured));
        return Flow::normal;
      }
      case Stmt::Kind::macro: assign(s.text, make_macro(s)); return Flow::normal;
      case Stmt::Kind::break_: return Flow::break_;
      case Stmt::Kind::continue_: return Flow::continue_;
      case Stmt::Kind::filter_block: {
        std::string captured;
        exec(s.body, captured);
        out += call_filter(*s.expr, Value(captured)).str();
        return Flow::normal;
      }
    }
    return Flow::normal;
  }

  void unpack(const std::vector<std::string>& targets, const Value& v, Pos p) {
    if (targets.size() == 1) {
      assign(targets[0], v);
      return;
    }
    std::vector<Value> items = iterate(v);
    if (items.size() != targets.size())
      error_at(p, fmt::format("cannot unpack {} values into {} names", items.size(), targets.size()));
    for (size_t i = 0; i < items.size(); ++i) assign(targets[i], items[i]);
  }

  Flow exec_for(const Stmt& s, std::string& out) {
    Value seq = eval(*s.expr);
    if (seq.is_none()) error_at(s.expr->pos, "'NoneType' object is not iterable");
    std::vector<Value> items = wrap([&] { return iterate(seq); }, s.expr->pos);
    if (s.cond) {  // the filter sees the loop variables but not `loop`
      std::vector<Value> kept;
      for (auto& item : items) {
        frames_.push_back(std::make_shared<Frame>());
        unpack(s.targets, item, s.pos);
        bool keep = eval(*s.cond).truthy();
        frames_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) return exec(s.else_body, out);
    int64_t n = int64_t(items.size());
    for (int64_t i = 0; i < n; ++i) {
      // Every iteration is a step, or an empty body would loop unbounded.
      if (++steps_ > limits_.max_steps)
        error_at(s.pos, fmt::format("template runs too long (over {} steps)", limits_.max_steps));
      frames_.push_back(std::make_shared<Frame>());
      unpack(s.targets, items[size_t(i)], s.pos);
      auto loop = Object::make();
      loop->set("index0", Value(i));
      loop->set("index", Value(i + 1));
      loop->set("revindex", Value(n - i));
      loop->set("revindex0", Value(n - i - 1));
      loop->set("first", Value(i == 0));
      loop->set("last", Value(i == n - 1));
      loop->set("length", Value(n));
      loop->set("depth", Value(int64_t(1)));
      loop->set("depth0", Value(int64_t(0)));
      loop->set("previtem", i > 0 ? items[size_t(i - 1)] : Value());
      loop->set("nextitem", i + 1 < n ? items[size_t(i + 1)] : Value());
      loop->set("cycle", Value::function([i](Args& a) {
        if (a.pos.empty()) fail("loop.cycle() needs at least one argument");
        return a.pos[size_t(i) % a.pos.size()];
      }));
      assign("loop", Value(loop));
      Flow f = exec(s.body, out);
      frames_.pop_back();
      if (f == Flow::break_) break;
    }
    return Flow::normal;
  }

  static int nesting(const Value& v, int limit) {
    if (limit <= 0) return 0;
    int deepest = 0;
    if (v.is_array())
      for (auto& x : v.as_array()) deepest = std::max(deepest, nesting(x, limit - 1));
    else if (v.is_object())
      for (auto& [_, x] : v.as_object().items) deepest = std::max(deepest, nesting(x, limit - 1));
    else
      return 0;
    return deepest + 1;
  }

  Value make_macro(const Stmt& s) {
    const Stmt* def = &s;
    return Value::function([this, def](Args& a) {
      if (macro_depth_ >= kMaxMacroDepth) fail("macro calls nested too deeply (over {})", kMaxMacroDepth);
      struct Depth {
        int& d;
        explicit Depth(int& depth) : d(++depth) {}
        ~Depth() { --d; }
      } depth(macro_depth_);
      auto frame = std::make_shared<Frame>();
      if (a.pos.size() > def->params.size())
        fail("macro '{}' takes {} arguments, got {}", def->text, def->params.size(), a.pos.size());
      std::vector<std::shared_ptr<Frame>> saved = std::move(frames_);
      frames_ = {saved.front(), frame};
      for (size_t i = 0; i < def->params.size(); ++i) {
        auto& [pname, pdef] = def->params[i];
        Value v = a.get(i, pname);
        if (v.is_undefined() && pdef) v = eval(*pdef);
        (*frame)[pname] = v;
      }
      std::string out;
      try {
        exec(def->body, out);
      } catch (...) {
        frames_ = std::move(saved);
        throw;
      }
      frames_ = std::move(saved);
      return Value(out);
    });
  }

  // Runs f, turning a bs::Error from the library into one that names the location.
  template <class F>
  auto wrap(F&& f, Pos p) -> decltype(f()) {
    try {
      return f();
    } catch (const LocatedError&) {
      throw;
    } catch (const Error& e) {
      error_at(p, e.what());
    }
  }

  Args eval_args(const Expr& e, size_t skip) {
    Args a;
    for (size_t i = skip; i < e.args.size(); ++i) a.pos.push_back(eval(*e.args[i]));
    for (auto& [k, v] : e.kwargs) a.kw.emplace_back(k, eval(*v));
    return a;
  }

  Value call_filter(const Expr& f, const Value& subject) {
    Args a = eval_args(f, 1);
    return wrap([&] { return apply_filter(f.name, subject, a); }, f.pos);
  }

  Value eval(const Expr& e) {
    if (++steps_ > limits_.max_steps) error_at(e.pos, fmt::format("template runs too long (over {} steps)", limits_.max_steps));
    switch (e.kind) {
      case Expr::Kind::literal: return e.value;
      case Expr::Kind::name: return lookup(e.name);
      case Expr::Kind::list:
      case Expr::Kind::tuple: {
        Array a;
        for (auto& x : e.args) a.push_back(eval(*x));
        return Value(std::move(a));
      }
      case Expr::Kind::dict: {
        auto o = Object::make();
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Value k = eval(*e.args[i]);
          if (!k.is_string()) error_at(e.args[i]->pos, "dict keys must be strings here");
          o->set(k.as_string(), eval(*e.args[i + 1]));
        }
        return Value(o);
      }
      case Expr::Kind::attr: return attribute(eval(*e.args[0]), e.name);
      case Expr::Kind::index: {
        Value obj = eval(*e.args[0]);
        Value key = eval(*e.args[1]);
        return index(obj, key);
      }
      case Expr::Kind::slice: {
        Value obj = eval(*e.args[0]);
        Value parts[3];
        for (int i = 0; i < 3; ++i)
          if (e.args[size_t(i) + 1]) parts[i] = eval(*e.args[size_t(i) + 1]);
        return wrap([&] { return slice(obj, parts[0], parts[1], parts[2]); }, e.pos);
      }
      case Expr::Kind::call: return eval_call(e);
      case Expr::Kind::filter: return call_filter(e, eval(*e.args[0]));
      case Expr::Kind::test: {
        Value subject = eval(*e.args[0]);
        Args a = eval_args(e, 1);
        bool r = wrap([&] { return apply_test(e.name, subject, a); }, e.pos);
        return Value(r != e.negated);
      }
      case Expr::Kind::unary: {
        Value x = eval(*e.args[0]);
        if (e.name == "not") return Value(!x.truthy());
        if (x.is_bool()) x = Value(int64_t(x.as_bool()));
        if (x.is_int()) {
          if (e.name == "-" && x.as_int() == INT64_MIN) error_at(e.pos, "integer overflow");
          return e.name == "-" ? Value(-x.as_int()) : x;
        }
        if (x.is_real()) return e.name == "-" ? Value(-x.as_real()) : x;
        error_at(e.pos, fmt::format("bad operand type for unary {}: '{}'", e.name, x.type_name()));
      }
      case Expr::Kind::binary: return eval_binary(e);
      case Expr::Kind::cond:
        if (eval(*e.args[1]).truthy()) return eval(*e.args[0]);
        return e.args[2] ? eval(*e.args[2]) : Value();
    }
    return Value();
  }

  Value eval_call(const Expr& e) {
    const Expr& callee = *e.args[0];
    Args a = eval_args(e, 1);
    if (callee.kind == Expr::Kind::attr) {
      Value obj = eval(*callee.args[0]);
      if (obj.is_object()) {
        const Value* member = obj.as_object().find(callee.name);
        if (member && member->is_function()) return wrap([&] { return member->as_function()(a); }, e.pos);
      }
      auto r = wrap([&] { return call_method(obj, callee.name, a); }, callee.pos);
      if (r) return *r;
      error_at(callee.pos, fmt::format("'{}' object has no method '{}'", obj.type_name(), callee.name));
    }
    Value f = eval(callee);
    if (!f.is_function()) {
      std::string what = callee.kind == Expr::Kind::name ? "'" + callee.name + "'" : "value";
      error_at(e.pos, fmt::format("{} is not callable ({})", what, f.is_undefined() ? "undefined" : f.type_name()));
    }
    return wrap([&] { return f.as_function()(a); }, e.pos);
  }

  Value eval_binary(const Expr& e) {
    const std::string& op = e.name;
    Value l = eval(*e.args[0]);
    if (op == "and") return l.truthy() ? eval(*e.args[1]) : l;
    if (op == "or") return l.truthy() ? l : eval(*e.args[1]);
    Value r = eval(*e.args[1]);
    return wrap([&] { return arithmetic(op, l, r); }, e.pos);
  }

  Value arithmetic(const std::string& op, Value l, Value r) const {
    if (op == "==") return Value(values_equal(l, r));
    if (op == "!=") return Value(!values_equal(l, r));
    if (op == "<") return Value(values_compare(l, r) < 0);
    if (op == "<=") return Value(values_compare(l, r) <= 0);
    if (op == ">") return Value(values_compare(l, r) > 0);
    if (op == ">=") return Value(values_compare(l, r) >= 0);
    if (op == "in") return Value(contains(r, l));
    if (op == "not in") return Value(!contains(r, l));
    if (op == "~" || (op == "+" && l.is_string() && r.is_string())) {
      std::string a = l.str(), b = r.str();
      if (a.size() + b.size() > limits_.max_output) fail("string longer than {} bytes", limits_.max_output);
      return Value(a + b);
    }
    if (op == "%" && l.is_string()) {
      std::string out = percent_format(l.as_string(), r);
      if (out.size() > limits_.max_output) fail("string longer than {} bytes", limits_.max_output);
      return Value(std::move(out));
    }
    if (l.is_bool()) l = Value(int64_t(l.as_bool()));
    if (r.is_bool()) r = Value(int64_t(r.as_bool()));
    if (op == "+") {
      if (l.is_string() && r.is_string()) return Value(l.as_string() + r.as_string());
      if (l.is_array() && r.is_array()) {
        Array a = l.as_array();
        a.insert(a.end(), r.as_array().begin(), r.as_array().end());
        return Value(std::move(a));
      }
    }
    if (op == "*" && (l.is_string() || l.is_array()) && r.is_int()) std::swap(l, r);
    if (op == "*" && l.is_int() && (r.is_string() || r.is_array())) {
      if (l.as_int() > 0 && double(l.as_int()) * double(length(r)) > double(limits_.max_output))
        fail("repetition result over {} items", limits_.max_output);
      Value out = r.is_string() ? Value(std::string()) : Value(Array{});
      std::string s;
      Array arr;
      for (int64_t i = 0; i < l.as_int(); ++i) {
        if (r.is_string()) s += r.as_string();
        else arr.insert(arr.end(), r.as_array().begin(), r.as_array().end());
      }
      return r.is_string() ? Value(s) : Value(std::move(arr));
    }
    if (!l.is_number() || !r.is_number())
      fail("unsupported operand type(s) for {}: '{}' and '{}'", op, l.type_name(), r.type_name());
    bool ints = l.is_int() && r.is_int();
    // Python integers do not overflow; ours are 64-bit, so overflow is an error, not a wrap.
    if (ints && (op == "+" || op == "-" || op == "*")) {
      int64_t a = l.as_int(), b = r.as_int(), v = 0;
      bool overflow = op == "+" ? __builtin_add_overflow(a, b, &v)
                      : op == "-" ? __builtin_sub_overflow(a, b, &v)
                                  : __builtin_mul_overflow(a, b, &v);
      if (overflow) fail("integer overflow (values beyond 64 bits are not supported)");
      return Value(v);
    }
    if (op == "+") return Value(l.as_real() + r.as_real());
    if (op == "-") return Value(l.as_real() - r.as_real());
    if (op == "*") return Value(l.as_real() * r.as_real());
    if (op == "/") {
      if (r.as_real() == 0) fail("division by zero");
      return Value(l.as_real() / r.as_real());
    }
    if (op == "//" || op == "%") {
      if (r.as_real() == 0) fail("integer division or modulo by zero");
      if (ints) {  // Python floors toward negative infinity
        if (l.as_int() == INT64_MIN && r.as_int() == -1) fail("integer overflow");
        int64_t a = l.as_int(), b = r.as_int(), q = a / b, m = a % b;
        if (m != 0 && ((m < 0) != (b < 0))) {
          --q;
          m += b;
        }
        return op == "//" ? Value(q) : Value(m);
      }
      double q = std::floor(l.as_real() / r.as_real());
      return op == "//" ? Value(q) : Value(l.as_real() - q * r.as_real());
    }
    if (op == "**") {
      if (ints && r.as_int() >= 0) {
        int64_t out = 1;
        for (int64_t i = 0; i < r.as_int(); ++i) {
          if (__builtin_mul_overflow(out, l.as_int(), &out)) fail("integer overflow in **");
          if (out == 0 || out == 1) break;  // 0 ** n, 1 ** n
          if (out == -1 && l.as_int() == -1) {
            out = (r.as_int() % 2) ? -1 : 1;
            break;
          }
        }
        return Value(out);
      }
      return Value(std::pow(l.as_real(), r.as_real()));
    }
    fail("unsupported operator {}", op);
  }

  const Limits limits_;
  static constexpr int kMaxMacroDepth = 64;
  static constexpr int kMaxNesting = 256;
  int macro_depth_ = 0;
  const Program& prog_;
  std::vector<std::shared_ptr<Frame>> frames_;
  int64_t steps_ = 0;
};

}  // namespace

Template::Template(std::string_view source, std::string name) : program_(parse_template(source, name)) {}

std::string Template::render(const nlohmann::ordered_json& context, const Limits& limits) const {
  Object builtins;
  add_globals(builtins);
  Frame globals;
  for (auto& [k, v] : builtins.items) globals[k] = v;
  if (context.is_object())
    for (auto& [k, v] : context.items()) globals[k] = Value::from_json(v);
  Renderer r(*program_, std::move(globals), limits);
  try {
    return r.run();
  } catch (const LocatedError& e) {
    throw Error(e.what(), ErrorKind::input);
  }
}

}  // namespace jinja

std::string apply_chat_template(const std::string& tmpl, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt, const nlohmann::ordered_json& extra) {
  nlohmann::ordered_json ctx = extra.is_object() ? extra : nlohmann::ordered_json::object();
  ctx["messages"] = messages;
  ctx["add_generation_prompt"] = add_generation_prompt;
  return jinja::Template(tmpl).render(ctx);
}

std::string apply_chat_template(const std::string& tmpl, const nlohmann::json& messages, bool add_generation_prompt,
                                const nlohmann::json& extra) {
  return apply_chat_template(tmpl, nlohmann::ordered_json::parse(messages.dump()), add_generation_prompt,
                             nlohmann::ordered_json::parse(extra.dump()));
}

}  // namespace bs::tok
