#include "runtime/wgsl/types.h"

#include <fmt/format.h>

#include "runtime/wgsl/ast.h"

namespace bs::wgsl {

TypeTable::TypeTable() {
  auto scalar = [&](TypeKind k) {
    Type t;
    t.kind = k;
    return intern(t);
  };
  void_ = scalar(TypeKind::void_);
  bool_ = scalar(TypeKind::bool_);
  aint_ = scalar(TypeKind::abstract_int);
  afloat_ = scalar(TypeKind::abstract_float);
  i32_ = scalar(TypeKind::i32);
  u32_ = scalar(TypeKind::u32);
  f32_ = scalar(TypeKind::f32);
  f16_ = scalar(TypeKind::f16);
}

const Type* TypeTable::intern(const Type& t) {
  auto key = std::make_tuple(int(t.kind), t.elem, t.n, t.rows, t.decl, int(t.space), int(t.access));
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  store_.push_back(t);
  index_.emplace(key, &store_.back());
  return &store_.back();
}

const Type* TypeTable::vec(uint32_t n, const Type* elem) {
  Type t;
  t.kind = TypeKind::vec;
  t.n = n;
  t.elem = elem;
  return intern(t);
}
const Type* TypeTable::mat(uint32_t cols, uint32_t rows, const Type* elem) {
  Type t;
  t.kind = TypeKind::mat;
  t.n = cols;
  t.rows = rows;
  t.elem = elem;
  return intern(t);
}
const Type* TypeTable::array(const Type* elem, uint32_t count) {
  Type t;
  t.kind = TypeKind::array;
  t.elem = elem;
  t.n = count;
  return intern(t);
}
const Type* TypeTable::struct_of(const Decl* decl) {
  Type t;
  t.kind = TypeKind::struct_;
  t.decl = decl;
  return intern(t);
}
const Type* TypeTable::atomic(const Type* elem) {
  Type t;
  t.kind = TypeKind::atomic;
  t.elem = elem;
  return intern(t);
}
const Type* TypeTable::ptr(AddressSpace s, const Type* elem, AccessMode a) {
  Type t;
  t.kind = TypeKind::ptr;
  t.space = s;
  t.elem = elem;
  t.access = a;
  return intern(t);
}
const Type* TypeTable::ref(AddressSpace s, const Type* elem, AccessMode a) {
  Type t;
  t.kind = TypeKind::ref;
  t.space = s;
  t.elem = elem;
  t.access = a;
  return intern(t);
}

bool is_scalar(const Type* t) { return t && t->kind >= TypeKind::bool_ && t->kind <= TypeKind::f16; }
bool is_abstract(const Type* t) {
  if (!t) return false;
  if (t->kind == TypeKind::abstract_int || t->kind == TypeKind::abstract_float) return true;
  if (t->kind == TypeKind::vec || t->kind == TypeKind::mat || t->kind == TypeKind::array) return is_abstract(t->elem);
  return false;
}
bool is_integer_scalar(const Type* t) {
  return t && (t->kind == TypeKind::i32 || t->kind == TypeKind::u32 || t->kind == TypeKind::abstract_int);
}
bool is_float_scalar(const Type* t) {
  return t && (t->kind == TypeKind::f32 || t->kind == TypeKind::f16 || t->kind == TypeKind::abstract_float);
}
bool is_numeric_scalar(const Type* t) { return is_integer_scalar(t) || is_float_scalar(t); }
bool is_signed_scalar(const Type* t) {
  return t && (t->kind == TypeKind::i32 || t->kind == TypeKind::abstract_int || is_float_scalar(t));
}
const Type* scalar_of(const Type* t) {
  if (is_scalar(t)) return t;
  if (t && (t->kind == TypeKind::vec || t->kind == TypeKind::mat)) return t->elem;
  return nullptr;
}
uint32_t width_of(const Type* t) {
  if (is_scalar(t)) return 1;
  if (t && t->kind == TypeKind::vec) return t->n;
  return 0;
}

bool is_constructible(const Type* t) {
  if (!t) return false;
  switch (t->kind) {
    case TypeKind::bool_: case TypeKind::abstract_int: case TypeKind::abstract_float: case TypeKind::i32:
    case TypeKind::u32: case TypeKind::f32: case TypeKind::f16: case TypeKind::vec: case TypeKind::mat:
      return true;
    case TypeKind::array:
      return t->n > 0 && is_constructible(t->elem);
    case TypeKind::struct_:
      for (const auto& m : t->decl->members)
        if (!is_constructible(m.type)) return false;
      return true;
    default:
      return false;
  }
}

bool is_host_shareable(const Type* t) {
  if (!t) return false;
  switch (t->kind) {
    case TypeKind::i32: case TypeKind::u32: case TypeKind::f32: case TypeKind::f16: return true;
    case TypeKind::vec: case TypeKind::mat: case TypeKind::atomic: return is_host_shareable(t->elem);
    case TypeKind::array: return is_host_shareable(t->elem);
    case TypeKind::struct_:
      for (const auto& m : t->decl->members)
        if (!is_host_shareable(m.type)) return false;
      return true;
    default: return false;
  }
}

bool contains_f16(const Type* t) {
  if (!t) return false;
  if (t->kind == TypeKind::f16) return true;
  if (t->kind == TypeKind::struct_) {
    for (const auto& m : t->decl->members)
      if (contains_f16(m.type)) return true;
    return false;
  }
  return contains_f16(t->elem);
}

bool contains_runtime_array(const Type* t) {
  if (!t) return false;
  if (t->kind == TypeKind::array) return t->n == 0 || contains_runtime_array(t->elem);
  if (t->kind == TypeKind::struct_) return !t->decl->members.empty() && contains_runtime_array(t->decl->members.back().type);
  return false;
}

bool contains_atomic(const Type* t) {
  if (!t) return false;
  if (t->kind == TypeKind::atomic) return true;
  if (t->kind == TypeKind::array) return contains_atomic(t->elem);
  if (t->kind == TypeKind::struct_) {
    for (const auto& m : t->decl->members)
      if (contains_atomic(m.type)) return true;
  }
  return false;
}

const char* space_name(AddressSpace s) {
  switch (s) {
    case AddressSpace::function: return "function";
    case AddressSpace::private_: return "private";
    case AddressSpace::workgroup: return "workgroup";
    case AddressSpace::uniform: return "uniform";
    case AddressSpace::storage: return "storage";
    case AddressSpace::push_constant: return "push_constant";
    default: return "none";
  }
}
const char* access_name(AccessMode a) {
  switch (a) {
    case AccessMode::read: return "read";
    case AccessMode::write: return "write";
    case AccessMode::read_write: return "read_write";
    default: return "none";
  }
}

std::string type_name(const Type* t) {
  if (!t) return "<error>";
  switch (t->kind) {
    case TypeKind::void_: return "void";
    case TypeKind::bool_: return "bool";
    case TypeKind::abstract_int: return "abstract-int";
    case TypeKind::abstract_float: return "abstract-float";
    case TypeKind::i32: return "i32";
    case TypeKind::u32: return "u32";
    case TypeKind::f32: return "f32";
    case TypeKind::f16: return "f16";
    case TypeKind::vec: return fmt::format("vec{}<{}>", t->n, type_name(t->elem));
    case TypeKind::mat: return fmt::format("mat{}x{}<{}>", t->n, t->rows, type_name(t->elem));
    case TypeKind::array:
      return t->n ? fmt::format("array<{}, {}>", type_name(t->elem), t->n) : fmt::format("array<{}>", type_name(t->elem));
    case TypeKind::struct_: return t->decl->name;
    case TypeKind::atomic: return fmt::format("atomic<{}>", type_name(t->elem));
    case TypeKind::ptr:
      return fmt::format("ptr<{}, {}, {}>", space_name(t->space), type_name(t->elem), access_name(t->access));
    case TypeKind::ref:
      return fmt::format("ref<{}, {}, {}>", space_name(t->space), type_name(t->elem), access_name(t->access));
  }
  return "<error>";
}

}  // namespace bs::wgsl
