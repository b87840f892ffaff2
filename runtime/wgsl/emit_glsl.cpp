// Module-level GLSL emission: what the entry point reaches, struct definitions that reproduce the
// WGSL layout, resource blocks, workgroup/private variables, and main() with the builtin inputs
// and zero-initialised workgroup memory.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "runtime/wgsl/emit_impl.h"
#include "runtime/wgsl/layout.h"
#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

EmitResult emit_glsl(Module& m, Decl* entry, Diagnostics& diags) {
  Emitter e(m, entry, diags);
  return e.run();
}

void Emitter::collect_reachable(const Decl* d) {
  if (!reachable_.insert(d).second) return;
  for (const Decl* u : d->uses) collect_reachable(u);
}

std::string Emitter::type_str(const Type* t) {
  switch (t->kind) {
    case TypeKind::bool_: return "bool";
    case TypeKind::i32: case TypeKind::abstract_int: return "int";
    case TypeKind::u32: return "uint";
    case TypeKind::f32: case TypeKind::abstract_float: return "float";
    case TypeKind::f16: features_.f16 = true; return "float16_t";
    case TypeKind::atomic: return type_str(t->elem);
    case TypeKind::vec: {
      std::string p = t->elem->kind == TypeKind::bool_ ? "bvec" : t->elem->kind == TypeKind::i32 ? "ivec"
                    : t->elem->kind == TypeKind::u32 ? "uvec" : t->elem->kind == TypeKind::f16 ? "f16vec" : "vec";
      if (t->elem->kind == TypeKind::f16) features_.f16 = true;
      return p + std::to_string(t->n);
    }
    case TypeKind::mat: {
      if (t->elem->kind == TypeKind::f16) features_.f16 = true;
      std::string p = t->elem->kind == TypeKind::f16 ? "f16mat" : "mat";
      return t->n == t->rows ? p + std::to_string(t->n) : fmt::format("{}{}x{}", p, t->n, t->rows);
    }
    case TypeKind::array: {
      // Element type, then the dimensions from the outside in: array<array<f32, 2>, 4> -> float[4][2].
      std::string dims;
      const Type* e = t;
      while (e->kind == TypeKind::array) {
        dims += e->n ? fmt::format("[{}]", e->n) : "[]";
        e = e->elem;
      }
      return type_str(e) + dims;
    }
    case TypeKind::struct_:
      mark_struct(t->decl);
      return name_of(t->decl);
    default:
      return "void";
  }
}

std::string Emitter::decl_str(const Type* t, const std::string& name) {
  std::string full = type_str(t);
  size_t b = full.find('[');
  if (b == std::string::npos) return full + " " + name;
  return full.substr(0, b) + " " + name + full.substr(b);
}

std::string Emitter::name_of(const Decl* d) {
  if (d->module_scope || d->kind == DeclKind::struct_) return mangle(d->name);
  return local_name(d);
}

void Emitter::mark_struct(const Decl* s) {
  if (struct_set_.count(s)) return;
  struct_set_.insert(s);
  for (const StructMember& m : s->members) type_str(m.type);  // nested structs first
  structs_needed_.push_back(s);
}

std::string Emitter::struct_ctor(const Decl* s, const std::vector<std::string>& members) {
  std::string out = name_of(s) + "(";
  bool first = true;
  auto add = [&](const std::string& x) {
    out += first ? x : ", " + x;
    first = false;
  };
  for (const GlslSlot& slot : glsl_struct_plan(s)) {
    if (slot.member >= 0) {
      add(members[size_t(slot.member)]);
      continue;
    }
    const char* zero1 = slot.pad_unit == 2 ? "float16_t(0)" : "0u";
    uint32_t k = slot.pad_bytes / slot.pad_unit;
    if (k > kMaxScalarPads) {
      std::string z;
      for (uint32_t i = 0; i < k; ++i) z += i ? std::string(", ") + zero1 : zero1;
      add(fmt::format("{}[{}]({})", slot.pad_unit == 2 ? "float16_t" : "uint", k, z));
    } else {
      for (uint32_t i = 0; i < k; ++i) add(zero1);
    }
  }
  return out + ")";
}

