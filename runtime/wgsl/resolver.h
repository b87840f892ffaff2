// The resolver: names, types, abstract numerics, constant evaluation, builtin overloads, memory
// layout, and the checks WGSL makes at shader creation. It annotates the AST in place.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/wgsl/ast.h"
#include "runtime/wgsl/builtins.h"

namespace bs::wgsl {

// Pipeline-overridable constants by name (or by @id number written as a decimal string).
using OverrideValues = std::map<std::string, double>;

// Resolves `m` (already parsed). `overrides` null: override values stay unknown unless defaulted.
void resolve_module(Module& m, Diagnostics& diags, const OverrideValues* overrides);

// Constant evaluation (consteval.cpp). Errors come back as ConstError with a message.
struct ConstError {
  std::string message;
  bool unsupported = false;  // blueshift cannot fold this (not an error in the program)
};
Value zero_value(TypeTable& T, const Type* t);
// Value conversion as a conversion builtin or an abstract materialization does it: f32(i), u32(f)
// (saturating), i32(u) (bit pattern), vec3<f32>(vec3<i32>), array<f32, 2>(abstract array).
Value convert_value(TypeTable& T, const Value& v, const Type* to);
// Range checks of a computed value of type v.type (i32/u32 overflow, f32/f16 overflow).
void check_representable(const Value& v);
Value eval_unary(TypeTable& T, const std::string& op, const Value& v, const Type* result);
Value eval_binary(TypeTable& T, const std::string& op, const Value& l, const Value& r, const Type* result);
// Builtins that blueshift can evaluate at shader-creation time; false when it cannot.
bool eval_builtin(TypeTable& T, BuiltinFn fn, const std::vector<Value>& args, const Type* result, Value* out);
Value splat(TypeTable& T, const Value& scalar, const Type* vec);
bool values_equal(const Value& a, const Value& b);
std::string value_text(const Value& v);  // for diagnostics

class Resolver {
 public:
  Resolver(Module& m, Diagnostics& d, const OverrideValues* ov) : m_(m), d_(d), T(m.types), overrides_(ov) {}
  void run();

  // Shared by resolver*.cpp and builtins.cpp.
  [[noreturn]] void fail(Loc loc, std::string msg);
  const Type* resolve_type(Expr* e);
  void expr(Expr* e);                       // resolves e (a value, a memory view or a pointer)
  const Type* value_of(Expr* e);            // resolves e and applies the load rule
  void materialize(Expr* e, const Type* to);  // abstract -> concrete (or abstract float)
  const Type* concretize(const Type* t);
  void concretize_expr(Expr* e) { materialize(e, concretize(unref(e->type))); }
  bool convertible(const Type* from, const Type* to) const;  // automatic conversion of abstract types
  const Type* common_type(const std::vector<const Type*>& ts) const;
  void require_enable(Loc loc, const char* ext, const std::string& what);
  void note_use(Decl* d);
  Stage combine(std::initializer_list<Stage> s);
  void fold(Expr* e, const std::function<Value()>& f);  // evaluates when all inputs are known
  int64_t const_int(Expr* e, const char* what);  // resolves and requires a const/override integer
  void builtin_call(Expr* e);                  // builtins.cpp
  void resolve_binary(Expr* e);
  void resolve_call(Expr* e);
  const Type* member_access(Expr* e);

  Module& m_;
  Diagnostics& d_;
  TypeTable& T;

 private:
  void global(Decl* d);
  void global_var(Decl* d);
  void check_uniform_layout(const Type* t, Loc loc, const std::string& what);
  void global_value(Decl* d);
  void struct_decl(Decl* d);
  void function(Decl* d);
  void entry_point(Decl* d);
  Decl* lookup(const std::string& name, Loc loc);
  const Type* type_from_ident(Expr* e);
  void stmt(Stmt* s);
  void block(Stmt* s, bool new_scope = true);
  void local_decl(Decl* d);
  void assignment(Stmt* s);
  bool returns(const Stmt* s) const;
  void declare_local(Decl* d);

  const OverrideValues* overrides_;
  std::map<std::string, Decl*> globals_;
  std::vector<std::unordered_map<std::string, Decl*>> scopes_;
  Decl* fn_ = nullptr;           // function being resolved
  std::vector<Decl*> fn_stack_;  // for recursion detection
  int loop_depth_ = 0, switch_depth_ = 0, continuing_depth_ = 0;
  bool in_const_context_ = false;
};

}  // namespace bs::wgsl
