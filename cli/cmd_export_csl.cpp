// blueshift export-csl: a model's output head as Cerebras CSL, with run.py, compile.sh and a sealed
// proof.json that binds the Vulkan run to the generated code (cli/csl/README.md).
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/csl/exporter.h"
#include "cli/csl/model_source.h"
#include "cli/csl/plan.h"
#include "cli/csl/verify.h"
#include "runtime/base/error.h"

namespace {

struct Options {
  bs::csl::ExportArgs args;
  std::string prompt_tokens, tokens, grid, dtype = "f16", out;
  int tile_width = 0;
  double tolerance = 0;
  bool force = false, json = false;
};

std::vector<int32_t> parse_ids(const std::string& text, const char* flag) {
  std::vector<int32_t> ids;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0 || v > INT32_MAX)
      bs::fail_kind(bs::ErrorKind::usage, "{}: '{}' is not a token id", flag, item);
    ids.push_back(int32_t(v));
  }
  if (ids.empty()) bs::fail_kind(bs::ErrorKind::usage, "{}: no token ids", flag);
  return ids;
}

std::pair<int, int> parse_grid(const std::string& text) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') || w < 1 || h < 1)
    bs::fail_kind(bs::ErrorKind::usage, "--grid: '{}' is not WIDTHxHEIGHT (for example 4x2)", text);
  return {w, h};
}

void run(Options& o) {
  if (o.dtype != "f16") bs::fail_kind(bs::ErrorKind::usage, "--dtype: only f16 operands are planned, got '{}'", o.dtype);
  if (o.args.prompt.empty() == o.prompt_tokens.empty())
    bs::fail_kind(bs::ErrorKind::usage, "give exactly one of --prompt and --prompt-tokens");
  if (!o.prompt_tokens.empty()) o.args.prompt_ids = parse_ids(o.prompt_tokens, "--prompt-tokens");
  const bs::csl::KernelInfo& kernel = bs::csl::kernel_info(o.args.kernel);
  if (kernel.kind == bs::csl::KernelKind::lm_head) o.args.tokens = parse_ids(o.tokens, "--tokens");
  else if (!o.tokens.empty()) bs::fail_kind(bs::ErrorKind::usage, "--tokens: the {} plan takes no tokens", kernel.name);
  auto [w, h] = parse_grid(o.grid);

  bs::csl::ExportOptions opt;
  opt.kernel = o.args.kernel;
  opt.grid_width = w;
  opt.grid_height = h;
  opt.tile_width = o.tile_width;
  opt.tolerance = o.tolerance;
  opt.out_dir = o.out;
  opt.overwrite = o.force;

  bs::csl::HeadExportInput input = bs::csl::run_model_for_export(o.args);
  bs::csl::ExportResult r = bs::csl::export_bundle(input, opt);
  const bs::csl::Proof& pr = r.proof;
  if (o.json) {
    nlohmann::json j = {{"bundle", o.out}, {"proof_sha256", pr.proof_sha256}, {"kernel", kernel.name},
                        {"max_abs_error", pr.max_abs_error}, {"tolerance", pr.tolerance}, {"passed", pr.passed},
                        {"emulated", pr.emulated}, {"reference", pr.reference}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("wrote %s (%s, grid %dx%d, tile width %d)\n", r.proof_path.parent_path().c_str(), std::string(kernel.name).c_str(),
                pr.plan.width, pr.plan.height, pr.plan.tile_width);
    std::printf("host emulation vs Vulkan reference: max abs error %.3g, tolerance %.3g: %s\n", pr.max_abs_error,
                pr.tolerance, pr.passed ? "pass" : "FAIL");
    std::printf("no Cerebras compiler or device ran; next: ./compile.sh && cs_python run.py, then "
                "blueshift verify-proof %s --trace result.json\n", o.out.c_str());
  }
  bs::cli::set_exit_code(pr.passed ? 0 : bs::csl::kExitMismatch);
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("--model", o->args.model_dir, "RDRR model directory")->required();
  app.add_option("--prompt", o->args.prompt, "prompt text");
  app.add_option("--prompt-tokens", o->prompt_tokens, "prompt as comma-separated token ids");
  app.add_option("--tokens", o->tokens, "comma-separated token ids whose logits the lm_head kernel computes");
  app.add_option("--grid", o->grid, "PE rectangle WIDTHxHEIGHT (hidden tiles x token bands)")->required();
  app.add_option("--out", o->out, "bundle directory to write")->required();
  app.add_option("--tile-width", o->tile_width, "hidden values per PE column (even; default ceil(dim/width))");
  app.add_option("--dtype", o->dtype, "operand dtype of the GEMV (f16)");
  app.add_option("--kernel", o->args.kernel, "kernel plan: lm_head (default) or rmsnorm");
  app.add_option("--tolerance", o->tolerance, "max abs error allowed vs the Vulkan reference (default per kernel)");
  app.add_flag("--force", o->force, "replace an existing bundle in --out");
  app.add_flag("--json", o->json, "print a JSON summary");
  app.footer("Exit status: 0 written and the host emulation matches the Vulkan reference; 1 written but outside "
             "the tolerance; 2 usage; 3 bad input; 5 no usable Vulkan device.");
  app.callback([o] { run(*o); });
}

bs::cli::Command export_csl_cmd{"export-csl", "Emit Cerebras CSL for the model's output head, with run.py and a proof bundle", setup};

}  // namespace
