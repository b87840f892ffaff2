// An RDRR directory as a model source: the manifest's config and every tensor, hash-verified and
// decompressed in parallel by the shard reader while earlier tensors upload, each in the form the
// kernels read (repack.h: DOPPLER's BF16 converted here; W4A16 and "col" Q4_K named for the loader to
// convert, on the GPU by default: gpu_repack.h).
#include <map>

#include "rdrr/manifest.h"
#include "runtime/base/error.h"
#include "runtime/model/repack.h"
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
  for (auto& t : manifest->tensors) src.weight_bytes += runnable_bytes(t);
  src.for_each_tensor = [manifest, dir, stats = src.stats](const TensorSink& sink, bool parts) {
    const std::string label = (dir / "manifest.json").string();
    // A tensor with companions (W4A16) is emitted once it and they have all arrived; until then the
    // first to arrive are held here, by name (a layer's worth at most: DOPPLER writes them together).
    std::map<std::string, std::vector<std::byte>> held;
    auto emit = [&](const TensorEntry& t, std::span<const std::byte> bytes, const Companions& c) {
      if (t.skipped) return;
      if (t.internal.empty())
        fail("{}: tensor {} has no blueshift name (unknown to this architecture)", label, t.name);
      Runnable r = runnable_form(t, bytes, c, label, true);  // W4A16 and "col" Q4_K: the loader converts them
      sink({t.internal, r.dtype, r.shape, r.data, r.repack, r.scales, r.scale_dtype});
    };
    // A tensor in several spans that runs as stored reaches the sink span by span (no host assembly: an 8B f16's
    // FFN matrices each span 2-3 of its 64 MB shards). runnable_form still checks each piece's tensor.
    LoadOptions lo;
    LoadStats ls;
    lo.stats = &ls;
    if (parts) {
      lo.in_parts = [](const TensorEntry& t) { return runnable_as_stored(t); };
      lo.part_sink = [&](const TensorEntry& t, uint64_t at, std::span<const std::byte> bytes) {
        Runnable r = runnable_form(t, bytes, {}, label, true);
        TensorView v{t.internal, r.dtype, r.shape, r.data, r.repack, r.scales, r.scale_dtype};
        v.at = at;
        v.whole = t.size;
        sink(v);
      };
    }
    load_tensors(*manifest, dir, lo, [&](const TensorEntry& t, std::span<const std::byte> bytes) {
      const TensorEntry* owner = t.companion_of.empty() ? &t : manifest->find(t.companion_of);
      if (owner->skipped) return;  // read (and hash-checked) with its shard, never bound
      if (owner->dtype != DType::W4A16) {
        if (t.companion_of.empty()) emit(t, bytes, {});
        // The I4 table's F32 row scales: a weight of their own, INTERNAL_scales (embed_i4 binds them).
        else if (owner->dtype == DType::I4 && !owner->internal.empty())
          sink({owner->internal + "_scales", DType::F32, {owner->shape[0]}, bytes});
        return;
      }
      held[t.name].assign(bytes.begin(), bytes.end());
      for (const std::string* n : {&owner->name, &owner->scales, &owner->shape_tensor})
        if (!held.count(*n)) return;
      Companions c{held[owner->scales], manifest->find(owner->scales)->dtype, held[owner->shape_tensor],
                   manifest->find(owner->shape_tensor)->dtype};
      emit(*owner, held[owner->name], c);
      for (const std::string* n : {&owner->name, &owner->scales, &owner->shape_tensor}) held.erase(*n);
    });
    *stats = {true, ls.shard_wait_s, ls.sink_s};
  };
  return src;
}

}  // namespace bs::model
