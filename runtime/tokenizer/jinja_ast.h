// The parsed form of a Jinja template (internal to the interpreter).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tokenizer/jinja_value.h"

namespace bs::tok::jinja {

struct Pos {
  int line = 1, col = 1;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind { literal, name, list, dict, tuple, attr, index, slice, call, filter, test, unary, binary, cond };
  Kind kind;
  Pos pos;
  Value value;       // literal
  std::string name;  // name; attribute; filter / test name; operator ("-", "not", "+", "in", "not in", ...)
  // Children by kind: list/tuple items; dict k0 v0 k1 v1...; attr [obj]; index [obj, key];
  // slice [obj, start, stop, step] (absent parts null); call [callee, positional...];
  // filter / test [subject, positional...]; unary [x]; binary [lhs, rhs]; cond [then, cond, else].
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // call / filter / test keywords
  bool negated = false;                                 // "is not"
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind { text, output, if_, for_, set, set_block, macro, break_, continue_, filter_block };
  Kind kind;
  Pos pos;
  std::string text;                  // text; macro name; set_block target
  ExprPtr expr;                      // output; for iterable; set value; filter_block filter (subject null)
  ExprPtr cond;                      // for ... if cond
  std::vector<std::string> targets;  // for / set names; with attr_target: {namespace, attribute}
  bool attr_target = false;
  std::vector<std::pair<ExprPtr, Body>> branches;       // if / elif conditions and bodies
  Body body, else_body;                                 // for / macro / set_block / filter_block; else
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro parameters and defaults (null: none)
};

struct Program {
  std::string name;
  Body body;
};

// Parses a template; throws bs::Error("NAME:LINE:COL: ...") on a syntax error.
std::shared_ptr<Program> parse_template(std::string_view source, const std::string& name);

}  // namespace bs::tok::jinja
