// The runtime hook: device.createShaderModuleWGSL + createComputePipeline with WebGPU-style override
// constants by name, layouts reflected from the WGSL, wgpu's var<push_constant>, and KernelCache's
// WGSL kernel set (same names as the GLSL set; unknown names fail naming the kernel).
#include <gtest/gtest.h>

#include <bit>

#include "runtime/base/error.h"
#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

// y[i] = x[i] * SCALE + p.bias for i < p.n; SCALE by name, the workgroup size by @id(0).
const char* kScaleAdd = R"(
struct Params {
  n: u32,
  bias: f32,
}
var<push_constant> p: Params;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@id(0) override WG: u32 = 64;
override SCALE: f32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  if (gid.x < p.n) {
    y[gid.x] = x[gid.x] * SCALE + p.bias;
  }
}
)";

struct ScaleAddParams {
  uint32_t n;
  float bias;
};

class WgslRuntime : public GpuTest {
 protected:
  std::vector<float> run_scale_add(const gpu::ComputePipeline& p, const std::vector<float>& x, float bias) {
    auto xb = upload(x);
    auto yb = poisoned(x.size() * 4);
    uint32_t n = uint32_t(x.size());
    run_once(p, {{0, &xb}, {2, &yb}}, ScaleAddParams{n, bias}, (n + p.workgroupSize()[0] - 1) / p.workgroupSize()[0]);
    std::vector<float> y(x.size());
    device().queue().readBuffer(yb, 0, y.data(), y.size() * 4);
    return y;
  }
};

TEST_F(WgslRuntime, OverridesByNameLayoutAndPushConstantsComeFromTheWgsl) {
  auto module = device().createShaderModuleWGSL(kScaleAdd, "scale_add.wgsl");
  ASSERT_NE(module.wgsl(), nullptr);
  gpu::ComputePipelineDesc desc;
  desc.module = &module;
  desc.overrides = {{"SCALE", 2.5}, {"WG", 32}};
  desc.label = "scale_add";
  auto p = device().createComputePipeline(desc);
  EXPECT_EQ(p.workgroupSize(), (std::array<uint32_t, 3>{32, 1, 1}));
  EXPECT_EQ(p.pushConstantBytes(), 8u);
  ASSERT_EQ(p.bindings().size(), 2u);
  EXPECT_EQ(p.bindings()[0].binding, 0u);
  EXPECT_FALSE(p.bindings()[0].writes);  // var<storage, read>
  EXPECT_EQ(p.bindings()[1].binding, 2u);
  EXPECT_TRUE(p.bindings()[1].writes);
  auto x = random_floats(100);
  auto y = run_scale_add(p, x, 0.25f);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], x[i] * 2.5f + 0.25f) << i;
}

TEST_F(WgslRuntime, SpecializationConstantsReachOverridesById) {
  auto module = device().createShaderModuleWGSL(kScaleAdd, "scale_add.wgsl");
  gpu::ComputePipelineDesc desc;
  desc.module = &module;
  desc.constants = {{0, 16}};  // @id(0) WG, as KernelCache passes the GLSL kernels' spec constants
  desc.overrides = {{"SCALE", -1.0}};
  auto p = device().createComputePipeline(desc);
  EXPECT_EQ(p.workgroupSize()[0], 16u);
  auto x = random_floats(40);
  auto y = run_scale_add(p, x, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], 1.0f - x[i]) << i;

  desc.constants = {{7, 1}};
  try {
    device().createComputePipeline(desc);
    FAIL() << "a spec constant without a matching @id was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("@id(7)"), std::string::npos) << e.what();
  }
}

TEST_F(WgslRuntime, BadWgslAndUnknownOverridesFailWithDiagnostics) {
  try {
    device().createShaderModuleWGSL("@compute @workgroup_size(1) fn main() { let a: u32 = 1.5; }", "bad.wgsl");
    FAIL() << "invalid WGSL was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("bad.wgsl:1:"), std::string::npos) << e.what();
  }
  auto module = device().createShaderModuleWGSL(kScaleAdd, "scale_add.wgsl");
  gpu::ComputePipelineDesc desc;
  desc.module = &module;
  desc.overrides = {{"SCALE", 1.0}, {"SCALLOP", 2.0}};
  try {
    device().createComputePipeline(desc);
    FAIL() << "an unknown override name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SCALLOP"), std::string::npos) << e.what();
  }
  desc.overrides = {};  // SCALE has no default: WebGPU requires a value
  EXPECT_THROW(device().createComputePipeline(desc), Error);
}

TEST_F(WgslRuntime, KernelCacheServesTheWgslSetUnderTheGlslNames) {
  gpu::KernelCache wk(device(), gpu::KernelSource::wgsl);
  for (const char* name : {"rms_norm_f32", "rms_norm_add_f32", "matvec_f16", "matvec_q8_0", "embed_f16", "rope_f32",
                           "kv_store_f16", "attention_f16kv", "gated_act_f32", "sample", "gate"}) {
    EXPECT_TRUE(wk.has(name)) << name;
    EXPECT_TRUE(kernels().has(name)) << name;
  }
  EXPECT_FALSE(wk.has("matmul_f16"));
  EXPECT_TRUE(kernels().has("matmul_f16"));
  try {
    wk.get("matmul_f16");
    FAIL() << "a kernel missing from the WGSL set was served";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'matmul_f16'"), std::string::npos) << e.what();
  }

  // rms_norm through both sets on the same input: same layout (bindings, push constants), same answer.
  const uint32_t n = 300, rows = 3;
  auto x = random_floats(n * rows), w = random_floats(n);
  auto xb = upload(x), wb = upload(w);
  std::vector<std::vector<float>> out;
  for (gpu::KernelCache* kc : {&kernels(), &wk}) {
    const auto& p = kc->get("rms_norm_f32", {{0, 64}});
    EXPECT_EQ(p.pushConstantBytes(), sizeof(kparams::RmsNormParams));
    EXPECT_EQ(p.workgroupSize()[0], 64u);
    auto yb = poisoned(n * rows * 4);
    run_once(p, {{0, &xb}, {1, &wb}, {2, &yb}}, kparams::RmsNormParams{n, rows, 1e-5f, 0.0f}, rows);
    out.emplace_back(n * rows);
    device().queue().readBuffer(yb, 0, out.back().data(), n * rows * 4);
  }
  for (size_t i = 0; i < out[0].size(); ++i) EXPECT_NEAR(out[1][i], out[0][i], 1e-5f * (1 + std::fabs(out[0][i]))) << i;
}

}  // namespace
}  // namespace bs::testing
