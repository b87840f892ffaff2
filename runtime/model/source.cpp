// open_model: RDRR when the directory has manifest.json, else a Hugging Face checkpoint.
#include <filesystem>

#include "runtime/base/error.h"
#include "runtime/model/source.h"

namespace bs::model {

ModelSource open_model(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) fail("{}: not a directory (expected an RDRR model or a Hugging Face checkpoint)", dir.string());
  if (fs::exists(dir / "manifest.json")) return open_rdrr_dir(dir);
  if (fs::exists(dir / "config.json")) return open_hf_dir(dir);
  fail("{}: neither manifest.json (RDRR) nor config.json (Hugging Face) found", dir.string());
}

}  // namespace bs::model
