#include "cli/csl/exporter.h"

#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/csl/emit.h"
#include "cli/csl/emulate.h"
#include "cli/csl/sha256.h"
#include "runtime/base/error.h"

#ifndef BS_VERSION
#define BS_VERSION "unknown"
#endif

namespace bs::csl {

namespace fs = std::filesystem;
static_assert(std::endian::native == std::endian::little, "bundle inputs are written as little-endian arrays");

std::string read_file_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open", path.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) fail("{}: read error", path.string());
  return ss.str();
}

void write_file_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail("{}: cannot create", path.string());
  f.write(bytes.data(), std::streamsize(bytes.size()));
  f.close();
  if (!f) fail("{}: write failed", path.string());
}

namespace {

bool is_hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

void check_finite(const std::vector<float>& v, const char* what) {
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) fail("export-csl: {}[{}] is {} (not finite)", what, i, v[i]);
}

void check_input(const HeadExportInput& in, KernelKind kind) {
  const size_t dim = size_t(in.cfg.dim);
  if (!is_hex64(in.manifest_sha256)) fail("export-csl: manifest SHA-256 '{}' is not 64 lowercase hex digits", in.manifest_sha256);
  for (const auto& s : in.shards)
    if (!is_hex64(s.sha256) || s.file.empty()) fail("export-csl: shard '{}' has no valid SHA-256", s.file);
  if (in.prompt_ids.empty()) fail("export-csl: the prompt has no token ids");
  if (in.hidden.size() != dim) fail("export-csl: hidden state has {} values, the model's hidden size is {}", in.hidden.size(), dim);
  if (in.norm_weight.size() != dim) fail("export-csl: final norm weight has {} values, expected {}", in.norm_weight.size(), dim);
  check_finite(in.hidden, "hidden");
  check_finite(in.norm_weight, "norm_weight");
  if (kind == KernelKind::rmsnorm) {
    if (in.reference_normed.size() != dim)
      fail("export-csl: the rmsnorm plan needs the Vulkan final-norm output ({} values), got {}", dim, in.reference_normed.size());
    check_finite(in.reference_normed, "reference_normed");
    return;
  }
  if (in.tokens.empty()) fail("--tokens: no tokens selected");
  for (int32_t t : in.tokens)
    if (t < 0 || (in.cfg.vocab > 0 && t >= in.cfg.vocab))
      fail_kind(ErrorKind::usage, "--tokens: token id {} is outside the vocabulary (0..{})", t, in.cfg.vocab - 1);
  if (in.head_rows_f16.size() != in.tokens.size())
    fail("export-csl: {} head rows for {} selected tokens", in.head_rows_f16.size(), in.tokens.size());
  for (size_t t = 0; t < in.head_rows_f16.size(); ++t) {
    if (in.head_rows_f16[t].size() != dim) fail("export-csl: head row of token {} has {} values, expected {}", in.tokens[t], in.head_rows_f16[t].size(), dim);
    for (uint16_t h : in.head_rows_f16[t])
      if ((h & 0x7c00) == 0x7c00) fail("export-csl: head row of token {} holds an f16 inf or nan", in.tokens[t]);
  }
  if (in.reference_logits.size() != in.tokens.size())
    fail("export-csl: {} reference logits for {} selected tokens", in.reference_logits.size(), in.tokens.size());
  check_finite(in.reference_logits, "reference_logits");
}

template <class T>
std::string_view as_bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

FileRecord write_record(const fs::path& dir, std::string_view name, std::string_view role, std::string_view bytes) {
  write_file_bytes(dir / name, bytes);
  return {std::string(name), std::string(role), uint64_t(bytes.size()), sha256_hex(bytes)};
}

void make_executable(const fs::path& p) {
  std::error_code ec;
  fs::permissions(p, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add, ec);
}

}  // namespace

