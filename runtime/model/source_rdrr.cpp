// An RDRR directory as a model source: the manifest's config and every tensor, hash-verified and
// decompressed in parallel by the shard reader while earlier tensors upload.
#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "runtime/model/source.h"
#include "sharding/reader.h"

namespace bs::model {

ModelSource open_rdrr_dir(const std::filesystem::path& dir) {
  auto manifest = std::make_shared<Manifest>(read_manifest(dir));
  ModelSource src;
  src.config = manifest->model_config();
  if (src.config.eos_ids.empty()) src.config.eos_ids = manifest->eos_ids;
  src.quant = manifest->quantization;
  src.dir = dir;
  for (auto& t : manifest->tensors) src.weight_bytes += t.size;
  src.for_each_tensor = [manifest, dir](const TensorSink& sink) {
    load_tensors(*manifest, dir, LoadOptions{}, [&](const TensorEntry& t, std::span<const std::byte> bytes) {
      if (t.internal.empty()) fail("{}/manifest.json: tensor {} has no blueshift name (unknown to this architecture)",
                                   dir.string(), t.name);
      sink({t.internal, t.dtype, t.shape, bytes});
    });
  };
  return src;
}

}  // namespace bs::model
