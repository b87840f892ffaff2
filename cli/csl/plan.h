// Kernel plans: how a piece of the model's output path is laid out over a rectangle of Cerebras PEs.
//
// A plan is pure arithmetic (grid, tile sizes, which PE holds which slice); the emitters turn it into
// layout.csl / pe_program.csl / run.py / compile.sh, and emulate.cpp runs it on the host with the
// same partition and the same rounding. Kernels are rows of a small table so RMSNorm, RoPE and more
// can follow the lm_head with their own proofs.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/config.h"

namespace bs::csl {

// --- SDK 2.10 / WSE-3 resource rules: the emitter follows them, csl_check.cpp enforces them. ---
inline constexpr int kAppColorMax = 20;    // application colors are 0..20; memcpy owns 21..31
inline constexpr int kC2dFirstId = 0;      // collectives_2d gets ids 0..7: colors 0-3 (x: 0,1; y: 2,3)
inline constexpr int kC2dLastId = 7;       //   and callback entrypoints 4-7 (x: 4,5; y: 6,7)
inline constexpr int kAppTaskFirst = 8;    // our own local tasks live in 8..20, clear of both
inline constexpr int kAppTaskLast = 20;
inline constexpr std::array<int, 2> kC2dXColors{0, 1}, kC2dYColors{2, 3};
inline constexpr std::array<int, 2> kC2dXEntry{4, 5}, kC2dYEntry{6, 7};

// One PE has 48 KiB; the program text, memcpy and collectives state take some of it. The data budget
// below is what a plan may use for its arrays (an estimate, stated in proof.json).
inline constexpr int kPeMemoryBytes = 48 * 1024;
inline constexpr int kPeReservedBytes = 8 * 1024;
inline constexpr int kMaxGridSide = 512;    // blueshift's limit, well inside a WSE-3 fabric

enum class KernelKind : uint8_t { lm_head, rmsnorm };

struct KernelInfo {
  KernelKind kind;
  std::string_view name;          // --kernel value and proof.json "kernel"
  std::string_view summary;
  double default_tolerance;       // max abs error allowed between emulation and the Vulkan reference
  std::string_view output_symbol; // the exported array run.py reads back
};
const std::vector<KernelInfo>& kernel_table();
const KernelInfo& kernel_info(std::string_view name);  // throws bs::Error(usage) listing the names
const KernelInfo& kernel_info(KernelKind kind);

// Local task ids of the PE program (all in kAppTaskFirst..kAppTaskLast).
struct TaskIds {
  int sumsq = 8;        // partial sum of squares, then the row reduction
  int share = 9;        // root of the row hands the total back along the row
  int apply = 10;       // normalize (+ GEMV for lm_head)
  int done = 11;        // releases the command stream
};

struct Plan {
  KernelKind kind = KernelKind::lm_head;
  int width = 0;        // PE columns: the hidden dimension is split across them
  int height = 0;       // PE rows: bands of selected tokens (lm_head); 1 for rmsnorm
  int dim = 0;          // true hidden size (the RMSNorm mean divides by this, not the padded size)
  int tile_width = 0;   // hidden values per PE column; even so f16 pairs pack into u32
  int tokens = 0;       // selected tokens (lm_head); 0 for rmsnorm
  int rows_per_pe = 0;  // selected tokens per PE row (lm_head); 0 for rmsnorm
  float norm_eps = 1e-5f;
  bool norm_offset = false;  // RMSNorm scales by (1 + w)
  TaskIds tasks;

  int padded_dim() const { return width * tile_width; }
  int padded_tokens() const { return height * rows_per_pe; }
  // memcpy needs three columns west and two east of the kernel plus a one-PE halo.
  std::array<int, 2> fabric_dims() const { return {width + 7, height + 2}; }
  std::array<int, 2> fabric_offsets() const { return {4, 1}; }
  size_t pe_data_bytes() const;  // bytes of arrays one PE holds
  std::string_view kernel() const;
};

// Builds and validates a plan; tile_width 0 picks ceil(dim / width) rounded up to even.
// Throws bs::Error(usage) naming the flag when the grid does not fit the model or a PE's memory.
Plan make_plan(std::string_view kernel, const ModelConfig& cfg, int width, int height, int tile_width,
               int tokens);
// Re-checks a plan read back from proof.json (untrusted): same rules, error kind input.
void validate_plan(const Plan& plan);

// Bundle files every plan writes (inputs are raw little-endian arrays).
inline constexpr std::string_view kLayoutFile = "layout.csl";
inline constexpr std::string_view kPeFile = "pe_program.csl";
inline constexpr std::string_view kRunFile = "run.py";
inline constexpr std::string_view kCompileFile = "compile.sh";
inline constexpr std::string_view kHiddenFile = "hidden_f32.bin";      // [dim] f32, unpadded
inline constexpr std::string_view kNormFile = "norm_weight_f32.bin";   // [dim] f32, unpadded
inline constexpr std::string_view kHeadFile = "head_tiles_f16x2.bin";  // lm_head: u32 [height][width][rows_per_pe][tile_width/2]
inline constexpr std::string_view kProofFile = "proof.json";

// One host<->device copy run.py performs: `per_pe` 32-bit words to/from each PE of the region.
struct Transfer {
  std::string symbol;   // exported name in layout.csl / pe_program.csl
  std::string element;  // CSL element type of the exported pointer: f32 or u32
  bool to_device = true;
  int x = 0, y = 0, w = 0, h = 0;
  int per_pe = 0;
  std::string why;      // one line for run.py
};
std::vector<Transfer> plan_transfers(const Plan& plan);
inline constexpr std::string_view kLaunchFunction = "compute";

}  // namespace bs::csl
