#include "runtime/model/gpu_repack.h"

#include <algorithm>

#include "kernels_glsl/params.h"
#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/gpu/command.h"

namespace bs::model {

namespace {

constexpr uint32_t kGroupSize = 256;  // local_size_x of both repack kernels

// The kernels index words in 32 bits: a binding of at most 4 GiB less a margin keeps every index inside.
constexpr uint64_t kMaxBinding = (uint64_t(1) << 32) - 256;

// Workgroups covering n invocations on a 2-D grid (x at most 65535), as the kernels fold y into x.
std::pair<uint32_t, uint32_t> grid(uint64_t n) {
  const uint64_t groups = (n + kGroupSize - 1) / kGroupSize;
  const uint64_t x = std::min<uint64_t>(std::max<uint64_t>(groups, 1), 65535);
  return {uint32_t(x), uint32_t((groups + x - 1) / x)};
}

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// What the GPU reads until the command buffer has run: the stored bytes and the bind groups over them.
struct Pending {
  gpu::Buffer scratch;
  std::vector<gpu::BindGroup> groups;
};

}  // namespace

uint64_t binding_limit(const gpu::Device& device) {
  static const uint64_t forced = env_uint("BLUESHIFT_MAX_BINDING", 0);
  return forced ? std::min<uint64_t>(forced, device.maxBindingRange()) : device.maxBindingRange();
}

GpuRepacker::GpuRepacker(gpu::Device& device, gpu::KernelCache& kernels, gpu::Uploader& up, uint64_t limit)
    : device_(device), kernels_(kernels), up_(up), limit_(std::min(limit ? limit : binding_limit(device), kMaxBinding)) {}

bool GpuRepacker::can(const TensorView& t) const {
  if (t.shape.size() != 2) return false;
  const uint64_t m = uint64_t(t.shape[0]), k = uint64_t(t.shape[1]);
  switch (t.repack) {
    case Repack::w4a16_to_q8_0:
      // Chunks of 128 groups keep every chunk's offsets 256-byte aligned (16, 2 or 4, and 34 bytes a group).
      return kernels_.has("repack_w4a16_q8_0") && limit_ >= 128 * 34 + 16 && m > 0 && k > 0 &&
             (t.scale_dtype == DType::F16 || t.scale_dtype == DType::BF16 || t.scale_dtype == DType::F32);
    case Repack::q4k_col_to_f16:
      // Chunks of 128 output rows (offsets of 256 * k bytes); the stored blocks bound whole.
      return kernels_.has("repack_q4k_col_f16") && round_up(t.data.size(), 16) <= limit_ && 128 * k * 2 + 16 <= limit_ &&
             m > 0 && k > 0;
    case Repack::none: return false;
  }
  return false;
}

void GpuRepacker::repack(const TensorView& t, const gpu::Buffer& dst) {
  if (!can(t)) fail_kind(ErrorKind::internal, "GpuRepacker: {} cannot be repacked on this GPU", t.name);
  if (t.repack == Repack::w4a16_to_q8_0) w4a16(t, dst);
  else q4k_col(t, dst);
}

void GpuRepacker::w4a16(const TensorView& t, const gpu::Buffer& dst) {
  using kparams::RepackW4a16Params;
  const uint64_t groups = uint64_t(t.shape[0]) * uint64_t(t.shape[1]) / 32;
  const uint32_t scale_bytes = t.scale_dtype == DType::F32 ? 4 : 2;
  const uint32_t scale_code = t.scale_dtype == DType::F16 ? 0 : t.scale_dtype == DType::BF16 ? 1 : 2;
  // The scratch holds the nibbles, then (at a 256-byte boundary, every device's storage offset
  // alignment) the scales; each rounded to whole words so the last one reads inside.
  const uint64_t packed_bytes = groups * 16, scales_at = round_up(packed_bytes, 256);
  const uint64_t scale_total = round_up(groups * scale_bytes, 16);
  auto pending = std::make_shared<Pending>();
  pending->scratch = device_.createBuffer({scales_at + scale_total, gpu::BufferUsage::storage, t.name + " (stored W4A16)"});
  up_.write(pending->scratch, 0, t.data.data(), packed_bytes);
  up_.write(pending->scratch, scales_at, t.scales.data(), groups * scale_bytes);

  const auto& p = kernels_.get("repack_w4a16_q8_0");
  // Groups per dispatch; 16: the last chunk's ranges run on to the end of the (16-byte rounded) buffers.
  const uint64_t per = (limit_ - 16) / 34 / 128 * 128;
  struct Chunk {
    uint32_t groups;
    size_t bind_group;
  };
  std::vector<Chunk> chunks;
  for (uint64_t g0 = 0; g0 < groups; g0 += per) {
    const uint64_t n = std::min(per, groups - g0);
    const bool last = g0 + n == groups;
    // Ranges: whole words of this chunk's nibbles, scales and blocks (the last chunk's blocks to the
    // end of dst, which covers the zero-filled word past them).
    const uint64_t out_bytes = last ? dst.size() - g0 * 34 : n * 34;
    const uint64_t scale_range = last ? scale_total - g0 * scale_bytes : n * scale_bytes;
    std::vector<gpu::BindGroupEntry> e = {{0, &pending->scratch, g0 * 16, n * 16},
                                          {1, &pending->scratch, scales_at + g0 * scale_bytes, scale_range},
                                          {2, &dst, g0 * 34, out_bytes}};
    pending->groups.push_back(device_.createBindGroup(p, 0, e, "repack w4a16"));
    chunks.push_back({uint32_t(n), pending->groups.size() - 1});
  }
  up_.record(
      [&](gpu::CommandEncoder& enc) {
        auto pass = enc.beginComputePass("repack w4a16");
        pass.setPipeline(p);
        for (const Chunk& c : chunks) {
          pass.setBindGroup(0, pending->groups[c.bind_group]);
          pass.setPushConstants(RepackW4a16Params{c.groups, scale_code, 0, 0});
          auto [gx, gy] = grid((uint64_t(c.groups) + 1) / 2);  // an invocation per pair of groups
          pass.dispatchWorkgroups(gx, gy);
        }
      },
      pending);
}

void GpuRepacker::q4k_col(const TensorView& t, const gpu::Buffer& dst) {
  using kparams::RepackQ4kColParams;
  const uint64_t m = uint64_t(t.shape[0]), k = uint64_t(t.shape[1]);
  const uint64_t nb = (m + 255) / 256;  // blocks per stored row (a column of W)
  auto pending = std::make_shared<Pending>();
  pending->scratch = device_.createBuffer({round_up(t.data.size(), 16), gpu::BufferUsage::storage, t.name + " (stored col Q4_K)"});
  up_.write(pending->scratch, 0, t.data.data(), t.data.size());

  const auto& p = kernels_.get("repack_q4k_col_f16");
  const uint64_t per = (limit_ - 16) / (2 * k) / 128 * 128;  // output rows per dispatch (can(): >= 128)
  std::vector<RepackQ4kColParams> params;
  for (uint64_t r0 = 0; r0 < m; r0 += per) {
    const uint64_t rows = std::min(per, m - r0);
    const bool last = r0 + rows == m;
    std::vector<gpu::BindGroupEntry> e = {{0, &pending->scratch}, {1, &dst, r0 * k * 2, last ? dst.size() - r0 * k * 2 : rows * k * 2}};
    pending->groups.push_back(device_.createBindGroup(p, 0, e, "repack q4k col"));
    params.push_back({uint32_t(rows), uint32_t(k), uint32_t(nb), uint32_t(r0)});
  }
  up_.record(
      [&](gpu::CommandEncoder& enc) {
        auto pass = enc.beginComputePass("repack q4k col");
        pass.setPipeline(p);
        for (size_t i = 0; i < params.size(); ++i) {
          pass.setBindGroup(0, pending->groups[i]);
          pass.setPushConstants(params[i]);
          auto [gx, gy] = grid((uint64_t(params[i].rows) * k + 1) / 2);
          pass.dispatchWorkgroups(gx, gy);
        }
      },
      pending);
}

}  // namespace bs::model