void Emitter::emit_members(const Decl* s, std::string& out) {
  int pad = 0;
  for (const GlslSlot& slot : glsl_struct_plan(s)) {
    if (slot.member >= 0) {
      const StructMember& m = s->members[size_t(slot.member)];
      out += fmt::format("  {};\n", decl_str(m.type, mangle(m.name)));
      continue;
    }
    const char* ty = slot.pad_unit == 2 ? "float16_t" : "uint";
    if (slot.pad_unit == 2) features_.f16 = true;
    uint32_t k = slot.pad_bytes / slot.pad_unit;
    if (k > kMaxScalarPads) {
      out += fmt::format("  {} wgsl_pad{}[{}];\n", ty, pad++, k);
    } else {
      for (uint32_t i = 0; i < k; ++i) out += fmt::format("  {} wgsl_pad{};\n", ty, pad++);
    }
  }
}

void Emitter::emit_struct(const Decl* s, std::string& out) {
  out += fmt::format("struct {} {{\n", name_of(s));
  emit_members(s, out);
  out += "};\n";
}

std::string Emitter::literal(const Value& v, const Type* t) {
  switch (t->kind) {
    case TypeKind::bool_: return v.i ? "true" : "false";
    case TypeKind::i32: case TypeKind::abstract_int:
      if (v.i == INT32_MIN) return "(-2147483647 - 1)";
      return v.i < 0 ? fmt::format("({})", v.i) : fmt::format("{}", v.i);
    case TypeKind::u32: return fmt::format("{}u", uint32_t(v.i));
    case TypeKind::f32: case TypeKind::abstract_float: case TypeKind::f16: {
      double x = is_float_scalar(v.type) || !v.type ? v.f : double(v.i);
      std::string s = fmt::format("{}", float(x));
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      if (t->kind == TypeKind::f16) {
        features_.f16 = true;
        return fmt::format("float16_t({})", s);
      }
      return x < 0 || std::signbit(x) ? "(" + s + ")" : s;
    }
    case TypeKind::vec: case TypeKind::mat: case TypeKind::array: {
      const Type* et = t->kind == TypeKind::mat ? T.vec(t->rows, t->elem) : t->elem;
      bool same = t->kind == TypeKind::vec && !v.elems.empty();
      for (const Value& e : v.elems) same = same && e.i == v.elems[0].i && e.f == v.elems[0].f;
      std::string out = type_str(t) + "(";
      if (same) return out + literal(v.elems[0], et) + ")";
      for (size_t i = 0; i < v.elems.size(); ++i) out += (i ? ", " : "") + literal(v.elems[i], et);
      return out + ")";
    }
    case TypeKind::struct_: {
      std::vector<std::string> ms;
      for (size_t i = 0; i < v.elems.size(); ++i) ms.push_back(literal(v.elems[i], t->decl->members[i].type));
      mark_struct(t->decl);
      return struct_ctor(t->decl, ms);
    }
    default:
      return "0";
  }
}

std::string Emitter::zero(const Type* t) {
  try {
    return literal(zero_value(T, t), t);
  } catch (const ConstError& e) {
    d_.error(entry_->loc, e.message);
    return "0";
  }
}

// Writes `lv = 0` for every scalar of `t`, looping over arrays; the outermost loop starts at
// `start` and advances by `step` (so a workgroup can share the work).
void Emitter::zero_fill(const std::string& lv, const Type* t, const std::string& start, const std::string& step, int depth) {
  if (t->kind == TypeKind::array) {
    std::string i = fmt::format("wgsl_i{}", depth);
    line(fmt::format("for (uint {0} = {1}; {0} < {2}u; {0} += {3}) {{", i, start, t->n, step));
    ++indent_;
    zero_fill(fmt::format("{}[{}]", lv, i), t->elem, "0u", "1u", depth + 1);
    --indent_;
    line("}");
  } else if (t->kind == TypeKind::struct_) {
    for (const StructMember& m : t->decl->members) zero_fill(lv + "." + mangle(m.name), m.type, start, step, depth);
  } else if (t->kind == TypeKind::atomic) {
    line(fmt::format("{} = {};", lv, zero(t->elem)));
  } else {
    line(fmt::format("{} = {};", lv, zero(t)));
  }
}

void Emitter::emit_binding(const Decl* v, std::string& out) {
  const Type* t = v->type;
  bool uniform = v->space == AddressSpace::uniform;
  std::string layout = "std430";
  if (uniform && !std140_matches_wgsl(t)) {
    features_.uniform_standard_layout = true;
    extensions_.insert("GL_EXT_scalar_block_layout");
  } else if (uniform) {
    layout = "std140";
  }
  // read_write storage is `coherent`: WGSL's storageBarrier() promises that writes before it are
  // visible to the workgroup after it, which memoryBarrierBuffer() + barrier() give in GLSL only for
  // coherent buffers (otherwise a load may hit a stale non-coherent cache on a real GPU).
  std::string qual = uniform ? "uniform" : v->access == AccessMode::read ? "readonly buffer" : "coherent buffer";
  std::string name = name_of(v);
  out += fmt::format("layout(set = {}, binding = {}, {}) {} wgsl_B_{} {{\n", v->group, v->binding, layout, qual, name);
  if (t->kind == TypeKind::struct_ && contains_runtime_array(t)) {
    // A runtime-sized array must be the last member of the block itself: inline the struct.
    emit_members(t->decl, out);
  } else {
    out += fmt::format("  {};\n", decl_str(t, "m"));
  }
  out += fmt::format("}} {};\n", name);
}

