// The WGSL syntax tree, annotated in place by the resolver. Nodes live in deques owned by the
// Module (stable addresses), and point at each other with plain pointers.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/wgsl/diag.h"
#include "runtime/wgsl/types.h"

namespace bs::wgsl {

struct Decl;
struct Stmt;

// A compile-time value. Scalars use `i` (bool, i32, u32, abstract int) or `f` (floats);
// vectors, matrices (columns), arrays and structs use `elems`.
struct Value {
  const Type* type = nullptr;
  int64_t i = 0;
  double f = 0;
  std::vector<Value> elems;
};

// When an expression's value is known: at shader creation (const), at pipeline creation
// (override, once the pipeline's constants are given), or only at run time.
enum class Stage : uint8_t { constant, override_, runtime };

enum class ExprKind : uint8_t { literal, ident, call, index, member, unary, binary };

struct Expr {
  ExprKind kind = ExprKind::literal;
  Loc loc;
  std::string name;          // literal text, identifier, callee, member name, or operator
  uint8_t lit = 0;           // literal: 1 integer, 2 float, 3 bool
  std::vector<Expr*> tmpl;   // template arguments of an identifier or callee: vec3<f32>
  std::vector<Expr*> args;   // call arguments; index: {base, index}; member: {base}; unary: {x}; binary: {l, r}
  // Filled by the resolver.
  const Type* type = nullptr;  // a ref type for memory views (variables, their elements)
  Stage stage = Stage::runtime;
  std::optional<Value> value;  // known value (constant, or override with its pipeline value)
  Decl* decl = nullptr;        // identifier: what it names; call: the user function
  const Type* ctor = nullptr;  // call: the type constructed or converted to
  int builtin = -1;            // call: the builtin function (BuiltinFn)
  std::vector<int> swizzle;    // member access on a vector
  int member_index = -1;       // member access on a struct
  bool is_type = false;        // identifier that names a type (only valid as a callee / template arg)
};

struct Attr {
  std::string name;
  Loc loc;
  std::vector<Expr*> args;
};

struct StructMember {
  std::string name;
  Loc loc;
  Expr* type_expr = nullptr;
  std::vector<Attr> attrs;
  const Type* type = nullptr;
  uint32_t offset = 0, size = 0, align = 0;  // WGSL layout
  std::string builtin;                        // entry-point input structs
};

enum class DeclKind : uint8_t { var, const_, override_, let, param, alias, struct_, fn, const_assert };

struct Decl {
  DeclKind kind = DeclKind::var;
  std::string name;
  Loc loc;
  std::vector<Attr> attrs;
  std::vector<Expr*> var_tmpl;  // var<storage, read_write>
  Expr* type_expr = nullptr;
  Expr* init = nullptr;         // initializer; the asserted expression of const_assert
  std::vector<StructMember> members;
  std::vector<Decl*> params;
  Expr* ret_type = nullptr;
  std::vector<Attr> ret_attrs;
  Stmt* body = nullptr;

  // Filled by the resolver.
  enum class State : uint8_t { unresolved, resolving, resolved, failed } state = State::unresolved;
  bool module_scope = false;
  const Type* type = nullptr;  // var: store type; values: value type; alias: target; fn: return type
  AddressSpace space = AddressSpace::none;
  AccessMode access = AccessMode::none;
  int group = -1, binding = -1;
  int override_id = -1;
  std::string builtin;         // @builtin of a parameter
  std::optional<Value> value;  // const, and override once its value is known
  Stage stage = Stage::runtime;
  uint32_t size = 0, align = 0;  // struct layout
  bool is_entry = false;
  std::array<Expr*, 3> wg_exprs{};   // @workgroup_size arguments
  std::vector<Decl*> uses;           // module-scope declarations referenced (functions, vars, ...)
  bool assigned = false;             // a var that is written somewhere
};

enum class StmtKind : uint8_t {
  block, expr, decl, assign, incdec, if_, switch_, loop, for_, while_,
  break_, break_if, continue_, return_, const_assert, phony
};

struct SwitchCase {
  std::vector<Expr*> selectors;  // empty with is_default for a lone `default`
  bool is_default = false;
  Stmt* body = nullptr;
  Loc loc;
};

struct Stmt {
  StmtKind kind = StmtKind::block;
  Loc loc;
  std::vector<Stmt*> stmts;   // block
  Expr* lhs = nullptr;        // assign/incdec target; expr/phony value; if/while/switch/break_if cond; return value
  Expr* rhs = nullptr;        // assign value
  std::string op;             // "=", "+=", ..., "++", "--"
  Decl* decl = nullptr;       // let / var / const / const_assert
  Stmt* then = nullptr;       // if: then; loop/for/while: body
  Stmt* els = nullptr;        // if: else (block or if); loop: continuing block
  Stmt* init = nullptr;       // for
  Stmt* update = nullptr;     // for
  std::vector<SwitchCase> cases;
  Expr* combined = nullptr;   // compound assignment: the resolved `lhs op rhs`
};

struct Module {
  std::string source;
  std::string filename;
  std::deque<Expr> exprs;
  std::deque<Stmt> stmts;
  std::deque<Decl> decls;
  std::vector<Decl*> globals;            // module-scope declarations in source order
  std::set<std::string> enables;         // "f16", "subgroups", ...
  std::vector<Decl*> order;              // resolved module-scope declarations, dependencies first
  std::vector<Decl*> synthesized;        // builtin structs (atomicCompareExchangeWeak results)
  TypeTable types;

  Expr* new_expr(ExprKind k, Loc l) {
    exprs.emplace_back();
    exprs.back().kind = k;
    exprs.back().loc = l;
    return &exprs.back();
  }
  Stmt* new_stmt(StmtKind k, Loc l) {
    stmts.emplace_back();
    stmts.back().kind = k;
    stmts.back().loc = l;
    return &stmts.back();
  }
  Decl* new_decl(DeclKind k, Loc l) {
    decls.emplace_back();
    decls.back().kind = k;
    decls.back().loc = l;
    return &decls.back();
  }
};

// Parses tokens into `m` (m.source must hold the text). Errors go to diags; the parser recovers
// at declaration and statement boundaries.
void parse_module(Module& m, Diagnostics& diags);

const Attr* find_attr(const std::vector<Attr>& attrs, std::string_view name);

}  // namespace bs::wgsl
