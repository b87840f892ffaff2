// Fixture for running corpus kernels on the GPU (lavapipe in CI) through bs_gpu: WGSL -> SPIR-V
// with blueshift's compiler, then the ordinary createShaderModule / createComputePipeline path.
#pragma once
#include <memory>

#include "runtime/gpu/gpu.h"
#include "tests/gpu/gpu_test.h"
#include "tests/wgsl/wgsl_test.h"

namespace bs::testing {

class WgslGpu : public GpuTest {
 protected:
  struct Kernel {
    wgsl::CompiledShader shader;
    std::unique_ptr<gpu::ShaderModule> module;
    std::unique_ptr<gpu::ComputePipeline> pipeline;
  };

  std::unique_ptr<Kernel> kernel(const std::string& file, const std::string& entry = "",
                                 std::map<std::string, double> constants = {}) {
    auto k = std::make_unique<Kernel>();
    k->shader = wgsl::wgsl_to_spirv(corpus(file), entry, constants, file);
    k->module = std::make_unique<gpu::ShaderModule>(device().createShaderModule(k->shader.spirv, file));
    gpu::ComputePipelineDesc desc;
    desc.module = k->module.get();
    desc.label = file + ":" + k->shader.entry;
    k->pipeline = std::make_unique<gpu::ComputePipeline>(device().createComputePipeline(desc));
    EXPECT_EQ(k->pipeline->workgroupSize(), k->shader.workgroup_size);
    return k;
  }

  void run(const Kernel& k, std::vector<gpu::BindGroupEntry> entries, uint32_t gx, uint32_t gy = 1, uint32_t gz = 1) {
    auto bg = device().createBindGroup(*k.pipeline, 0, entries);
    auto enc = device().createCommandEncoder(k.pipeline->label());
    auto pass = enc.beginComputePass();
    pass.setPipeline(*k.pipeline);
    pass.setBindGroup(0, bg);
    pass.dispatchWorkgroups(gx, gy, gz);
    auto cb = enc.finish();
    device().queue().wait(device().queue().submit(cb));
  }

  template <class T>
  gpu::Buffer bytes_buffer(const T* data, size_t bytes) {
    auto b = device().createBuffer({bytes, gpu::BufferUsage::storage, "wgsl test"});
    device().queue().writeBuffer(b, 0, data, bytes);
    return b;
  }
};

}  // namespace bs::testing
