// Where a model's config and weights come from: an RDRR directory (manifest.json; hash-verified shards)
// or a Hugging Face directory (config.json + safetensors). Both deliver tensors by internal name.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/base/dtype.h"
#include "runtime/model/config.h"

namespace bs::model {

// DOPPLER's stored forms that no weight kernel reads, which the loader converts before binding: on the
// GPU (gpu_repack.h), or on the host (repack.h's host_runnable: BLUESHIFT_HOST_REPACK=1, the CPU reference).
enum class Repack : uint8_t {
  none,
  w4a16_to_q8_0,   // W4A16 [rows, k] and its group scales -> Q8_0
  q4k_col_to_f16,  // transposed ("col") Q4_K of [m, k] -> F16
};

struct TensorView {
  std::string name;               // internal name (runtime/model/config.h)
  DType dtype;                    // the form the kernels read (after `repack`)
  std::vector<int64_t> shape;     // HF shape: [out, in] for matmuls
  std::span<const std::byte> data;  // those bytes; the stored ones when repack != none
  Repack repack = Repack::none;
  std::span<const std::byte> scales;  // w4a16_to_q8_0: the group scales [rows, k / 32] ...
  DType scale_dtype = DType::BF16;    // ... in F16, BF16 or F32
  // A piece of a tensor streamed as its shards arrive (for_each_tensor with `parts`): `data` is bytes [at, at +
  // data.size()) of a tensor of `whole` bytes, which run as they are (repack none). 0: data is the whole tensor.
  // A tensor's pieces arrive in any order, each byte once, possibly between other tensors.
  uint64_t at = 0, whole = 0;
};

using TensorSink = std::function<void(const TensorView&)>;

// Where a source's last for_each_tensor spent its time, where it knows (RDRR: the shard reader's LoadStats).
struct SourceStats {
  bool known = false;
  double shard_wait_s = 0;  // waiting for the workers' shards (reading, hash checks, zstd)
  double sink_s = 0;        // in the sink (the model's upload)
};

struct ModelSource {
  ModelConfig config;
  std::string quant;              // "F16", "Q4_K_M", ... for display
  std::filesystem::path dir;
  uint64_t weight_bytes = 0;      // sum of the tensors' bytes on the GPU (for the VRAM estimate)
  // Streams every tensor once to `sink` (on the calling thread). With `parts`, a tensor the source holds in
  // pieces may reach the sink in them (TensorView::whole), without being assembled on the host first.
  std::function<void(const TensorSink&, bool parts)> for_each_tensor;
  std::shared_ptr<SourceStats> stats = std::make_shared<SourceStats>();  // filled by for_each_tensor where known
};

// Opens DIR as RDRR when it holds manifest.json, else as a Hugging Face checkpoint (BF16/F32 matrices
// become F16, 1-D tensors F32, as `convert --quant f16` would store them).
ModelSource open_model(const std::filesystem::path& dir);
ModelSource open_hf_dir(const std::filesystem::path& dir);
ModelSource open_rdrr_dir(const std::filesystem::path& dir);  // hash-verified, parallel (sharding/reader.h)

}  // namespace bs::model
