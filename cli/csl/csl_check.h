// Static checks of an emitted CSL bundle. No Cerebras compiler runs here, so these stand in for the
// parts of it that matter most to a bundle we hand over:
//   present         layout.csl and pe_program.csl exist and are not empty
//   removed-syntax  nothing SDK 2.x removed: comptime_struct, @concat_structs, @rpc, @bind_task,
//                   the memcpy_multi library, the fabric_color DSD field
//   memcpy          `param memcpy_params;` (untyped), <memcpy/memcpy> imported with it, the layout
//                   using <memcpy/get_params>, @set_rectangle and @set_tile_code("pe_program.csl")
//   exports         exported arrays have 16/32-bit element types; layout and PE program export the
//                   same names and types; run.py gets exactly those ids and launches an exported fn
//   ids             application colors within 0..20; collectives ids within their range; task ids
//                   within the application range, each used once
//   tasks           tasks are bound with @bind_local_task and only @activate'd (or passed as a
//                   collectives callback): no data or control tasks, no direct calls of a task
//   unblock         every exported function reaches unblock_cmd_stream() on every path, following
//                   calls, @activate and collectives callbacks; a branch counts only if both sides reach
//   compile         compile.sh runs cslc with --arch=wse3, fabric dims and offsets, --params,
//                   --memcpy --channels=1
#pragma once
#include <string>
#include <vector>

namespace bs::csl {

struct CslFinding {
  std::string file;     // bundle file name
  int line = 0;         // 1-based; 0 when the finding is about the whole file
  std::string rule;     // one of the rule names above
  std::string message;
};
std::string to_string(const CslFinding& f);  // "pe_program.csl:42: [unblock] ..."

struct BundleSources {
  std::string layout, pe, run_py, compile_sh;
};

// All findings, in file order; empty when the bundle passes.
std::vector<CslFinding> check_csl(const BundleSources& src);

}  // namespace bs::csl
