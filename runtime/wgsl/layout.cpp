// Memory layout. WGSL's rules (spec "Memory Layout") are the truth; the GLSL emitter then has to
// reproduce them with std430 or std140 blocks. std430 agrees with WGSL on every type's natural
// alignment (vec3 aligns to 16, f16 arrays have stride 2, structs align to their largest member),
// so the only differences come from @size/@align (and struct sizes they round): those become
// explicit padding members, planned here. Uniform blocks use std140 when that reproduces the WGSL
// offsets exactly, and std430 (GL_EXT_scalar_block_layout) otherwise.
#include "runtime/wgsl/layout.h"

#include <algorithm>

#include "runtime/wgsl/ast.h"

namespace bs::wgsl {

namespace {
uint32_t scalar_size(const Type* t) { return t->kind == TypeKind::f16 ? 2 : 4; }
}  // namespace

uint32_t align_of(const Type* t) {
  switch (t->kind) {
    case TypeKind::f16: return 2;
    case TypeKind::vec: return (t->n == 2 ? 2 : 4) * scalar_size(t->elem);  // vec3 aligns like vec4
    case TypeKind::mat: return (t->rows == 2 ? 2 : 4) * scalar_size(t->elem);
    case TypeKind::array: return align_of(t->elem);
    case TypeKind::struct_: return t->decl->align ? t->decl->align : 4;
    default: return 4;
  }
}

uint32_t size_of(const Type* t) {
  switch (t->kind) {
    case TypeKind::f16: return 2;
    case TypeKind::vec: return t->n * scalar_size(t->elem);
    case TypeKind::mat: {
      uint32_t col_align = (t->rows == 2 ? 2 : 4) * scalar_size(t->elem);
      return t->n * round_up(col_align, t->rows * scalar_size(t->elem));
    }
    case TypeKind::array: {
      uint64_t s = uint64_t(std::max<uint32_t>(t->n, 1)) * array_stride(t);
      return s > 0xffffffffu ? 0xffffffffu : uint32_t(s);
    }
    case TypeKind::struct_: return t->decl->size;
    default: return 4;
  }
}

uint32_t array_stride(const Type* t) { return round_up(align_of(t->elem), size_of(t->elem)); }

// ---- GLSL std430 with explicit padding ----------------------------------------------------------

namespace {
uint32_t std430_align(const Type* t);

uint32_t struct_std430_align(const Decl* s) {
  uint32_t a = 1;
  for (const GlslSlot& slot : glsl_struct_plan(s))
    a = std::max(a, slot.member >= 0 ? std430_align(s->members[size_t(slot.member)].type) : slot.pad_unit);
  return a;
}

uint32_t std430_align(const Type* t) {
  if (t->kind == TypeKind::struct_) return struct_std430_align(t->decl);
  if (t->kind == TypeKind::array) return std430_align(t->elem);
  return align_of(t);  // scalars, vectors, matrices, atomics: same as WGSL
}
}  // namespace

std::vector<GlslSlot> glsl_struct_plan(const Decl* s) {
  std::vector<GlslSlot> plan;
  // Pads made of u32 would raise a 2-aligned struct's alignment; such structs pad with f16.
  uint32_t unit = s->align >= 4 ? 4 : 2;
  uint32_t cur = 0;
  auto pad = [&](uint32_t bytes) {
    if (bytes == 0) return;
    if (unit == 4 && cur % 4 == 2) {
      plan.push_back({-1, 2, 2});
      cur += 2;
      bytes -= 2;
    }
    if (bytes >= unit) {
      uint32_t k = bytes / unit;
      plan.push_back({-1, k * unit, unit});
      cur += k * unit;
      bytes -= k * unit;
    }
    if (bytes) {
      plan.push_back({-1, bytes, 2});
      cur += bytes;
    }
  };
  for (size_t i = 0; i < s->members.size(); ++i) {
    const StructMember& m = s->members[i];
    uint32_t natural = round_up(std430_align(m.type), cur);
    if (natural != m.offset) pad(m.offset - cur);
    plan.push_back({int(i), 0, 0});
    cur = m.offset + (m.type->kind == TypeKind::array && m.type->n == 0 ? 0 : size_of(m.type));
  }
  bool runtime_sized = !s->members.empty() && s->members.back().type->kind == TypeKind::array &&
                       s->members.back().type->n == 0;
  if (!runtime_sized) {
    uint32_t a = 1;
    for (const GlslSlot& slot : plan)
      a = std::max(a, slot.member >= 0 ? std430_align(s->members[size_t(slot.member)].type) : slot.pad_unit);
    if (round_up(a, cur) != s->size) pad(s->size - cur);
  }
  return plan;
}

bool needs_padding(const Decl* s) {
  for (const GlslSlot& slot : glsl_struct_plan(s))
    if (slot.member < 0) return true;
  return false;
}

// ---- std140 compatibility ------------------------------------------------------------------------

namespace {
// std140 alignment/size of the GLSL type; *ok turns false when an offset or stride inside differs
// from WGSL's.
void std140(const Type* t, uint32_t* align, uint32_t* size, bool* ok) {
  switch (t->kind) {
    case TypeKind::array: {
      uint32_t ea, es;
      std140(t->elem, &ea, &es, ok);
      uint32_t stride = round_up(16, round_up(ea, es));
      if (stride != array_stride(t)) *ok = false;
      *align = round_up(16, ea);
      *size = stride * std::max<uint32_t>(t->n, 1);
      return;
    }
    case TypeKind::mat: {
      // A matrix is an array of column vectors.
      uint32_t ca = (t->rows == 2 ? 2 : 4) * scalar_size(t->elem);
      uint32_t stride = round_up(16, ca);
      if (stride != round_up(ca, t->rows * scalar_size(t->elem))) *ok = false;
      *align = round_up(16, ca);
      *size = stride * t->n;
      return;
    }
    case TypeKind::struct_: {
      uint32_t a = 0, cur = 0;
      for (const GlslSlot& slot : glsl_struct_plan(t->decl)) {
        if (slot.member < 0) {
          // Pads of single scalars keep their 4-byte (or 2-byte) alignment in std140; pad arrays
          // would get a 16-byte stride.
          if (slot.pad_bytes / slot.pad_unit > kMaxScalarPads) *ok = false;
          cur = round_up(slot.pad_unit, cur) + slot.pad_bytes;
          continue;
        }
        const StructMember& m = t->decl->members[size_t(slot.member)];
        uint32_t ma, ms;
        std140(m.type, &ma, &ms, ok);
        uint32_t off = round_up(ma, cur);
        if (off != m.offset) *ok = false;
        cur = off + ms;
        a = std::max(a, ma);
      }
      *align = round_up(16, a);
      *size = round_up(*align, cur);
      return;
    }
    default:
      *align = align_of(t);
      *size = size_of(t);
      return;
  }
}
}  // namespace

bool std140_matches_wgsl(const Type* t) {
  bool ok = true;
  uint32_t a, s;
  std140(t, &a, &s, &ok);
  return ok;
}

}  // namespace bs::wgsl
