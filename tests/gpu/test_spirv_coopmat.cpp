// The NV -> KHR cooperative-matrix rewrite (runtime/gpu/spirv_coopmat.h) on every embedded kernel that uses
// NV cooperative matrices, checked structurally (no device here has both extensions but the H100, where
// test_coopmat runs the rewritten kernels against the float64 references), and its refusals and malformed input.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "kernels_glsl/kernels.h"
#include "runtime/base/error.h"
#include "runtime/gpu/kernel_cache.h"
#include "runtime/gpu/spirv_coopmat.h"
#include "runtime/gpu/spirv_reflect.h"

namespace bs::testing {
namespace {

using gpu::coopmat_nv_to_khr;
using gpu::uses_coopmat_nv;

struct Module {
  std::map<uint32_t, std::vector<uint32_t>> def;  // result id -> instruction words
  std::map<uint32_t, uint32_t> type_of;           // value id -> type id
  std::vector<std::vector<uint32_t>> all;
  std::set<uint32_t> opcodes, capabilities;
  uint32_t max_id = 0;
};

// Opcodes with a result type and result id that the checks below look at; the rest only need their ids.
Module read(std::span<const uint32_t> w) {
  Module m;
  for (size_t i = 5; i < w.size();) {
    uint32_t op = w[i] & 0xffff, n = w[i] >> 16;
    std::vector<uint32_t> ins(w.begin() + i, w.begin() + i + n);
    m.all.push_back(ins);
    m.opcodes.insert(op);
    if (op == 17) m.capabilities.insert(ins[1]);
    // types (result first), constants and values (type, result)
    bool type_decl = (op >= 19 && op <= 39) || op == 4456 || op == 5358;
    if (type_decl && n > 1) m.def[ins[1]] = ins, m.max_id = std::max(m.max_id, ins[1]);
    if ((op == 43 || op == 41 || op == 42 || op == 59 || op == 61 || op == 4457 || op == 4459 || op == 5359 ||
         op == 5361 || op == 245 || op == 83) && n > 2) {
      m.def[ins[2]] = ins, m.type_of[ins[2]] = ins[1], m.max_id = std::max(m.max_id, ins[2]);
    }
    i += n;
  }
  return m;
}

uint32_t constant_value(const Module& m, uint32_t id) {
  auto it = m.def.find(id);
  EXPECT_NE(it, m.def.end()) << "%" << id << " is not defined";
  if (it == m.def.end()) return ~0u;
  EXPECT_EQ(it->second[0] & 0xffff, 43u) << "%" << id << " is not an OpConstant";
  return it->second.back();
}

// Checks the KHR module against the NV one it came from.
void check_rewrite(std::string_view name, std::span<const uint32_t> nv, const std::vector<uint32_t>& khr) {
  SCOPED_TRACE(std::string(name));
  Module a = read(nv), b = read(khr);
  EXPECT_TRUE(b.capabilities.count(6022));
  EXPECT_FALSE(b.capabilities.count(5357));
  for (uint32_t op : {5358u, 5359u, 5360u, 5361u, 5362u}) EXPECT_FALSE(b.opcodes.count(op)) << "NV opcode " << op << " left";
  EXPECT_GT(khr[3], b.max_id) << "id bound";
  // Every multiply-add: A, B and the accumulator typed with their uses; the result typed as C.
  size_t mul_adds = 0;
  for (const auto& ins : b.all) {
    if ((ins[0] & 0xffff) != 4459) continue;
    ++mul_adds;
    const uint32_t want[3] = {0, 1, 2};
    for (int k = 0; k < 3; ++k) {
      uint32_t t = b.type_of.count(ins[3 + k]) ? b.type_of[ins[3 + k]] : 0;
      ASSERT_TRUE(b.def.count(t)) << "operand " << k << " %" << ins[3 + k] << " has no known type";
      const auto& td = b.def[t];
      ASSERT_EQ(td[0] & 0xffff, 4456u) << "operand " << k << " is not a KHR matrix";
      EXPECT_EQ(constant_value(b, td[6]), want[k]) << "operand " << k << "'s use";
    }
    EXPECT_EQ(ins[1], b.type_of[ins[5]]) << "result type vs C's type";
  }
  size_t nv_mul_adds = 0;
  for (const auto& ins : a.all) nv_mul_adds += (ins[0] & 0xffff) == 5361;
  EXPECT_EQ(mul_adds, nv_mul_adds);
  // Loads and stores: the same layouts in the same order.
  std::vector<uint32_t> nv_layouts, khr_layouts;
  for (const auto& ins : a.all) {
    uint32_t op = ins[0] & 0xffff;
    if (op == 5359) nv_layouts.push_back((a.def.at(ins[5])[0] & 0xffff) == 41 ? 1 : 0);
    if (op == 5360) nv_layouts.push_back((a.def.at(ins[4])[0] & 0xffff) == 41 ? 1 : 0);
  }
  for (const auto& ins : b.all) {
    uint32_t op = ins[0] & 0xffff;
    if (op == 4457) khr_layouts.push_back(constant_value(b, ins[4]));
    if (op == 4458) khr_layouts.push_back(constant_value(b, ins[3]));
  }
  EXPECT_EQ(nv_layouts, khr_layouts);
  // The pipeline plumbing is unchanged.
  auto ra = gpu::reflect_spirv(nv), rb = gpu::reflect_spirv(khr);
  EXPECT_EQ(ra.bindings.size(), rb.bindings.size());
  EXPECT_EQ(ra.push_constant_bytes, rb.push_constant_bytes);
  EXPECT_EQ(ra.local_size, rb.local_size);
}

TEST(SpirvCoopmat, EveryEmbeddedCoopmatKernelRewrites) {
  size_t rewritten = 0, plain = 0;
  for (const auto& k : kernels::all()) {
    if (!uses_coopmat_nv(k.spirv)) {
      ++plain;
      continue;
    }
    std::string why;
    auto r = coopmat_nv_to_khr(k.spirv, &why);
    ASSERT_TRUE(r) << k.name << ": " << why;
    check_rewrite(k.name, k.spirv, r->words);
    ++rewritten;
  }
  EXPECT_GT(rewritten, 20u);
  EXPECT_GT(plain, 100u);
}

// The start of the GLSL modules below: NV cooperative matrices over an f16 input and an f32 output.
constexpr const char* kHeader = R"(#version 450
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer X { float16_t x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
)";

// One f16 fragment type used as A and as B (the prefill GEMM's case): the B values get a type of their own.
TEST(SpirvCoopmat, SplitsATypeUsedAsAAndB) {
  const std::string src = std::string(kHeader) + R"(void main() {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a, b;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  for (uint k = 0; k < 4; ++k) {
    coopMatLoadNV(a, x, 256 * k, 16, false);
    coopMatLoadNV(b, x, 1024 + 256 * k, 16, true);
    c = coopMatMulAddNV(a, b, c);
  }
  coopMatStoreNV(c, y, 0, 16, false);
})";
  auto nv = gpu::compile_glsl(src, "split.comp", {});
  ASSERT_TRUE(uses_coopmat_nv(nv));
  std::string why;
  auto r = coopmat_nv_to_khr(nv, &why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->types, 3u);  // f16 as A, f16 as B, f32 accumulator
  check_rewrite("split.comp", nv, r->words);
}

