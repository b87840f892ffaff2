#include "cli/csl/plan.h"

#include <fmt/format.h>

#include "runtime/base/error.h"

namespace bs::csl {

const std::vector<KernelInfo>& kernel_table() {
  // Tolerances: lm_head operands are f16 (about 1e-2 absolute for these sizes, see the README);
  // rmsnorm stays in f32 throughout, so only summation order and sqrt rounding differ.
  static const std::vector<KernelInfo> table = {
      {KernelKind::lm_head, "lm_head", "final RMSNorm + width-tiled lm_head GEMV of selected tokens", 1e-2, "logits"},
      {KernelKind::rmsnorm, "rmsnorm", "standalone final RMSNorm, width-tiled over one PE row", 1e-3, "normed"},
  };
  return table;
}

const KernelInfo& kernel_info(std::string_view name) {
  std::string names;
  for (const auto& k : kernel_table()) {
    if (k.name == name) return k;
    names += names.empty() ? std::string(k.name) : ", " + std::string(k.name);
  }
  fail_kind(ErrorKind::usage, "--kernel: unknown kernel '{}' (known: {})", name, names);
}

const KernelInfo& kernel_info(KernelKind kind) {
  for (const auto& k : kernel_table())
    if (k.kind == kind) return k;
  throw Error("csl: kernel kind missing from the table", ErrorKind::internal);
}

std::string_view Plan::kernel() const { return kernel_info(kind).name; }

size_t Plan::pe_data_bytes() const {
  size_t tw = size_t(tile_width);
  if (kind == KernelKind::rmsnorm) return tw * 4 * 3 + 8;  // hidden, weight, normed; two scalars
  // hidden f32, weight f32, x16 f16, head tile f16, partial and final logits f32, two scalars
  return tw * 4 + tw * 4 + tw * 2 + size_t(rows_per_pe) * tw * 2 + size_t(rows_per_pe) * 8 + 8;
}

namespace {

void check_plan(const Plan& p, ErrorKind kind) {
  if (p.width < 1 || p.width > kMaxGridSide || p.height < 1 || p.height > kMaxGridSide)
    fail_kind(kind, "--grid: {}x{} is outside 1..{} on a side", p.width, p.height, kMaxGridSide);
  if (p.dim < 2 || p.dim > 65535) fail_kind(kind, "plan: hidden size {} is outside 2..65535", p.dim);
  if (p.tile_width < 2 || p.tile_width % 2 != 0)
    fail_kind(kind, "--tile-width: {} must be a positive even number (f16 pairs pack into u32)", p.tile_width);
  if (int64_t(p.width) * p.tile_width < p.dim)
    fail_kind(kind, "--tile-width: {} columns x {} = {} values do not cover hidden size {}", p.width,
              p.tile_width, int64_t(p.width) * p.tile_width, p.dim);
  if (int64_t(p.width - 1) * p.tile_width >= p.dim)
    fail_kind(kind, "--grid: column {} would hold no hidden values ({} x {} >= {}); use fewer columns",
              p.width - 1, p.width - 1, p.tile_width, p.dim);
  if (!(p.norm_eps > 0.0f && p.norm_eps < 1.0f)) fail_kind(kind, "plan: norm_eps {} is outside (0, 1)", p.norm_eps);
  if (p.kind == KernelKind::lm_head) {
    if (p.tokens < 1 || p.tokens > 65535) fail_kind(kind, "--tokens: {} selected tokens, expected 1..65535", p.tokens);
    if (p.rows_per_pe < 1 || int64_t(p.rows_per_pe) * p.height < p.tokens)
      fail_kind(kind, "plan: {} rows per PE x {} PE rows do not cover {} tokens", p.rows_per_pe, p.height, p.tokens);
    if (int64_t(p.rows_per_pe) * (p.height - 1) >= p.tokens)
      fail_kind(kind, "--grid: PE row {} would hold no tokens ({} tokens over {} rows); use fewer rows",
                p.height - 1, p.tokens, p.height);
  } else {
    if (p.height != 1) fail_kind(kind, "--grid: the rmsnorm plan runs on one PE row (Wx1), got height {}", p.height);
    if (p.tokens != 0 || p.rows_per_pe != 0) fail_kind(kind, "plan: rmsnorm takes no tokens");
  }
  size_t budget = size_t(kPeMemoryBytes - kPeReservedBytes);
  if (p.pe_data_bytes() > budget)
    fail_kind(kind, "--grid: one PE would hold {} bytes of data, over the {}-byte budget of a 48 KiB PE; "
              "use a larger grid or a smaller --tile-width", p.pe_data_bytes(), budget);
}

}  // namespace

void validate_plan(const Plan& plan) { check_plan(plan, ErrorKind::input); }

Plan make_plan(std::string_view kernel, const ModelConfig& cfg, int width, int height, int tile_width, int tokens) {
  const KernelInfo& info = kernel_info(kernel);
  if (cfg.dim < 2) fail("model config: hidden size {} is not usable", cfg.dim);
  if (cfg.final_softcap > 0.0f && info.kind == KernelKind::lm_head)
    fail("export-csl: the model applies a final logit softcap ({}); the lm_head plan does not emit it yet",
         cfg.final_softcap);
  Plan p;
  p.kind = info.kind;
  p.width = width;
  p.height = height;
  p.dim = cfg.dim;
  p.norm_eps = cfg.norm_eps;
  p.norm_offset = cfg.norm_offset;
  if (width < 1 || width > kMaxGridSide || height < 1 || height > kMaxGridSide)
    fail_kind(ErrorKind::usage, "--grid: {}x{} is outside 1..{} on a side", width, height, kMaxGridSide);
  if (tile_width == 0) {
    tile_width = (cfg.dim + width - 1) / width;
    tile_width += tile_width % 2;
  }
  p.tile_width = tile_width;
  if (info.kind == KernelKind::lm_head) {
    p.tokens = tokens;
    p.rows_per_pe = tokens > 0 ? (tokens + height - 1) / height : 0;
  }
  check_plan(p, ErrorKind::usage);
  return p;
}

std::vector<Transfer> plan_transfers(const Plan& p) {
  const int W = p.width, H = p.height, tw = p.tile_width;
  if (p.kind == KernelKind::rmsnorm) {
    return {
        {"hidden", "f32", true, 0, 0, W, 1, tw, "each PE gets its slice of the hidden state"},
        {"norm_weight", "f32", true, 0, 0, W, 1, tw, "each PE gets its slice of the norm weight"},
        {"normed", "f32", false, 0, 0, W, 1, tw, "each PE returns its slice of the normalized state"},
    };
  }
  return {
      {"hidden", "f32", true, 0, 0, W, 1, tw, "row 0 gets the hidden state, one slice per column; the kernel broadcasts it down"},
      {"norm_weight", "f32", true, 0, 0, W, H, tw, "every PE gets its column's slice of the norm weight"},
      {"head_tile", "u32", true, 0, 0, W, H, p.rows_per_pe * tw / 2, "every PE gets its head tile: rows_per_pe x tile_width f16, packed in pairs"},
      {"logits", "f32", false, 0, 0, 1, H, p.rows_per_pe, "column 0 holds the reduced logits of its band of tokens"},
  };
}

}  // namespace bs::csl