EmitResult Emitter::run() {
  EmitResult r;
  collect_reachable(entry_);
  for (const Decl* g : m_.globals) global_names_.insert(mangle(g->name));
  // Workgroup size first: main() needs it for zeroing workgroup memory.
  for (int i = 0; i < 3; ++i) {
    const Expr* e = entry_->wg_exprs[size_t(i)];
    if (!e) continue;
    if (!e->value) {
      d_.error(e->loc, "the workgroup size depends on an override that has no value; pass it (--define NAME=VALUE)");
      return r;
    }
    r.workgroup_size[size_t(i)] = uint32_t(e->value->i);
  }
  uint64_t invocations = uint64_t(r.workgroup_size[0]) * r.workgroup_size[1] * r.workgroup_size[2];
  if (invocations > 1024) {
    d_.error(entry_->loc, fmt::format("workgroup of {} invocations exceeds the limit of 1024", invocations));
    return r;
  }
  wg_ = r.workgroup_size;

  std::string vars;
  std::map<std::pair<int, int>, const Decl*> seen_bindings;
  for (const Decl* d : m_.order) {
    if (d->kind != DeclKind::var || !reachable_.count(d)) continue;
    if (d->space == AddressSpace::uniform || d->space == AddressSpace::storage) {
      auto key = std::make_pair(d->group, d->binding);
      if (seen_bindings.count(key)) {
        d_.error(d->loc, fmt::format("'{}' and '{}' both use @group({}) @binding({}) in entry point '{}'", seen_bindings[key]->name,
                                     d->name, d->group, d->binding, entry_->name));
        continue;
      }
      seen_bindings[key] = d;
      emit_binding(d, vars);
      BindingInfo b;
      b.group = uint32_t(d->group);
      b.binding = uint32_t(d->binding);
      b.name = d->name;
      b.kind = d->space == AddressSpace::uniform ? BindingKind::uniform_buffer
             : d->access == AccessMode::read ? BindingKind::read_only_storage_buffer : BindingKind::storage_buffer;
      const Type* t = d->type;
      const Type* last = t->kind == TypeKind::struct_ ? t->decl->members.back().type : t;
      if (last->kind == TypeKind::array && last->n == 0) {
        b.runtime_stride = array_stride(last);
        b.min_size = t->kind == TypeKind::struct_ ? t->decl->members.back().offset + b.runtime_stride : b.runtime_stride;
        b.min_size = round_up(align_of(t), uint32_t(b.min_size));
      } else {
        b.min_size = size_of(t);
      }
      r.bindings.push_back(b);
    } else if (d->space == AddressSpace::push_constant) {
      // Vulkan allows one push-constant block per stage: a second reachable var<push_constant> is an error.
      if (push_constant_) {
        d_.error(d->loc, fmt::format("'{}' and '{}' are both var<push_constant> in entry point '{}'; Vulkan allows one "
                                     "push-constant block (put the fields in one struct)", push_constant_->name, d->name, entry_->name));
        continue;
      }
      push_constant_ = d;
      vars += fmt::format("layout(push_constant, std430) uniform wgsl_P_{} {{\n  {};\n}} {};\n", name_of(d),
                          decl_str(d->type, "m"), name_of(d));
      r.push_constant_bytes = size_of(d->type);
    } else if (d->space == AddressSpace::workgroup) {
      vars += fmt::format("shared {};\n", decl_str(d->type, name_of(d)));
    } else if (d->space == AddressSpace::private_) {
      const Type* t = d->type;
      if (d->init) vars += fmt::format("{} = {};\n", decl_str(t, name_of(d)), expr(d->init));
      else vars += fmt::format("{};\n", decl_str(t, name_of(d)));  // zeroed at the top of main()
    }
  }
  std::sort(r.bindings.begin(), r.bindings.end(),
            [](const BindingInfo& a, const BindingInfo& b) { return std::tie(a.group, a.binding) < std::tie(b.group, b.binding); });

  std::string fns;
  for (const Decl* d : m_.order) {
    if (d->kind != DeclKind::fn || d == entry_ || !reachable_.count(d)) continue;
    out_.clear();
    function(d);
    fns += out_;
  }
  out_.clear();
  std::string main_fn = emit_main();

  std::string structs;
  for (const Decl* s : m_.order)
    if (s->kind == DeclKind::struct_ && struct_set_.count(s) && !contains_runtime_array(s->type)) emit_struct(s, structs);
  for (const Decl* s : m_.synthesized)
    if (struct_set_.count(s)) emit_struct(s, structs);

  std::string helpers;
  for (const std::string& k : helper_order_) helpers += helper_code_[k];

  std::string g = "#version 450\n";
  if (features_.f16) {
    extensions_.insert("GL_EXT_shader_explicit_arithmetic_types_float16");
    extensions_.insert("GL_EXT_shader_16bit_storage");
  }
  if (features_.subgroups) extensions_.insert("GL_KHR_shader_subgroup_basic");
  if (features_.subgroup_arithmetic) extensions_.insert("GL_KHR_shader_subgroup_arithmetic");
  if (features_.subgroup_shuffle) extensions_.insert("GL_KHR_shader_subgroup_shuffle");
  if (features_.subgroup_shuffle_relative) extensions_.insert("GL_KHR_shader_subgroup_shuffle_relative");
  if (features_.subgroup_ballot) extensions_.insert("GL_KHR_shader_subgroup_ballot");
  if (features_.subgroup_vote) extensions_.insert("GL_KHR_shader_subgroup_vote");
  if (features_.subgroup_f16) extensions_.insert("GL_EXT_shader_subgroup_extended_types_float16");
  for (const std::string& x : extensions_) g += fmt::format("#extension {} : require\n", x);
  g += fmt::format("// generated by blueshift from {} (entry point '{}')\n", m_.filename, entry_->name);
  g += fmt::format("layout(local_size_x = {}, local_size_y = {}, local_size_z = {}) in;\n", r.workgroup_size[0],
                   r.workgroup_size[1], r.workgroup_size[2]);
  g += structs + helpers + vars + fns + main_fn;
  r.glsl = std::move(g);
  r.features = features_;
  return r;
}

