// The WebGPU-shaped layer: adapters, buffers, reflection, pools, submits.
#include <gtest/gtest.h>

#include "kernels_glsl/kernels.h"
#include "runtime/base/dtype.h"
#include "runtime/base/error.h"
#include "runtime/gpu/uploader.h"
#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using gpu::BufferUsage;

class Runtime : public GpuTest {};

TEST_F(Runtime, AdapterIsUsableAndListed) {
  gpu::Instance inst(0);
  auto adapters = inst.enumerateAdapters();
  ASSERT_FALSE(adapters.empty());
  auto& a = device().adapter();
  EXPECT_TRUE(a.usable());
  EXPECT_GT(a.subgroup_size, 0u);
  EXPECT_TRUE(a.f16);
}

TEST_F(Runtime, BufferRoundTripEveryUsage) {
  auto data = random_floats(100003);
  for (auto usage : {BufferUsage::storage, BufferUsage::upload, BufferUsage::readback}) {
    auto b = device().createBuffer({data.size() * 4, usage, "roundtrip"});
    device().queue().writeBuffer(b, 0, data.data(), data.size() * 4);
    auto back = download<float>(b, data.size());
    EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size() * 4), 0) << "usage " << int(usage);
  }
}

// Uploader::write_with over small staging slots: pieces of whole units that never straddle a slot, placed at
// their offsets, with a plain write before and after (the loader pads Q6_K blocks this way: dtype.h).
TEST_F(Runtime, UploaderWriteWithFillsWholeUnitsAcrossSlots) {
  const uint64_t unit = 224, units = 1000, slot = 64 * 1024;  // 292 units a slot, 256 B-aligned pieces
  std::vector<uint8_t> host(unit * units);
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(i * 131 + (i >> 8));
  auto dst = poisoned(host.size() + 512);
  std::vector<uint8_t> head(256, 7), tail(256, 9);
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  {
    gpu::Uploader up(device(), slot, 2);
    up.write(dst, 0, head.data(), head.size());
    up.write_with(dst, 256, host.size(), unit, [&](char* out, uint64_t at, uint64_t n) {
      pieces.push_back({at, n});
      std::memcpy(out, host.data() + at, n);
    });
    up.write(dst, 256 + host.size(), tail.data(), tail.size());
    up.flush();
    EXPECT_THROW(up.write_with(dst, 0, unit + 1, unit, [](char*, uint64_t, uint64_t) {}), Error);
  }
  auto back = download<uint8_t>(dst, host.size() + 512);
  EXPECT_EQ(std::memcmp(back.data(), head.data(), 256), 0);
  EXPECT_EQ(std::memcmp(back.data() + 256, host.data(), host.size()), 0);
  EXPECT_EQ(std::memcmp(back.data() + 256 + host.size(), tail.data(), 256), 0);
  ASSERT_GT(pieces.size(), 2u);
  uint64_t next = 0;
  for (auto [at, n] : pieces) {
    EXPECT_EQ(at, next);
    EXPECT_EQ(n % unit, 0u);
    EXPECT_LE(n, slot);
    next = at + n;
  }
  EXPECT_EQ(next, host.size());
}

// Q6_K on the GPU: GGML's 210-byte blocks padded to 224 (dtype.h), each block's bytes unchanged.
TEST_F(Runtime, Q6KBlocksArePaddedTo224Bytes) {
  EXPECT_EQ(gpu_row_bytes(DType::Q6_K, 512), 448u);
  EXPECT_EQ(gpu_row_bytes(DType::Q4_K, 640), padded_row_bytes(DType::Q4_K, 640));
  EXPECT_EQ(gpu_bytes(DType::Q6_K, 210 * 3), 224u * 3);
  EXPECT_EQ(gpu_bytes(DType::F16, 1000), 1000u);
  std::vector<std::byte> in(210 * 3), out(224 * 3, std::byte{0xAB});
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i * 7 + 1);
  q6k_pad_blocks(in.data(), in.size(), out.data());
  for (size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(std::memcmp(out.data() + 224 * b, in.data() + 210 * b, 210), 0) << b;
    for (size_t i = 210; i < 224; ++i) EXPECT_EQ(out[224 * b + i], std::byte{0}) << b << " " << i;
  }
}

