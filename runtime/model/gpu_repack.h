// DOPPLER's stored forms that no weight kernel reads (W4A16, "col" Q4_K), converted on the GPU while the
// model loads: the stored bytes go up through the Uploader into a scratch buffer, and a repack kernel
// (kernels_glsl/repack_*.comp) writes the form the matvec and matmul kernels bind, in the same command
// buffer as the copies. The host functions of repack.h are the reference: the kernels match them bit for
// bit (tests/kernels/test_repack_kernels.cpp), so a model's logits do not depend on where it was repacked.
#pragma once
#include <cstdint>

#include "runtime/gpu/kernel_cache.h"
#include "runtime/gpu/uploader.h"
#include "runtime/model/source.h"

namespace bs::model {

// The largest range the loader binds: the device's, lowered by BLUESHIFT_MAX_BINDING=N (tests use it to
// split small tensors as a 262144-row table is split on lavapipe's 128 MiB).
uint64_t binding_limit(const gpu::Device& device);

class GpuRepacker {
 public:
  // binding_limit 0: the device's (binding_limit above).
  GpuRepacker(gpu::Device& device, gpu::KernelCache& kernels, gpu::Uploader& up, uint64_t binding_limit = 0);
  // Whether t (t.repack != none) can be converted here: the kernel set has its kernel (the WGSL set has
  // none) and its bindings fit the limit (a W4A16 tensor always does, in chunks of groups; a "col" Q4_K
  // needs its stored bytes in one binding). Otherwise the caller converts it on the host.
  bool can(const TensorView& t) const;
  // Uploads t's stored bytes and records the kernels that write its runnable form into dst, a buffer of
  // at least runnable_bytes(t) rounded up to 16. dst holds it once the Uploader has flushed.
  void repack(const TensorView& t, const gpu::Buffer& dst);

 private:
  void w4a16(const TensorView& t, const gpu::Buffer& dst);
  void q4k_col(const TensorView& t, const gpu::Buffer& dst);

  gpu::Device& device_;
  gpu::KernelCache& kernels_;
  gpu::Uploader& up_;
  uint64_t limit_;
};

}  // namespace bs::model
