// The hazard tracker: barriers exactly where a dispatch depends on an earlier one.
#include <gtest/gtest.h>

#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using kparams::MatvecParams;

class Hazards : public GpuTest {
 protected:
  // y = W x through matvec_f16 with W = identity * scale, so a chain multiplies by scale each step.
  gpu::Buffer identity(uint32_t n, float scale) {
    std::vector<uint16_t> w(size_t(n) * n, float_to_half(0.0f));
    for (uint32_t i = 0; i < n; ++i) w[size_t(i) * n + i] = float_to_half(scale);
    return upload(w, "identity");
  }
  // A chain of `steps` dispatches, step i reading bufs[i] and writing bufs[i + 1] (poisoned), each times 2.
  struct Chain {
    gpu::Buffer w;
    std::vector<float> x;
    std::vector<gpu::Buffer> bufs;
    std::vector<gpu::BindGroup> groups;
  };
  Chain chain(uint32_t n, uint32_t steps, const gpu::ComputePipeline& p) {
    Chain c{identity(n, 2.0f), random_floats(n), {}, {}};
    c.bufs.push_back(upload(c.x));
    for (uint32_t i = 0; i < steps; ++i) c.bufs.push_back(poisoned(n * 4));
    for (uint32_t i = 0; i < steps; ++i) {
      gpu::BindGroupEntry e[] = {{0, &c.w}, {1, &c.bufs[i]}, {2, &c.bufs[i + 1]}};
      c.groups.push_back(device().createBindGroup(p, 0, e));
    }
    return c;
  }
};