TEST_F(Runtime, CopyBufferToBufferAtOffsets) {
  auto data = random_floats(4099);
  auto src = upload(data);
  auto dst = poisoned(data.size() * 4);
  auto enc = device().createCommandEncoder("copy");
  enc.copyBufferToBuffer(src, 4, dst, 8, (data.size() - 3) * 4);  // dst[2 + i] = src[1 + i]
  enc.copyBufferToBuffer(src, 0, dst, 0, 4);
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  auto back = download<float>(dst, data.size());
  EXPECT_EQ(back[0], data[0]);
  for (size_t i = 0; i + 3 < data.size(); ++i) ASSERT_EQ(back[2 + i], data[1 + i]) << i;
}

TEST_F(Runtime, EveryEmbeddedKernelReflectsAndBuilds) {
  size_t n = 0;
  for (auto& k : kernels::all()) {
    auto refl = gpu::reflect_spirv(k.spirv);
    if (k.name != "noop") {  // noop's only binding is unused, so the compiler drops it
      EXPECT_FALSE(refl.bindings.empty()) << k.name;
    }
    EXPECT_LE(refl.push_constant_bytes, 128u) << k.name;
    // Kernels needing an optional feature (matmul_cm_*: cooperative matrices) build only where it is.
    if (!kernels().has(k.name)) continue;
    kernels().get(std::string(k.name));
    ++n;
  }
  EXPECT_GT(n, 3u);
}

TEST_F(Runtime, ReflectionReadsAccessAndSpecializedWorkgroupSize) {
  const auto& p = kernels().get("rms_norm_f32", {{0, 64}});
  ASSERT_EQ(p.bindings().size(), 3u);
  EXPECT_TRUE(p.bindings()[0].reads);
  EXPECT_FALSE(p.bindings()[0].writes);  // readonly X
  EXPECT_TRUE(p.bindings()[2].writes);
  EXPECT_FALSE(p.bindings()[2].reads);   // writeonly Y
  EXPECT_EQ(p.workgroupSize()[0], 64u);
  EXPECT_EQ(p.pushConstantBytes(), 16u);
}

TEST_F(Runtime, ShaderFromGlslAtRunTime) {
  const char* src = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer B { uint v[]; };
void main() { v[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * FACTOR; })";
  auto module = device().createShaderModuleGLSL(src, "runtime glsl", {{"FACTOR", "3u"}});
  auto pipe = device().createComputePipeline({&module, {}, 0, "runtime glsl"});
  auto buf = poisoned(256 * 4);
  run_once_plain(pipe, {{0, &buf}}, 4);
  auto v = download<uint32_t>(buf, 256);
  for (uint32_t i = 0; i < 256; ++i) ASSERT_EQ(v[i], i * 3);
}