ExportResult export_bundle(const HeadExportInput& in, const ExportOptions& opt) {
  const KernelInfo& kernel = kernel_info(opt.kernel);
  if (opt.out_dir.empty()) fail_kind(ErrorKind::usage, "--out: no bundle directory given");
  Plan plan = make_plan(opt.kernel, in.cfg, opt.grid_width, opt.grid_height, opt.tile_width,
                        kernel.kind == KernelKind::lm_head ? int(in.tokens.size()) : 0);
  check_input(in, kernel.kind);
  if (opt.tolerance < 0 || !std::isfinite(opt.tolerance)) fail_kind(ErrorKind::usage, "--tolerance: {} is not a positive number", opt.tolerance);

  std::error_code ec;
  fs::create_directories(opt.out_dir, ec);
  if (ec) fail("--out: cannot create {}: {}", opt.out_dir.string(), ec.message());
  if (fs::exists(opt.out_dir / kProofFile) && !opt.overwrite)
    fail_kind(ErrorKind::usage, "--out: {} already holds a bundle (proof.json); pass --force to replace it", opt.out_dir.string());

  PlanInputs inputs{in.hidden, in.norm_weight, {}};
  if (kernel.kind == KernelKind::lm_head) inputs.head_tiles = pack_head_tiles(plan, in.head_rows_f16);
  std::vector<float> emulated = emulate(plan, inputs);
  const std::vector<float>& reference = kernel.kind == KernelKind::lm_head ? in.reference_logits : in.reference_normed;

  Proof pr;
  pr.manifest_sha256 = in.manifest_sha256;
  pr.shards = in.shards;
  pr.arch = in.cfg.arch;
  pr.vocab = in.cfg.vocab;
  pr.prompt = in.prompt;
  pr.prompt_ids = in.prompt_ids;
  if (kernel.kind == KernelKind::lm_head) pr.tokens = in.tokens;
  pr.blueshift_version = BS_VERSION;
  pr.vulkan_device = in.device_name;
  pr.hidden.dtype = "f32";
  pr.hidden.shape = {int64_t(in.hidden.size())};
  pr.hidden.sha256 = sha256_hex(as_bytes(in.hidden));
  pr.hidden.preview.assign(in.hidden.begin(), in.hidden.begin() + std::min<size_t>(8, in.hidden.size()));
  pr.reference = reference;
  pr.plan = plan;
  pr.emulated = emulated;
  pr.max_abs_error = 0;
  for (size_t i = 0; i < reference.size(); ++i)
    pr.max_abs_error = std::max(pr.max_abs_error, std::fabs(double(emulated[i]) - double(reference[i])));
  pr.tolerance = opt.tolerance > 0 ? opt.tolerance : kernel.default_tolerance;
  pr.passed = pr.max_abs_error <= pr.tolerance;

  EmitNotes notes;
  notes.model = fmt::format("{} (dim {}, vocab {}, manifest {})", in.cfg.arch.empty() ? "a model" : in.cfg.arch,
                            in.cfg.dim, in.cfg.vocab, in.manifest_sha256.substr(0, 12));
  notes.device = in.device_name.empty() ? "an unnamed Vulkan device" : in.device_name;
  const fs::path& dir = opt.out_dir;
  pr.files.push_back(write_record(dir, kLayoutFile, "csl", emit_layout(plan, notes)));
  pr.files.push_back(write_record(dir, kPeFile, "csl", emit_pe_program(plan)));
  pr.files.push_back(write_record(dir, kRunFile, "host", emit_run_py(plan, notes)));
  pr.files.push_back(write_record(dir, kCompileFile, "host", emit_compile_sh(plan)));
  pr.files.push_back(write_record(dir, kHiddenFile, "input", as_bytes(in.hidden)));
  pr.files.push_back(write_record(dir, kNormFile, "input", as_bytes(in.norm_weight)));
  if (kernel.kind == KernelKind::lm_head) pr.files.push_back(write_record(dir, kHeadFile, "input", as_bytes(inputs.head_tiles)));
  make_executable(dir / kRunFile);
  make_executable(dir / kCompileFile);

  // proof.json last: a bundle without it is visibly incomplete.
  std::string text = write_proof(pr);
  write_file_bytes(dir / kProofFile, text);
  return {pr, dir / kProofFile};
}

void reseal_bundle(const fs::path& dir) {
  Proof pr = parse_proof(read_file_bytes(dir / kProofFile));
  for (FileRecord& f : pr.files) {
    std::string bytes = read_file_bytes(dir / f.name);
    f.bytes = bytes.size();
    f.sha256 = sha256_hex(bytes);
  }
  write_file_bytes(dir / kProofFile, write_proof(pr));
}

}  // namespace bs::csl