TEST_F(Hazards, DependentChainIsCorrectAndBarriered) {
  const uint32_t n = 64, steps = 6;
  const auto& p = kernels().get("matvec_f16", {{0, 32}, {1, 1}});
  auto [w, x, bufs, groups] = chain(n, steps, p);
  auto enc = device().createCommandEncoder("chain");
  auto pass = enc.beginComputePass();
  pass.setPipeline(p);
  for (uint32_t i = 0; i < steps; ++i) {
    pass.setBindGroup(0, groups[i]);
    pass.setPushConstants(MatvecParams{n, n, 1, 0});
    pass.dispatchWorkgroups(n);
  }
  EXPECT_EQ(enc.barrierCount(), steps - 1);  // each step reads what the previous one wrote
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  auto y = download<float>(bufs[steps], n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(y[i], x[i] * 64.0f);
}

// A chain split over command buffers as it records (the prefill's parts, submitted while the rest records): each
// part submitted at once, the next ordered after it by its opening barrier; a dispatch after a split needs the
// pipeline set again.
TEST_F(Hazards, SplitChainSubmittedInPartsIsOrdered) {
  const uint32_t n = 64, steps = 7;
  const auto& p = kernels().get("matvec_f16", {{0, 32}, {1, 1}});
  auto [w, x, bufs, groups] = chain(n, steps, p);
  auto enc = device().createCommandEncoder("split chain");
  auto pass = enc.beginComputePass();
  std::vector<gpu::CommandBuffer> parts;
  for (uint32_t i = 0; i < steps; ++i) {
    pass.setPipeline(p);
    pass.setBindGroup(0, groups[i]);
    pass.setPushConstants(MatvecParams{n, n, 1, 0});
    pass.dispatchWorkgroups(n);
    if (i % 3 == 0) {  // after steps 0, 3 and 6
      parts.push_back(enc.split());
      device().queue().submit(parts.back());
    }
  }
  EXPECT_THROW(pass.dispatchWorkgroups(n), Error);  // bound in the previous command buffer only
  EXPECT_THROW(pass.setBindGroup(0, groups[0]), Error);
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  auto y = download<float>(bufs[steps], n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(y[i], x[i] * 128.0f);
}

// The same chain with no barriers between its steps (ComputePassEncoder::chainNext): step i waits in its shader until
// every workgroup of step i - 1 has counted itself done at slot i - 1 of the counters (chain.glsl), and
// counts its own at slot i. A fill zeroes the counters at the start of the recording (its one barrier), so it replays.
TEST_F(Hazards, ChainedDispatchesWaitInTheShader) {
  const uint32_t n = 72, steps = 5, rows = 2, groups_per_step = n / rows, slot = 256;
  auto w = identity(n, 2.0f);
  auto x = random_floats(n);
  std::vector<gpu::Buffer> bufs;
  bufs.push_back(upload(x));
  for (uint32_t i = 0; i < steps; ++i) bufs.push_back(poisoned(n * 4));
  auto counters = upload(std::vector<uint32_t>(steps * slot / 4, 7u), "chain counters");  // not zero: the fill's job
  std::vector<const gpu::ComputePipeline*> pipes;
  std::vector<gpu::BindGroup> groups;
  for (uint32_t i = 0; i < steps; ++i) {
    const uint32_t wait = i == 0 ? 0u : groups_per_step, signal = i + 1 < steps ? 1u : 0u;
    pipes.push_back(&kernels().get("matvec_f16_chain", {{0, 32}, {1, rows}, {4, wait}, {5, signal}}));
    const uint64_t waited = uint64_t(i == 0 ? 0 : i - 1) * slot;
    gpu::BindGroupEntry e[] = {{0, &w}, {1, &bufs[i]}, {2, &bufs[i + 1]}, {11, &counters, waited, slot},
                               {12, &counters, uint64_t(i) * slot, slot}};
    groups.push_back(device().createBindGroup(*pipes.back(), 0, e));
  }
  auto enc = device().createCommandEncoder("chained", true);
  enc.fillBuffer(counters, 0, steps * slot, 0);
  auto pass = enc.beginComputePass();
  for (uint32_t i = 0; i < steps; ++i) {
    pass.setPipeline(*pipes[i]);
    pass.setBindGroup(0, groups[i]);
    pass.setPushConstants(MatvecParams{n, n, 1, 0});
    if (i > 0) pass.chainNext();
    pass.dispatchWorkgroups(n / rows);
  }
  EXPECT_EQ(enc.barrierCount(), 1u);  // after the fill
  auto cb = enc.finish();
  for (int run = 0; run < 2; ++run) {
    device().queue().wait(device().queue().submit(cb));
    auto y = download<float>(bufs[steps], n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], x[i] * 32.0f) << "run " << run << ", element " << i;
    auto c = download<uint32_t>(counters, steps * slot / 4);
    for (uint32_t i = 0; i < steps; ++i)
      EXPECT_EQ(c[i * slot / 4], i + 1 < steps ? groups_per_step : 0u) << "run " << run << ", slot " << i;
  }
}

// Three producers counting themselves done on one counter (BindGroupEntry::atomic: the counter touched through atomics
// alone) get no barrier between them, and a consumer chained on them waits for all three's workgroups; the fill before
// them, a plain write of the counter, still takes its barrier, and so does a plain dispatch reading it.
TEST_F(Hazards, AtomicCounterAccessesDoNotConflict) {
  const uint32_t n = 40, rows = 2, groups = n / rows, slot = 256;
  auto w = identity(n, 2.0f);
  auto x = upload(random_floats(n));
  auto mid = poisoned(3 * n * 4), out = poisoned(n * 4);
  auto counters = upload(std::vector<uint32_t>(2 * slot / 4, 7u), "chain counters");
  const auto& producer = kernels().get("matvec_f16_chain", {{0, 32}, {1, rows}, {5, 1u}});
  const auto& consumer = kernels().get("matvec_f16_chain", {{0, 32}, {1, rows}, {4, 3 * groups}});
  std::vector<gpu::BindGroup> bg;
  for (uint32_t i = 0; i < 3; ++i) {  // disjoint thirds of mid, one counter
    gpu::BindGroupEntry e[] = {{0, &w}, {1, &x}, {2, &mid, uint64_t(i) * n * 4, n * 4},
                               {11, &counters, slot, slot, true}, {12, &counters, 0, slot, true}};
    bg.push_back(device().createBindGroup(producer, 0, e));
  }
  gpu::BindGroupEntry ce[] = {{0, &w}, {1, &mid, 2 * n * 4, n * 4}, {2, &out},
                              {11, &counters, 0, slot, true}, {12, &counters, slot, slot, true}};
  auto cg = device().createBindGroup(consumer, 0, ce);
  auto enc = device().createCommandEncoder("atomic counters");
  enc.fillBuffer(counters, 0, 2 * slot, 0);
  auto pass = enc.beginComputePass();
  pass.setPipeline(producer);
  for (uint32_t i = 0; i < 3; ++i) {
    pass.setBindGroup(0, bg[i]);
    pass.setPushConstants(MatvecParams{n, n, 1, 0});
    pass.dispatchWorkgroups(groups);
    EXPECT_EQ(enc.barrierCount(), 1u) << "producer " << i;  // the fill's alone
  }
  pass.setPipeline(consumer);
  pass.setBindGroup(0, cg);
  pass.setPushConstants(MatvecParams{n, n, 1, 0});
  pass.chainNext();
  pass.dispatchWorkgroups(groups);
  EXPECT_EQ(enc.barrierCount(), 1u);
  enc.copyBufferToBuffer(counters, 0, counters, slot + 4, 4);  // a plain read (and write) of the counters
  EXPECT_EQ(enc.barrierCount(), 2u);
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  auto xs = download<float>(x, n);
  auto y = download<float>(out, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], 4.0f * xs[i]) << i;
  auto c = download<uint32_t>(counters, 2 * slot / 4);
  EXPECT_EQ(c[0], 3 * groups);
  EXPECT_EQ(c[slot / 4 + 1], 3 * groups);
}

