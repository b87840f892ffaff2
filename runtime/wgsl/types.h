// WGSL types, interned: two types are equal exactly when their pointers are equal.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>

namespace bs::wgsl {

struct Decl;

enum class TypeKind : uint8_t {
  void_,
  bool_,
  abstract_int,
  abstract_float,
  i32,
  u32,
  f32,
  f16,
  vec,     // n = width 2..4, elem = scalar
  mat,     // n = columns, rows = rows, elem = scalar (f32 / f16 / abstract float)
  array,   // elem, n = element count (0: runtime-sized)
  struct_, // decl = the struct declaration
  atomic,  // elem = i32 / u32
  ptr,     // space, elem = store type, access
  ref,     // memory view (what a variable name denotes): space, elem = store type, access
};

// push_constant: wgpu's native extension (var<push_constant>), a Vulkan push-constant block.
enum class AddressSpace : uint8_t { none, function, private_, workgroup, uniform, storage, push_constant };
enum class AccessMode : uint8_t { none, read, write, read_write };

struct Type {
  TypeKind kind = TypeKind::void_;
  const Type* elem = nullptr;
  uint32_t n = 0;
  uint32_t rows = 0;
  const Decl* decl = nullptr;
  AddressSpace space = AddressSpace::none;
  AccessMode access = AccessMode::none;
};

class TypeTable {
 public:
  TypeTable();
  const Type* void_t() const { return void_; }
  const Type* bool_t() const { return bool_; }
  const Type* abstract_int() const { return aint_; }
  const Type* abstract_float() const { return afloat_; }
  const Type* i32() const { return i32_; }
  const Type* u32() const { return u32_; }
  const Type* f32() const { return f32_; }
  const Type* f16() const { return f16_; }
  const Type* vec(uint32_t n, const Type* elem);
  const Type* mat(uint32_t cols, uint32_t rows, const Type* elem);
  const Type* array(const Type* elem, uint32_t count);  // count 0: runtime-sized
  const Type* struct_of(const Decl* decl);
  const Type* atomic(const Type* elem);
  const Type* ptr(AddressSpace s, const Type* elem, AccessMode a);
  const Type* ref(AddressSpace s, const Type* elem, AccessMode a);

 private:
  const Type* intern(const Type& t);
  std::deque<Type> store_;
  std::map<std::tuple<int, const Type*, uint32_t, uint32_t, const Decl*, int, int>, const Type*> index_;
  const Type *void_, *bool_, *aint_, *afloat_, *i32_, *u32_, *f32_, *f16_;
};

// Predicates and queries.
bool is_scalar(const Type* t);
bool is_abstract(const Type* t);        // abstract scalar, or vector/matrix/array of one
bool is_integer_scalar(const Type* t);  // i32, u32, abstract int
bool is_float_scalar(const Type* t);    // f32, f16, abstract float
bool is_numeric_scalar(const Type* t);
bool is_signed_scalar(const Type* t);   // i32, abstract int, floats
const Type* scalar_of(const Type* t);   // the scalar of a scalar / vector / matrix; else null
uint32_t width_of(const Type* t);       // vector width; 1 for scalars; 0 otherwise
bool is_constructible(const Type* t);
bool is_host_shareable(const Type* t);
bool contains_f16(const Type* t);
bool contains_runtime_array(const Type* t);
bool contains_atomic(const Type* t);
// The type after the load rule: a reference becomes its store type.
inline const Type* unref(const Type* t) { return t && t->kind == TypeKind::ref ? t->elem : t; }

std::string type_name(const Type* t);   // WGSL spelling, for diagnostics
const char* space_name(AddressSpace s);
const char* access_name(AccessMode a);

// WGSL memory layout (section "Memory Layout"): alignment and size in bytes.
uint32_t align_of(const Type* t);
uint32_t size_of(const Type* t);
uint32_t array_stride(const Type* t);   // for an array type
inline uint32_t round_up(uint32_t k, uint32_t n) { return (n + k - 1) / k * k; }

}  // namespace bs::wgsl