// Two blocks on one binding (a float view and a vec4 view of the same buffer) are one descriptor: the pipeline has
// one binding, read and written, and both views see the same bytes.
TEST_F(Runtime, AliasedBlocksShareOneBinding) {
  auto module = device().createShaderModuleGLSL(R"(#version 450
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer F { float f[]; };
layout(std430, binding = 0) writeonly buffer F4 { vec4 f4[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  float s = f[4u * i] + f[4u * i + 1u] + f[4u * i + 2u] + f[4u * i + 3u];
  barrier();
  f4[i] = vec4(s);
})", "aliased views");
  auto pipe = device().createComputePipeline({&module, {}, 0, "aliased views"});
  ASSERT_EQ(pipe.bindings().size(), 1u);
  EXPECT_TRUE(pipe.bindings()[0].reads);
  EXPECT_TRUE(pipe.bindings()[0].writes);
  std::vector<float> in(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.5f - 7.0f;
  auto buf = upload(in, "aliased");
  run_once_plain(pipe, {{0, &buf}}, 1);
  auto v = download<float>(buf, in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    size_t b = i / 4 * 4;
    ASSERT_EQ(v[i], in[b] + in[b + 1] + in[b + 2] + in[b + 3]) << i;
  }
}

// BLUESHIFT_PIPELINE_STATS=1: where the adapter has VK_KHR_pipeline_executable_properties, each pipeline created
// prints the driver's statistics, one "pipeline-stats LABEL [...]: ..." line on stderr; elsewhere (lavapipe) the
// switch changes nothing and the pipeline still builds and runs.
TEST_F(Runtime, PipelineStatsSwitch) {
  setenv("BLUESHIFT_PIPELINE_STATS", "1", 1);
  gpu::Device dev;
  unsetenv("BLUESHIFT_PIPELINE_STATS");
  EXPECT_EQ(dev.executableStatisticsFn() != nullptr, dev.adapter().pipeline_stats) << dev.adapter().name;
  auto module = dev.createShaderModuleGLSL(R"(#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer B { uint v[]; };
void main() { v[gl_GlobalInvocationID.x] += 1u; })", "stats probe");
  ::testing::internal::CaptureStderr();
  auto pipe = dev.createComputePipeline({&module, {}, 0, "stats probe"});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("pipeline-stats stats probe [") != std::string::npos, dev.adapter().pipeline_stats) << err;
  EXPECT_EQ(pipe.workgroupSize()[0], 32u);
}

TEST_F(Runtime, GlslCompileErrorIsReported) {
  EXPECT_THROW(device().createShaderModuleGLSL("#version 450\nvoid main() { undefined_thing; }", "bad"), bs::Error);
}

TEST_F(Runtime, BufferPoolReusesSizeClasses) {
  gpu::BufferPool pool(device(), BufferUsage::storage);
  auto a = pool.acquire(1000);
  EXPECT_EQ(a->size(), 1024u);
  auto* raw = a.get();
  pool.release(std::move(a));
  auto b = pool.acquire(700);  // same class
  EXPECT_EQ(b.get(), raw);
  auto c = pool.acquire(5000);
  EXPECT_EQ(c->size(), 8192u);
  EXPECT_EQ(pool.created(), 2u);
}

TEST_F(Runtime, TimelineCountsBatchesOfOneSubmit) {
  auto buf = poisoned(16);
  std::vector<gpu::CommandBuffer> cbs;
  for (uint32_t i = 0; i < 3; ++i) {
    auto enc = device().createCommandEncoder();
    enc.fillBuffer(buf, 4 * i, 4, i + 1);
    cbs.push_back(enc.finish());
  }
  std::vector<std::vector<const gpu::CommandBuffer*>> batches = {{&cbs[0]}, {&cbs[1]}, {&cbs[2]}};
  uint64_t submits_before = device().counters().submits;
  uint64_t last = device().queue().submitBatches(batches);
  EXPECT_EQ(device().counters().submits, submits_before + 1);
  EXPECT_TRUE(device().queue().wait(last));
  EXPECT_GE(device().queue().completedValue(), last);
  auto v = download<uint32_t>(buf, 3);
  EXPECT_EQ(v, (std::vector<uint32_t>{1, 2, 3}));
}

// The decode loop's stop mechanism: dispatches inside a conditional block run only while the predicate
// says so, read when the GPU reaches the block (here written by a dispatch in the same command buffer).
TEST_F(Runtime, ConditionalBlockSkipsDispatches) {
  if (!device().hasConditionalRendering()) GTEST_SKIP() << device().adapter().name << " has no VK_EXT_conditional_rendering";
  const auto& bias = kernels().get("add_bias_f32");
  auto pred = upload(std::vector<uint32_t>{0, 1});
  auto one = upload(std::vector<float>{1.0f});
  auto y = upload(std::vector<float>{0.0f});
  auto set_pred = upload(std::vector<float>{1.0f});  // added to pred[0] as a float bit pattern below
  auto bg = device().createBindGroup(bias, 0, std::vector<gpu::BindGroupEntry>{{0, &y}, {1, &one}});
  // Writes a non-zero word into pred[0] from a shader: 1.0f's bits are non-zero.
  auto pg = device().createBindGroup(bias, 0, std::vector<gpu::BindGroupEntry>{{0, &pred, 0, 4}, {1, &set_pred}});
  auto enc = device().createCommandEncoder("conditional");
  auto add = [&](const gpu::BindGroup* g = nullptr) {  // y += 1 (pg: pred[0] = 1.0f's bits)
    auto pass = enc.beginComputePass();
    pass.setPipeline(bias);
    pass.setBindGroup(0, g ? *g : bg);
    pass.setPushConstants(kparams::BiasParams{1, 1, 0, 0});
    pass.dispatchWorkgroups(1, 1);
  };
  // 1: pred[1] = 1 -> runs (+1); 2: pred[0] = 0 -> skipped; 3: pred[0] = 0 inverted -> runs (+1, twice);
  // 4: a shader sets pred[0], then pred[0] inverted -> skipped, not inverted -> runs (+1).
  enc.beginConditional(pred, 4, false); add(); enc.endConditional();
  enc.beginConditional(pred, 0, false); add(); add(); enc.endConditional();
  enc.beginConditional(pred, 0, true); add(); add(); enc.endConditional();
  add(&pg);
  enc.beginConditional(pred, 0, true); add(); enc.endConditional();
  enc.beginConditional(pred, 0, false); add(); enc.endConditional();
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  EXPECT_EQ(download<float>(y, 1)[0], 4.0f);
}

TEST_F(Runtime, ProfilerAttributesTimeToLabels) {
  gpu::Profiler prof(device(), 8);
  auto data = random_floats(1 << 16);
  auto src = upload(data);
  auto dst = poisoned(64 * 4);
  const auto& p = kernels().get("stream_read", {{0, 64}});
  gpu::BindGroupEntry e[] = {{0, &src}, {1, &dst}};
  auto bg = device().createBindGroup(p, 0, e);
  auto enc = device().createCommandEncoder();
  prof.begin(enc);
  auto pass = enc.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, bg);
  kparams::StreamParams sp{uint32_t(data.size() / 4), 1};
  pass.setPushConstants(sp);
  pass.dispatchWorkgroups(64);
  prof.mark(enc, "stream");
  auto cb = enc.finish();
  device().queue().wait(device().queue().submit(cb));
  prof.collect();
  ASSERT_EQ(prof.ms_by_label().count("stream"), 1u);
  EXPECT_GT(prof.ms_by_label().at("stream"), 0.0);
}