TEST_F(Hazards, IndependentDispatchesGetNoBarrier) {
  const uint32_t n = 48, count = 10;
  auto w = identity(n, 3.0f);
  auto x = upload(random_floats(n));
  auto out = poisoned(n * 4 * count);
  const auto& p = kernels().get("matvec_f16", {{0, 32}, {1, 1}});
  std::vector<gpu::BindGroup> groups;
  for (uint32_t i = 0; i < count; ++i) {  // disjoint output ranges of one buffer
    gpu::BindGroupEntry e[] = {{0, &w}, {1, &x}, {2, &out, uint64_t(i) * n * 4, n * 4}};
    groups.push_back(device().createBindGroup(p, 0, e));
  }
  auto enc = device().createCommandEncoder("independent");
  auto pass = enc.beginComputePass();
  pass.setPipeline(p);
  for (auto& g : groups) {
    pass.setBindGroup(0, g);
    pass.setPushConstants(MatvecParams{n, n, 1, 0});
    pass.dispatchWorkgroups(n);
  }
  EXPECT_EQ(enc.barrierCount(), 0u);
  EXPECT_EQ(enc.dispatchCount(), count);
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  auto xs = download<float>(x, n);
  auto y = download<float>(out, n * count);
  for (uint32_t i = 0; i < count; ++i)
    for (uint32_t j = 0; j < n; ++j) ASSERT_FLOAT_EQ(y[i * n + j], 3.0f * xs[j]);
}

TEST_F(Hazards, WriteAfterReadIsCaught) {
  const uint32_t n = 32;
  auto w = identity(n, 1.0f);
  auto a = upload(random_floats(n));
  auto b = poisoned(n * 4);
  const auto& p = kernels().get("matvec_f16", {{0, 32}, {1, 1}});
  gpu::BindGroupEntry read_a[] = {{0, &w}, {1, &a}, {2, &b}};   // reads a, writes b
  gpu::BindGroupEntry write_a[] = {{0, &w}, {1, &w}, {2, &a}};  // writes a (reads only w)
  auto g1 = device().createBindGroup(p, 0, read_a);
  auto g2 = device().createBindGroup(p, 0, write_a);
  auto enc = device().createCommandEncoder("war");
  auto pass = enc.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, g1);
  pass.setPushConstants(MatvecParams{n, n, 1, 0});
  pass.dispatchWorkgroups(n);
  EXPECT_EQ(enc.barrierCount(), 0u);
  pass.setBindGroup(0, g2);
  pass.dispatchWorkgroups(n);
  EXPECT_EQ(enc.barrierCount(), 1u);  // the second dispatch writes what the first one read
  enc.finish();
}

TEST_F(Hazards, OverlappingRangesConflictAndDisjointOnesDoNot) {
  auto buf = poisoned(1024);
  auto enc = device().createCommandEncoder("ranges");
  enc.fillBuffer(buf, 0, 512, 1);
  enc.fillBuffer(buf, 512, 512, 2);  // disjoint: no barrier
  EXPECT_EQ(enc.barrierCount(), 0u);
  enc.fillBuffer(buf, 508, 8, 3);    // overlaps both earlier writes (WAW)
  EXPECT_EQ(enc.barrierCount(), 1u);
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  auto v = download<uint32_t>(buf, 256);
  EXPECT_EQ(v[0], 1u);
  EXPECT_EQ(v[127], 3u);
  EXPECT_EQ(v[128], 3u);
  EXPECT_EQ(v[255], 2u);
}

}  // namespace
}  // namespace bs::testing
