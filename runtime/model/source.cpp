// open_model: RDRR when the directory has manifest.json, else a Hugging Face checkpoint.
#include <filesystem>

#include "runtime/base/error.h"
#include "runtime/model/source.h"

#if __has_include("sharding/reader.h")
#include "rdrr/manifest.h"
#include "sharding/reader.h"
#define BS_HAVE_RDRR_READER 1
#endif

namespace bs::model {

ModelSource open_model(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) fail("{}: not a directory (expected an RDRR model or a Hugging Face checkpoint)", dir.string());
  if (fs::exists(dir / "manifest.json")) {
#ifdef BS_HAVE_RDRR_READER
    return open_rdrr_dir(dir);
#else
    fail("{}: RDRR loading is not built into this binary", dir.string());
#endif
  }
  if (fs::exists(dir / "config.json")) return open_hf_dir(dir);
  fail("{}: neither manifest.json (RDRR) nor config.json (Hugging Face) found", dir.string());
}

}  // namespace bs::model
