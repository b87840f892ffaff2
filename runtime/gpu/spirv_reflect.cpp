#include "runtime/gpu/spirv_reflect.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "runtime/base/error.h"

namespace bs::gpu {

namespace {

// Opcodes and enums used below (SPIR-V 1.x specification).
enum : uint32_t {
  OpName = 5, OpEntryPoint = 15, OpExecutionMode = 16, OpTypeInt = 21, OpTypeFloat = 22,
  OpTypeVector = 23, OpTypeMatrix = 24, OpTypeArray = 28, OpTypeRuntimeArray = 29, OpTypeStruct = 30,
  OpTypePointer = 32, OpConstant = 43, OpConstantComposite = 44, OpSpecConstant = 50,
  OpSpecConstantComposite = 51, OpVariable = 59, OpDecorate = 71, OpMemberDecorate = 72,
  OpExecutionModeId = 331,
};
enum : uint32_t {
  DecSpecId = 1, DecBlock = 2, DecBufferBlock = 3, DecBuiltIn = 11, DecNonWritable = 24,
  DecNonReadable = 25, DecBinding = 33, DecDescriptorSet = 34, DecOffset = 35,
};
enum : uint32_t { ScUniform = 2, ScPushConstant = 9, ScStorageBuffer = 12 };
enum : uint32_t { ExecLocalSize = 17, ExecLocalSizeId = 38, BuiltInWorkgroupSize = 25 };

struct Type {
  uint32_t op = 0;
  uint32_t width = 0;          // int/float bits
  uint32_t elem = 0, count = 0;  // vector/array/matrix element type and count (count: constant id for arrays)
  std::vector<uint32_t> members;
  uint32_t pointee = 0, storage = 0;
};

struct Decorations {
  bool has_set = false, has_binding = false, block = false, buffer_block = false;
  bool non_writable = false, non_readable = false;
  uint32_t set = 0, binding = 0;
  int32_t spec_id = -1;
  int32_t builtin = -1;
  std::map<uint32_t, uint32_t> member_offset;
};

}  // namespace

ReflectedShader reflect_spirv(std::span<const uint32_t> w) {
  if (w.size() < 5 || w[0] != 0x07230203u) fail("SPIR-V: bad magic or truncated header ({} words)", w.size());
  std::unordered_map<uint32_t, Type> types;
  std::unordered_map<uint32_t, Decorations> dec;
  std::unordered_map<uint32_t, uint32_t> constants;  // id -> first literal word
  std::unordered_map<uint32_t, std::string> names;
  std::unordered_map<uint32_t, std::vector<uint32_t>> composites;
  std::vector<std::pair<uint32_t, uint32_t>> variables;  // (result id, pointer type)
  ReflectedShader out;
  bool have_entry = false;

  for (size_t i = 5; i < w.size();) {
    uint32_t op = w[i] & 0xffff, n = w[i] >> 16;
    if (n == 0 || i + n > w.size()) fail("SPIR-V: instruction at word {} overruns the module", i);
    const uint32_t* a = &w[i + 1];
    uint32_t na = n - 1;
    auto str = [&](uint32_t from) { return std::string(reinterpret_cast<const char*>(a + from)); };
    switch (op) {
      case OpName: if (na >= 2) names[a[0]] = str(1); break;
      case OpEntryPoint: if (!have_entry && na >= 3) { out.entry = str(2); have_entry = true; } break;
      case OpExecutionMode:
        if (na >= 5 && a[1] == ExecLocalSize) out.local_size = {a[2], a[3], a[4]};
        break;
      case OpTypeInt: case OpTypeFloat: types[a[0]] = {op, a[1]}; break;
      case OpTypeVector: case OpTypeMatrix: types[a[0]] = {op, 0, a[1], a[2]}; break;
      case OpTypeArray: types[a[0]] = {op, 0, a[1], a[2]}; break;
      case OpTypeRuntimeArray: types[a[0]] = {op, 0, a[1], 0}; break;
      case OpTypeStruct: { Type t{op}; t.members.assign(a + 1, a + na); types[a[0]] = t; break; }
      case OpTypePointer: { Type t{op}; t.storage = a[1]; t.pointee = a[2]; types[a[0]] = t; break; }
      case OpConstant: case OpSpecConstant: if (na >= 3) constants[a[1]] = a[2]; break;
      case OpConstantComposite: case OpSpecConstantComposite: composites[a[1]].assign(a + 2, a + na); break;
      case OpVariable: if (na >= 3) variables.push_back({a[1], a[0]}); break;
      case OpDecorate: {
        if (na < 2) break;
        auto& d = dec[a[0]];
        switch (a[1]) {
          case DecDescriptorSet: d.has_set = true; d.set = na > 2 ? a[2] : 0; break;
          case DecBinding: d.has_binding = true; d.binding = na > 2 ? a[2] : 0; break;
          case DecBlock: d.block = true; break;
          case DecBufferBlock: d.buffer_block = true; break;
          case DecNonWritable: d.non_writable = true; break;
          case DecNonReadable: d.non_readable = true; break;
          case DecSpecId: d.spec_id = na > 2 ? int32_t(a[2]) : -1; break;
          case DecBuiltIn: d.builtin = na > 2 ? int32_t(a[2]) : -1; break;
        }
        break;
      }
      case OpMemberDecorate: {
        if (na < 3) break;
        auto& d = dec[a[0]];
        if (a[2] == DecOffset && na > 3) d.member_offset[a[1]] = a[3];
        break;
      }
      default: break;
    }
    i += n;
  }

  // Member NonWritable/NonReadable: glslang decorates each member of a readonly block; a block is
  // read-only when every member is.
  std::unordered_map<uint32_t, std::map<uint32_t, std::pair<bool, bool>>> member_access;  // struct -> member -> (nw, nr)
  for (size_t i = 5; i < w.size();) {
    uint32_t op = w[i] & 0xffff, n = w[i] >> 16;
    if (op == OpMemberDecorate && n >= 4) {
      auto& m = member_access[w[i + 1]][w[i + 2]];
      if (w[i + 3] == DecNonWritable) m.first = true;
      if (w[i + 3] == DecNonReadable) m.second = true;
    }
    i += n;
  }

  std::function<uint32_t(uint32_t)> size_of = [&](uint32_t id) -> uint32_t {
    auto it = types.find(id);
    if (it == types.end()) return 0;
    const Type& t = it->second;
    switch (t.op) {
      case OpTypeInt: case OpTypeFloat: return t.width / 8;
      case OpTypeVector: case OpTypeMatrix: return t.count * size_of(t.elem);
      case OpTypeArray: return constants.count(t.count) ? constants[t.count] * size_of(t.elem) : 0;
      case OpTypeStruct: {
        uint32_t end = 0;
        auto& d = dec[id];
        for (uint32_t m = 0; m < t.members.size(); ++m)
          end = std::max(end, (d.member_offset.count(m) ? d.member_offset[m] : 0) + size_of(t.members[m]));
        return end;
      }
      default: return 0;
    }
  };

  for (auto [var, ptr_type] : variables) {
    auto pt = types.find(ptr_type);
    if (pt == types.end() || pt->second.op != OpTypePointer) continue;
    uint32_t sc = pt->second.storage, block = pt->second.pointee;
    if (sc == ScPushConstant) {
      out.push_constant_bytes = size_of(block);
      continue;
    }
    if (sc != ScStorageBuffer && sc != ScUniform) continue;
    // Arrays of blocks are not used by blueshift kernels; reject them clearly.
    if (types.count(block) && types[block].op == OpTypeArray) fail("SPIR-V: arrays of descriptors are not supported");
    auto& vd = dec[var];
    auto& bd = dec[block];
    ReflectedBinding b;
    b.set = vd.set;
    b.binding = vd.binding;
    b.kind = (sc == ScStorageBuffer || bd.buffer_block) ? BindingKind::storage : BindingKind::uniform;
    bool nw = vd.non_writable, nr = vd.non_readable;
    if (auto ma = member_access.find(block); ma != member_access.end() && types.count(block)) {
      size_t nm = types[block].members.size();
      bool all_nw = ma->second.size() == nm, all_nr = ma->second.size() == nm;
      for (auto& [m, acc] : ma->second) { all_nw &= acc.first; all_nr &= acc.second; }
      nw |= all_nw;
      nr |= all_nr;
    }
    b.writes = b.kind == BindingKind::storage && !nw;
    b.reads = !nr;
    b.name = names.count(var) && !names[var].empty() ? names[var] : names[block];
    out.bindings.push_back(b);
  }
  std::sort(out.bindings.begin(), out.bindings.end(),
            [](auto& x, auto& y) { return std::pair(x.set, x.binding) < std::pair(y.set, y.binding); });
  // Several views of one binding (GLSL blocks that alias it, e.g. floats and vec4s of one buffer) are one descriptor
  // that each view's accesses use.
  std::vector<ReflectedBinding> merged;
  for (auto& b : out.bindings) {
    if (merged.empty() || merged.back().set != b.set || merged.back().binding != b.binding) {
      merged.push_back(b);
      continue;
    }
    auto& m = merged.back();
    if (m.kind != b.kind)
      fail("SPIR-V: set {} binding {} is declared both as a uniform and as a storage buffer ({}, {})", b.set, b.binding,
           m.name, b.name);
    m.reads |= b.reads;
    m.writes |= b.writes;
    m.name += "/" + b.name;
  }
  out.bindings = std::move(merged);

  // Workgroup size from specialization constants (layout(local_size_x_id = N)).
  for (auto& [id, d] : dec) {
    if (d.builtin != int32_t(BuiltInWorkgroupSize) || !composites.count(id)) continue;
    auto& parts = composites[id];
    for (size_t k = 0; k < 3 && k < parts.size(); ++k) {
      if (constants.count(parts[k])) out.local_size[k] = constants[parts[k]];
      if (dec.count(parts[k])) out.local_size_spec_id[k] = dec[parts[k]].spec_id;
    }
  }
  return out;
}

}  // namespace bs::gpu