// stream_rows (bs_micro --rows): each invocation folds (XOR) exactly the words its lane's parts of its subgroup's
// tasks hold, in every setting: fresh random words, an odd task count over a grid that leaves some subgroups
// without a task, rows of 3 blocks (24 parts: fewer than a step's lanes at PARTS 4, so the clamp to the last
// part is taken), against the same walk on the CPU.
TEST_F(Runtime, StreamRowsFoldsEachLanesWords) {
  const uint32_t sg = device().subgroupSize(), wg = 2 * sg, groups = 3, nb = 3, rows = 2 * 7;
  std::vector<uint32_t> words(size_t(rows) * nb * 9 * 4);
  for (auto& x : words) x = uint32_t(rng()());
  auto w = upload(words);
  const uint32_t tasks = rows / 2, pend = nb * 8, nsub = groups * (wg / sg);
  for (uint32_t parts = 1; parts <= 4; ++parts)
    for (uint32_t pipe : {0u, 1u})
      for (uint32_t header : {0u, 1u}) {
        auto dst = poisoned(size_t(groups) * wg * 4);
        const auto& p = kernels().get("stream_rows", {{0, wg}, {1, parts}, {2, pipe}, {3, header}});
        run_once(p, {{0, &w}, {1, &dst}}, kparams::StreamParams{rows, nb}, groups);
        auto got = download<uint32_t>(dst, size_t(groups) * wg);
        const uint32_t steps = (pend + parts * sg - 1) / (parts * sg);
        for (uint32_t g = 0; g < groups; ++g)
          for (uint32_t i = 0; i < wg; ++i) {
            const uint32_t sid = i / sg, lane = i % sg;
            uint32_t acc = 0;
            for (uint32_t t = sid * groups + g; t < tasks; t += nsub)
              for (uint32_t st = 0; st < steps; ++st)
                for (uint32_t u = 0; u < parts; ++u) {
                  const uint32_t part = std::min(st * parts * sg + u * sg + lane, pend - 1), blk = part / 8;
                  for (uint32_t r : {2 * t, 2 * t + 1}) {
                    const size_t base = (size_t(r) * nb + blk) * 9;
                    for (size_t v : {base + 1 + part % 8, header ? base : SIZE_MAX})
                      if (v != SIZE_MAX)
                        for (uint32_t c = 0; c < 4; ++c) acc ^= words[v * 4 + c];
                  }
                }
            ASSERT_EQ(got[size_t(g) * wg + i], acc) << "PARTS " << parts << " PIPE " << pipe << " HEADER " << header
                                                    << ", workgroup " << g << ", invocation " << i;
          }
      }
}

}  // namespace
}  // namespace bs::testing

namespace bs::testing {
namespace {

// The validation layer is live: a dispatch with no bind group is reported, and counted.
TEST_F(Runtime, ValidationLayerCatchesMisuse) {
  if (!gpu::Instance(-1).validation()) GTEST_SKIP() << "vulkan-validationlayers not installed";
  const auto& p = kernels().get("rms_norm_f32");
  auto enc = device().createCommandEncoder("misuse");
  vkCmdBindPipeline(enc.handle(), VK_PIPELINE_BIND_POINT_COMPUTE, p.handle());
  vkCmdDispatch(enc.handle(), 1, 1, 1);  // descriptor set 0 never bound: reported while recording
  auto cb = enc.finish();                 // (never submitted: the driver would read unbound memory)
  EXPECT_GT(gpu::validation_message_count(), 0u);
  gpu::reset_validation_messages();
}

}  // namespace
}  // namespace bs::testing
