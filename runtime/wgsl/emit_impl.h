// The Vulkan GLSL 4.50 emitter's internals, shared by emit_glsl.cpp (module, bindings, entry
// point), emit_expr.cpp (expressions and builtins), emit_stmt.cpp (statements) and
// emit_helpers.cpp (helper functions for WGSL semantics GLSL lacks, reserved names).
#pragma once
#include <array>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/wgsl/ast.h"
#include "runtime/wgsl/builtins.h"
#include "runtime/wgsl/wgsl.h"

namespace bs::wgsl {

struct EmitResult {
  std::string glsl;
  std::vector<BindingInfo> bindings;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  ShaderFeatures features;
  uint32_t push_constant_bytes = 0;  // size of the var<push_constant> the entry point uses, else 0
};

// Emits the shader of one entry point. Reports problems (an override without a value, ...) to
// `diags` and returns what it has; callers check diags first.
EmitResult emit_glsl(Module& m, Decl* entry, Diagnostics& diags);

bool is_glsl_reserved(const std::string& name);
// A GLSL-safe, injective spelling of a WGSL identifier (see emit_helpers.cpp).
std::string mangle(const std::string& name);

class Emitter {
 public:
  Emitter(Module& m, Decl* entry, Diagnostics& d) : m_(m), T(m.types), entry_(entry), d_(d) {}
  EmitResult run();

  // Types and values.
  std::string type_str(const Type* t);             // "float", "vec3", "S", "float[4]" for arrays
  std::string decl_str(const Type* t, const std::string& name);  // "float name[4]"
  std::string literal(const Value& v, const Type* t);
  std::string zero(const Type* t) ;
  std::string struct_ctor(const Decl* s, const std::vector<std::string>& members);

  // Expressions (emit_expr.cpp).
  std::string expr(const Expr* e);
  std::string lvalue(const Expr* e);   // the memory a reference or pointer expression denotes
  std::string builtin(const Expr* e);
  std::string call(const Expr* e);
  std::string binary(const Expr* e);
  std::string convert(const std::string& x, const Type* from, const Type* to);
  std::string temp();                  // a fresh temporary name
  void prelude(const std::string& stmt) { prelude_.push_back(stmt); }

  // Statements (emit_stmt.cpp).
  void function(const Decl* fn);
  void stmt(const Stmt* s);
  void block_body(const Stmt* b);
  void line(const std::string& s);
  void flush_prelude();
  std::string local_name(const Decl* d);
  std::string name_of(const Decl* d);
  std::string simple_text(const Stmt* s);  // an assignment / ++ / call without the ';'
  std::string hoist_lvalue(const Expr* e);  // lvalue with run-time indices fixed in temporaries
  void continue_site();
  void zero_fill(const std::string& lv, const Type* t, const std::string& start, const std::string& step, int depth);

  // Helpers (emit_helpers.cpp): returns the helper's name after making sure it is emitted.
  std::string helper(const std::string& kind, const Type* t);

  Module& m_;
  TypeTable& T;
  Decl* entry_;
  Diagnostics& d_;
  ShaderFeatures features_;
  std::set<std::string> extensions_;

 private:
  void mark_struct(const Decl* s);
  void emit_struct(const Decl* s, std::string& out);
  void emit_members(const Decl* s, std::string& out);
  void emit_binding(const Decl* v, std::string& out);
  std::string emit_main();
  void collect_reachable(const Decl* d);

  std::string out_;                    // function bodies being written
  int indent_ = 0;
  std::array<uint32_t, 3> wg_{1, 1, 1};
  const Decl* push_constant_ = nullptr;  // the entry point's var<push_constant>
  std::vector<std::string> prelude_;
  int temp_counter_ = 0;
  std::set<const Decl*> reachable_;
  std::vector<const Decl*> structs_needed_;
  std::set<const Decl*> struct_set_;
  std::map<std::string, std::string> helper_code_;   // key -> code
  std::vector<std::string> helper_order_;
  std::unordered_map<const Decl*, std::string> local_names_;
  std::set<std::string> used_names_;                  // in the current function
  std::set<std::string> global_names_;
  std::unordered_map<const Decl*, std::string> ptr_alias_;  // let p = &x[i]  ->  "x[t3]"
  std::vector<const Stmt*> continuing_;    // per enclosing loop: its continuing block / for update to inline at `continue`
  std::vector<int> switch_in_loop_;        // per enclosing loop: switches entered since
  friend struct EmitterAccess;
};

}  // namespace bs::wgsl
