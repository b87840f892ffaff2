// Fixture for tests that run on a Vulkan device (lavapipe in CI). One device per test process; a
// validation-layer message during a test fails that test.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "kernels_glsl/params.h"
#include "runtime/base/half.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/kernel_cache.h"
#include "tests/common/testing.h"

namespace bs::testing {

class GpuTest : public ::testing::Test {
 protected:
  static gpu::Device& device() {
    static std::unique_ptr<gpu::Device> d = std::make_unique<gpu::Device>();
    return *d;
  }
  static gpu::KernelCache& kernels() {
    static gpu::KernelCache k(device());
    return k;
  }
  void SetUp() override {
    device();
    gpu::reset_validation_messages();
  }
  void TearDown() override {
    EXPECT_EQ(gpu::validation_message_count(), 0u) << "validation layer: " << gpu::last_validation_message();
  }

  // A storage buffer holding `data`.
  template <class T>
  gpu::Buffer upload(const std::vector<T>& data, const char* label = "test input") {
    auto b = device().createBuffer({data.size() * sizeof(T), gpu::BufferUsage::storage, label});
    device().queue().writeBuffer(b, 0, data.data(), data.size() * sizeof(T));
    return b;
  }
  // A storage buffer of n elements filled with a poison pattern (NaN for floats), so a kernel that
  // skips an element cannot pass by accident.
  gpu::Buffer poisoned(size_t bytes, const char* label = "test output") {
    auto b = device().createBuffer({bytes, gpu::BufferUsage::storage, label});
    std::vector<uint8_t> poison(bytes, 0xff);
    device().queue().writeBuffer(b, 0, poison.data(), bytes);
    return b;
  }
  // Records one dispatch of `p` with one bind group and push constants, submits, waits.
  template <class P>
  void run_once(const gpu::ComputePipeline& p, std::vector<gpu::BindGroupEntry> entries, const P& params,
                uint32_t gx, uint32_t gy = 1) {
    run_once_with(p, entries, &params, sizeof(P), gx, gy);
  }
  // ... a kernel without push constants.
  void run_once_plain(const gpu::ComputePipeline& p, std::vector<gpu::BindGroupEntry> entries, uint32_t gx) {
    run_once_with(p, entries, nullptr, 0, gx, 1);
  }
  void run_once_with(const gpu::ComputePipeline& p, const std::vector<gpu::BindGroupEntry>& entries,
                     const void* params, uint32_t params_bytes, uint32_t gx, uint32_t gy) {
    auto bg = device().createBindGroup(p, 0, entries);
    auto enc = device().createCommandEncoder(p.label());
    auto pass = enc.beginComputePass();
    pass.setPipeline(p);
    pass.setBindGroup(0, bg);
    if (params_bytes) pass.setPushConstants(params, params_bytes);
    pass.dispatchWorkgroups(gx, gy);
    auto cb = enc.finish();
    device().queue().wait(device().queue().submit(cb));
  }
  template <class T>
  std::vector<T> download(const gpu::Buffer& b, size_t n) {
    std::vector<T> out(n);
    device().queue().readBuffer(b, 0, out.data(), n * sizeof(T));
    return out;
  }
};

}  // namespace bs::testing