std::string Emitter::emit_main() {
  used_names_ = global_names_;
  local_names_.clear();
  indent_ = 1;
  std::string head = "void main() {\n";
  out_.clear();
  auto builtin_value = [&](const std::string& b) -> std::string {
    if (b == "local_invocation_id") return "gl_LocalInvocationID";
    if (b == "local_invocation_index") return "gl_LocalInvocationIndex";
    if (b == "global_invocation_id") return "gl_GlobalInvocationID";
    if (b == "workgroup_id") return "gl_WorkGroupID";
    if (b == "num_workgroups") return "gl_NumWorkGroups";
    features_.subgroups = true;
    return b == "subgroup_size" ? "gl_SubgroupSize" : "gl_SubgroupInvocationID";
  };
  for (const Decl* p : entry_->params) {
    if (p->type->kind == TypeKind::struct_ && p->builtin.empty()) {
      std::vector<std::string> ms;
      for (const StructMember& m : p->type->decl->members) ms.push_back(builtin_value(m.builtin));
      type_str(p->type);
      line(fmt::format("{} {} = {};", name_of(p->type->decl), local_name(p), struct_ctor(p->type->decl, ms)));
    } else {
      line(fmt::format("{} {} = {};", type_str(p->type), local_name(p), builtin_value(p->builtin)));
    }
  }
  // WGSL zero-initialises private and workgroup memory; GLSL leaves both undefined.
  bool any_shared = false;
  uint32_t total = wg_[0] * wg_[1] * wg_[2];
  for (const Decl* d : m_.order) {
    if (d->kind != DeclKind::var || !reachable_.count(d)) continue;
    if (d->space == AddressSpace::private_ && !d->init) {
      zero_fill(name_of(d), d->type, "0u", "1u", 0);
    } else if (d->space == AddressSpace::workgroup) {
      any_shared = true;
      if (d->type->kind == TypeKind::array) {
        zero_fill(name_of(d), d->type, "gl_LocalInvocationIndex", fmt::format("{}u", total), 0);
      } else {
        line("if (gl_LocalInvocationIndex == 0u) {");
        ++indent_;
        zero_fill(name_of(d), d->type, "0u", "1u", 0);
        --indent_;
        line("}");
      }
    }
  }
  if (any_shared) line("barrier();");
  block_body(entry_->body);
  return head + out_ + "}\n";
}

}  // namespace bs::wgsl
