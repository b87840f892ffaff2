#include "runtime/gpu/spirv_coopmat.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#define SPV_ENABLE_UTILITY_CODE
#include <spirv/unified1/spirv.hpp>

#include "runtime/base/error.h"

namespace bs::gpu {

namespace {

// SPV_KHR_cooperative_matrix's numbers (Debian 12's SPIRV-Headers predate the extension); the NV ones come
// from spirv.hpp.
enum : uint32_t {
  OpTypeCooperativeMatrixKHR = 4456, OpCooperativeMatrixLoadKHR = 4457, OpCooperativeMatrixStoreKHR = 4458,
  OpCooperativeMatrixMulAddKHR = 4459, OpCooperativeMatrixLengthKHR = 4460, CapabilityCooperativeMatrixKHR = 6022,
};
enum Use : uint32_t { kUseA = 0, kUseB = 1, kUseAcc = 2 };  // CooperativeMatrixUse
constexpr const char* kNvExtension = "SPV_NV_cooperative_matrix";
constexpr const char* kKhrExtension = "SPV_KHR_cooperative_matrix";

struct Inst {
  uint32_t op = 0, n = 0;  // opcode, word count
  size_t at = 0;           // index of the first word
  uint32_t type = 0, result = 0;
};

std::vector<Inst> parse(std::span<const uint32_t> w) {
  if (w.size() < 5 || w[0] != 0x07230203u) fail("SPIR-V: bad magic or truncated header ({} words)", w.size());
  std::vector<Inst> out;
  for (size_t i = 5; i < w.size();) {
    Inst in{w[i] & 0xffffu, w[i] >> 16, i};
    if (in.n == 0 || i + in.n > w.size())
      fail("SPIR-V: instruction at word {} has length {} past the module's {} words", i, in.n, w.size());
    bool has_result = false, has_type = false;
    spv::HasResultAndType(spv::Op(in.op), &has_result, &has_type);
    size_t k = i + 1;
    if (has_type && k < i + in.n) in.type = w[k++];
    if (has_result && k < i + in.n) in.result = w[k];
    out.push_back(in);
    i += in.n;
  }
  return out;
}

std::vector<uint32_t> string_words(const char* s) {
  std::vector<uint32_t> out;
  std::string str(s);
  str.resize((str.size() / 4 + 1) * 4, '\0');
  for (size_t i = 0; i < str.size(); i += 4)
    out.push_back(uint32_t(uint8_t(str[i])) | uint32_t(uint8_t(str[i + 1])) << 8 | uint32_t(uint8_t(str[i + 2])) << 16 |
                  uint32_t(uint8_t(str[i + 3])) << 24);
  return out;
}

uint32_t word0(uint32_t op, size_t n) { return uint32_t(n) << 16 | op; }

// Union-find over ids.
struct Classes {
  std::unordered_map<uint32_t, uint32_t> parent;
  uint32_t find(uint32_t x) {
    auto it = parent.find(x);
    if (it == parent.end()) return parent[x] = x;
    if (it->second == x) return x;
    return it->second = find(it->second);
  }
  void join(uint32_t a, uint32_t b) { parent[find(a)] = find(b); }
};

}  // namespace

bool uses_coopmat_nv(std::span<const uint32_t> w) {
  for (const auto& in : parse(w))
    if (in.op == spv::OpCapability && in.n == 2 && w[in.at + 1] == spv::CapabilityCooperativeMatrixNV) return true;
  return false;
}

std::optional<CoopmatRewrite> coopmat_nv_to_khr(std::span<const uint32_t> w, std::string* why) {
  auto refuse = [&](std::string reason) -> std::optional<CoopmatRewrite> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const std::vector<Inst> insts = parse(w);

  // Types: which ones hold a cooperative matrix (the matrix itself, a pointer to or an array of one).
  std::unordered_map<uint32_t, uint32_t> holds;  // type id -> the NV matrix type inside it
  std::unordered_map<uint32_t, const Inst*> def;  // result id -> its instruction
  std::vector<uint32_t> matrix_types;
  uint32_t uint_type = 0;
  size_t uint_at = 0, first_matrix_at = 0;
  for (const auto& in : insts) {
    if (in.result) def[in.result] = &in;
    const uint32_t* o = &w[in.at + 1];
    switch (in.op) {
      case spv::OpTypeCooperativeMatrixNV:
        holds[in.result] = in.result;
        if (matrix_types.empty()) first_matrix_at = in.at;
        matrix_types.push_back(in.result);
        break;
      case spv::OpTypePointer:
        if (holds.count(o[2])) holds[in.result] = holds[o[2]];
        break;
      case spv::OpTypeArray:
      case spv::OpTypeRuntimeArray:
        if (holds.count(o[1])) holds[in.result] = holds[o[1]];
        break;
      case spv::OpTypeStruct:
        for (uint32_t k = 1; k < in.n - 1; ++k)
          if (holds.count(o[k])) return refuse("a struct has a cooperative matrix member");
        break;
      case spv::OpTypeInt:
        if (o[1] == 32 && o[2] == 0 && !uint_type) uint_type = in.result, uint_at = in.at;
        break;
      default: break;
    }
  }
  if (matrix_types.empty()) return refuse("the module has no cooperative matrix type");
  if (!uint_type || uint_at > first_matrix_at) return refuse("no 32-bit unsigned integer type before the first matrix type");

  auto matrix_of = [&](uint32_t id) -> uint32_t {  // the NV matrix type a value holds, or 0
    auto d = def.find(id);
    if (d == def.end() || !d->second->type) return 0;
    auto h = holds.find(d->second->type);
    return h == holds.end() ? 0 : h->second;
  };

  // Values that must share one use: whatever flows between them through loads, stores, phis, selects,
  // copies and element-wise arithmetic. A multiply-add's result joins its accumulator.
  Classes cls;
  std::unordered_set<uint32_t> length_types;  // the types OpCooperativeMatrixLengthNV asks about
  for (const auto& in : insts) {
    const uint32_t* o = &w[in.at + 1];
    switch (in.op) {
      case spv::OpFunction:
      case spv::OpFunctionParameter:
        if (holds.count(in.type)) return refuse("a function takes or returns a cooperative matrix");
        continue;
      case spv::OpFunctionCall:
        for (uint32_t k = 3; k < in.n - 1; ++k)
          if (matrix_of(o[k])) return refuse("a function call passes a cooperative matrix");
        continue;
      case spv::OpCooperativeMatrixMulAddNV: cls.join(in.result, o[4]); continue;
      case spv::OpCooperativeMatrixLoadNV: cls.find(in.result); continue;
      case spv::OpCooperativeMatrixStoreNV: cls.find(o[1]); continue;
      case spv::OpCooperativeMatrixLengthNV: length_types.insert(o[2]); continue;
      case spv::OpLoad:
        if (matrix_of(in.result)) cls.join(in.result, o[2]);
        continue;
      case spv::OpStore:
        if (matrix_of(o[1])) cls.join(o[0], o[1]);
        continue;
      case spv::OpCompositeExtract:  // literal indices follow the composite
        if (matrix_of(in.result)) cls.join(in.result, o[2]);
        continue;
      case spv::OpCompositeInsert:
        if (matrix_of(in.result)) cls.join(in.result, o[3]), cls.join(in.result, o[2]);
        continue;
      default: break;
    }
    if (!in.result || !matrix_of(in.result)) continue;
    for (uint32_t k = (in.type ? 2 : 1); k < in.n - 1; ++k)
      if (matrix_of(o[k])) cls.join(in.result, o[k]);
  }

  // Each class's use, from the multiply-adds.
  std::unordered_map<uint32_t, uint32_t> uses;  // class root -> bit set of Use
  for (const auto& in : insts) {
    if (in.op != spv::OpCooperativeMatrixMulAddNV) continue;
    const uint32_t* o = &w[in.at + 1];
    uses[cls.find(o[2])] |= 1u << kUseA;
    uses[cls.find(o[3])] |= 1u << kUseB;
    uses[cls.find(in.result)] |= 1u << kUseAcc;
  }
  auto use_of = [&](uint32_t id) -> int {  // -1: two uses meet
    auto it = uses.find(cls.find(id));
    uint32_t u = it == uses.end() ? 1u << kUseAcc : it->second;  // matrices only loaded and stored: accumulators
    if (u & (u - 1)) return -1;
    return u == 1u ? kUseA : u == 2u ? kUseB : kUseAcc;
  };

  // Each NV type's uses. The first (A before B before the accumulator) keeps the type's id; each further use
  // gets a new type, and its values (and their variables' pointer types) are retyped.
  std::map<uint32_t, std::map<uint32_t, std::vector<uint32_t>>> values;  // matrix type -> use -> value ids
  for (const auto& [id, d] : def) {
    uint32_t m = matrix_of(id);
    if (!m) continue;  // types have no result type: only values and variables get here
    int u = use_of(id);
    if (u < 0) return refuse("value %" + std::to_string(id) + " is used both as A or B and as another operand");
    values[m][uint32_t(u)].push_back(id);
  }
  uint32_t bound = w[3];
  std::map<uint32_t, uint32_t> own_use;                              // matrix type -> the use its id keeps
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> extra;  // matrix type -> (use, new type id)
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> new_pointers;   // (storage class, new type) -> pointer id
  std::unordered_map<uint32_t, uint32_t> retype;                    // value id -> its new type
  for (uint32_t m : matrix_types) {
    auto& by_use = values[m];
    own_use[m] = by_use.empty() ? uint32_t(kUseAcc) : by_use.begin()->first;
    for (auto it = by_use.begin(); it != by_use.end(); ++it) {
      if (it == by_use.begin()) continue;
      if (length_types.count(m)) return refuse("the length of a type used two ways");
      uint32_t t = bound++;
      extra[m].push_back({it->first, t});
      for (uint32_t id : it->second) {
        const Inst* d = def[id];
        if (d->type == m) {
          retype[id] = t;
        } else {
          const Inst* pt = def.count(d->type) ? def[d->type] : nullptr;
          if (!pt || pt->op != spv::OpTypePointer || w[pt->at + 3] != m)
            return refuse("value %" + std::to_string(id) + " of a type used two ways is an array or a pointer to one");
          auto key = std::make_pair(w[pt->at + 2], t);
          if (!new_pointers.count(key)) new_pointers[key] = bound++;
          retype[id] = new_pointers[key];
        }
      }
    }
  }

  // Layout operands: the NV column-major flag must be a constant.
  auto layout_of = [&](uint32_t flag) -> int {
    auto d = def.find(flag);
    if (d == def.end()) return -1;
    if (d->second->op == spv::OpConstantTrue) return 1;
    if (d->second->op == spv::OpConstantFalse) return 0;
    return -1;
  };
  const uint32_t kConst[3] = {bound, bound + 1, bound + 2};  // uint 0, 1, 2: uses and layouts
  bound += 3;

  CoopmatRewrite out;
  auto& o = out.words;
  o.assign(w.begin(), w.begin() + 5);
  for (const auto& in : insts) {
    std::vector<uint32_t> ins(w.begin() + in.at, w.begin() + in.at + in.n);
    if (in.type && retype.count(in.result)) ins[1] = retype[in.result];
    switch (in.op) {
      case spv::OpCapability:
        if (ins[1] == spv::CapabilityCooperativeMatrixNV) ins[1] = CapabilityCooperativeMatrixKHR;
        break;
      case spv::OpExtension:
        if (std::vector<uint32_t>(ins.begin() + 1, ins.end()) == string_words(kNvExtension)) {
          auto s = string_words(kKhrExtension);
          ins.assign(1, word0(spv::OpExtension, s.size() + 1));
          ins.insert(ins.end(), s.begin(), s.end());
        }
        break;
      case spv::OpTypeCooperativeMatrixNV: {
        if (in.at == first_matrix_at)
          for (uint32_t v = 0; v < 3; ++v) o.insert(o.end(), {word0(spv::OpConstant, 4), uint_type, kConst[v], v});
        auto khr = [&](uint32_t id, uint32_t use) {
          o.insert(o.end(), {word0(OpTypeCooperativeMatrixKHR, 7), id, ins[2], ins[3], ins[4], ins[5], kConst[use]});
          ++out.types;
        };
        khr(in.result, own_use[in.result]);
        for (auto [use, t] : extra[in.result]) {
          khr(t, use);
          for (auto [key, p] : new_pointers)
            if (key.second == t) o.insert(o.end(), {word0(spv::OpTypePointer, 4), p, key.first, t});
        }
        continue;
      }
      case spv::OpCooperativeMatrixLoadNV: {  // type, result, pointer, stride, column-major[, memory operands]
        int layout = layout_of(ins[5]);
        if (layout < 0) return refuse("a load's column-major flag is not a constant");
        std::vector<uint32_t> k = {0, ins[1], ins[2], ins[3], kConst[layout], ins[4]};
        k.insert(k.end(), ins.begin() + 6, ins.end());
        k[0] = word0(OpCooperativeMatrixLoadKHR, k.size());
        ins = k;
        break;
      }
      case spv::OpCooperativeMatrixStoreNV: {  // pointer, object, stride, column-major[, memory operands]
        int layout = layout_of(ins[4]);
        if (layout < 0) return refuse("a store's column-major flag is not a constant");
        std::vector<uint32_t> k = {0, ins[1], ins[2], kConst[layout], ins[3]};
        k.insert(k.end(), ins.begin() + 5, ins.end());
        k[0] = word0(OpCooperativeMatrixStoreKHR, k.size());
        ins = k;
        break;
      }
      case spv::OpCooperativeMatrixMulAddNV: ins[0] = word0(OpCooperativeMatrixMulAddKHR, ins.size()); break;
      case spv::OpCooperativeMatrixLengthNV: ins[0] = word0(OpCooperativeMatrixLengthKHR, ins.size()); break;
      default: break;
    }
    o.insert(o.end(), ins.begin(), ins.end());
  }
  o[3] = bound;
  return out;
}

}  // namespace bs::gpu