TEST(SpirvCoopmat, RefusesOneValueAsAAndB) {
  const std::string src = std::string(kHeader) + R"(void main() {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  coopMatLoadNV(a, x, 0, 16, false);
  c = coopMatMulAddNV(a, a, c);
  coopMatStoreNV(c, y, 0, 16, false);
})";
  auto nv = gpu::compile_glsl(src, "square.comp", {});
  std::string why;
  EXPECT_FALSE(coopmat_nv_to_khr(nv, &why));
  EXPECT_NE(why.find("used both"), std::string::npos) << why;
}

TEST(SpirvCoopmat, ModulesWithoutCoopmat) {
  const auto* k = kernels::find("rms_norm_f32");
  ASSERT_NE(k, nullptr);
  EXPECT_FALSE(uses_coopmat_nv(k->spirv));
  std::string why;
  EXPECT_FALSE(coopmat_nv_to_khr(k->spirv, &why));
  EXPECT_NE(why.find("no cooperative matrix type"), std::string::npos) << why;
}

TEST(SpirvCoopmat, MalformedModulesThrow) {
  const auto* k = kernels::find("matmul_cm_f16_128x128sk64");
  ASSERT_NE(k, nullptr);
  std::vector<uint32_t> w(k->spirv.begin(), k->spirv.end());
  EXPECT_THROW(uses_coopmat_nv(std::span(w).first(3)), Error);
  auto bad_magic = w;
  bad_magic[0] ^= 1;
  EXPECT_THROW(coopmat_nv_to_khr(bad_magic), Error);
  // Cut inside an instruction: its length runs past the end.
  for (size_t cut : {size_t(6), w.size() / 2 + 1, w.size() - 1}) {
    auto t = std::vector<uint32_t>(w.begin(), w.begin() + cut);
    bool ends_on_boundary = false;
    for (size_t i = 5; i <= t.size(); i += std::max<uint32_t>(1, w[i] >> 16))
      if (i == t.size()) ends_on_boundary = true;
    if (!ends_on_boundary) {
      EXPECT_THROW(coopmat_nv_to_khr(t), Error) << "cut at " << cut;
    }
  }
  auto zero = w;
  zero[5] = 0;  // an instruction of length 0
  EXPECT_THROW(coopmat_nv_to_khr(zero), Error);
}

}  // namespace
}  // namespace bs::testing
