#include "cli/csl/model_source.h"

#include "runtime/base/error.h"

namespace bs::csl {

HeadExportInput run_model_for_export(const ExportArgs& args) {
  // The engine (runtime/model) does not exist yet. When it does, this function runs the prefill
  // over args.prompt / args.prompt_ids and fills HeadExportInput (exporter.h documents each field).
  throw Error("export-csl: the Vulkan model engine is not built yet, so there is no hidden state to export from " +
                  args.model_dir,
              ErrorKind::gpu);
}

}  // namespace bs::csl
