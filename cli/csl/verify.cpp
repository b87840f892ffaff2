#include "cli/csl/verify.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

#include "cli/csl/csl_check.h"
#include "cli/csl/emit.h"
#include "cli/csl/emulate.h"
#include "cli/csl/exporter.h"
#include "cli/csl/sha256.h"
#include "runtime/base/error.h"
#include "runtime/base/half.h"

namespace bs::csl {

namespace fs = std::filesystem;
using nlohmann::json;

bool VerifyReport::ok() const { return first_failure() == nullptr; }

const VerifyCheck* VerifyReport::first_failure() const {
  for (const auto& c : checks)
    if (!c.ok) return &c;
  return nullptr;
}

namespace {

constexpr int kExitIntegrity = int(ErrorKind::integrity);
constexpr int kExitInput = int(ErrorKind::input);

struct Run {
  VerifyReport report;
  void pass(std::string name) { report.checks.push_back({std::move(name), true, "", 0}); }
  void fail(std::string name, std::string detail, int code) {
    report.checks.push_back({std::move(name), false, std::move(detail), code});
  }
};

const FileRecord* find_file(const Proof& pr, std::string_view name) {
  for (const auto& f : pr.files)
    if (f.name == name) return &f;
  return nullptr;
}

// Reads a bundle input of exactly `count` elements of T (the size is checked before reading).
template <class T>
std::vector<T> read_array(const fs::path& path, size_t count) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) bs::fail("{}: cannot read its size", path.filename().string());
  if (size != count * sizeof(T))
    bs::fail("{}: {} bytes, the plan needs {} ({} values)", path.filename().string(), size, count * sizeof(T), count);
  std::string bytes = read_file_bytes(path);
  std::vector<T> out(count);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    double d = std::fabs(double(a[i]) - double(b[i]));
    if (!(d <= m)) m = d;  // a nan difference propagates
  }
  return m;
}

// The integer after "\nNAME = " in run.py, or -1.
long py_constant(const std::string& text, std::string_view name) {
  std::string needle = "\n" + std::string(name) + " = ";
  size_t at = text.find(needle);
  if (at == std::string::npos) return -1;
  return std::strtol(text.c_str() + at + needle.size(), nullptr, 10);
}

// The literal after "const NAME: f32 = " in layout.csl, or "".
std::string csl_constant(const std::string& text, std::string_view name) {
  std::string needle = "const " + std::string(name) + ": f32 = ";
  size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  size_t end = text.find(';', at);
  return end == std::string::npos ? "" : text.substr(at + needle.size(), end - at - needle.size());
}

void check_files(Run& run, const fs::path& dir, const Proof& pr) {
  std::vector<std::string_view> required = {kLayoutFile, kPeFile, kRunFile, kCompileFile, kHiddenFile, kNormFile};
  if (pr.plan.kind == KernelKind::lm_head) required.push_back(kHeadFile);
  for (std::string_view name : required)
    if (!find_file(pr, name)) run.fail(std::string(name), "proof.json does not list it", kExitIntegrity);
  for (const FileRecord& f : pr.files) {
    fs::path p = dir / f.name;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      run.fail(f.name, "missing from the bundle", kExitIntegrity);
      continue;
    }
    uintmax_t size = fs::file_size(p, ec);
    if (ec || size != f.bytes) {
      run.fail(f.name, fmt::format("{} bytes, proof.json records {}", ec ? 0 : size, f.bytes), kExitIntegrity);
      continue;
    }
    std::string got = sha256_file(p);
    if (got != f.sha256) run.fail(f.name, fmt::format("SHA-256 {} differs from proof.json's {}", got, f.sha256), kExitIntegrity);
    else run.pass(f.name);
  }
}

void check_emulation(Run& run, const fs::path& dir, const Proof& pr) {
  const Plan& plan = pr.plan;
  PlanInputs in;
  try {
    in.hidden = read_array<float>(dir / kHiddenFile, size_t(plan.dim));
    in.norm_weight = read_array<float>(dir / kNormFile, size_t(plan.dim));
    if (plan.kind == KernelKind::lm_head) in.head_tiles = read_array<uint32_t>(dir / kHeadFile, head_tile_words(plan));
  } catch (const Error& e) {
    run.fail("inputs", e.what(), kExitIntegrity);
    return;
  }
  // The hidden state is the one the reference digest names.
  std::string digest = sha256_hex(in.hidden.data(), in.hidden.size() * 4);
  bool preview_ok = pr.hidden.preview.size() == std::min<size_t>(8, in.hidden.size());
  for (size_t i = 0; preview_ok && i < pr.hidden.preview.size(); ++i) preview_ok = pr.hidden.preview[i] == in.hidden[i];
  if (digest != pr.hidden.sha256) run.fail("reference.hidden_state", fmt::format("{} hashes to {}, proof.json says {}", kHiddenFile, digest, pr.hidden.sha256), kExitIntegrity);
  else if (pr.hidden.dtype != "f32" || pr.hidden.shape != std::vector<int64_t>{plan.dim}) run.fail("reference.hidden_state", "dtype/shape differ from f32 [dim]", kExitIntegrity);
  else if (!preview_ok) run.fail("reference.hidden_state", "preview differs from the first values of the hidden state", kExitIntegrity);
  else run.pass("reference.hidden_state");

  std::vector<float> emulated = emulate(plan, in);
  size_t n = emulated.size();
  if (pr.reference.size() != n) {
    run.fail("reference.values", fmt::format("{} values, the plan produces {}", pr.reference.size(), n), kExitIntegrity);
    return;
  }
  if (pr.emulated.size() != n) {
    run.fail("emulation.values", fmt::format("{} values, the plan produces {}", pr.emulated.size(), n), kExitIntegrity);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (float_to_bits(emulated[i]) != float_to_bits(pr.emulated[i])) {
      run.fail("emulation.values", fmt::format("re-running the plan gives {} at index {}, proof.json records {}", emulated[i], i, pr.emulated[i]), kExitIntegrity);
      return;
    }
  }
  run.pass("emulation.values");
  double err = max_abs_diff(emulated, pr.reference);
  bool passed = err <= pr.tolerance;
  if (err != pr.max_abs_error) run.fail("emulation.max_abs_error", fmt::format("recomputed {} , proof.json records {}", err, pr.max_abs_error), kExitIntegrity);
  else if (!(pr.tolerance > 0)) run.fail("emulation.tolerance", fmt::format("{} is not a positive tolerance", pr.tolerance), kExitIntegrity);
  else if (passed != pr.passed) run.fail("emulation.passed", fmt::format("recorded {}, but {} vs tolerance {} gives {}", pr.passed, err, pr.tolerance, passed), kExitIntegrity);
  else if (!passed) run.fail("emulation", fmt::format("max abs error {} vs the Vulkan reference exceeds the tolerance {}", err, pr.tolerance), kExitMismatch);
  else run.pass("emulation");
}

void check_sources(Run& run, const BundleSources& src, const Proof& pr) {
  for (const CslFinding& f : check_csl(src)) run.fail("csl", to_string(f), kExitInput);
  // The numbers written into the sources are the plan's numbers.
  const Plan& p = pr.plan;
  auto dims = p.fabric_dims();
  auto offs = p.fabric_offsets();
  std::string want_params = "--params=" + compile_params(p) + " ";
  std::string want_dims = fmt::format("--fabric-dims={},{} --fabric-offsets={},{}", dims[0], dims[1], offs[0], offs[1]);
  bool ok = true;
  auto differ = [&](std::string_view file, std::string detail) {
    run.fail(std::string(file), std::move(detail), kExitIntegrity);
    ok = false;
  };
  if (src.compile_sh.find(want_params) == std::string::npos) differ(kCompileFile, "cslc --params differ from the plan (" + want_params + ")");
  if (src.compile_sh.find(want_dims) == std::string::npos) differ(kCompileFile, "fabric dims/offsets differ from the plan (" + want_dims + ")");
  if (csl_constant(src.layout, "norm_eps") != csl_f32(p.norm_eps)) differ(kLayoutFile, "norm_eps differs from the plan (" + csl_f32(p.norm_eps) + ")");
  if (csl_constant(src.layout, "norm_offset") != (p.norm_offset ? "1.0" : "0.0")) differ(kLayoutFile, "norm_offset differs from the plan");
  const std::pair<std::string_view, long> py[] = {{"WIDTH", p.width}, {"HEIGHT", p.height}, {"DIM", p.dim},
                                                  {"TILE_WIDTH", p.tile_width}, {"ROWS_PER_PE", p.rows_per_pe}, {"TOKENS", p.tokens}};
  for (const auto& [name, value] : py)
    if (py_constant(src.run_py, name) != value) differ(kRunFile, fmt::format("{} differs from the plan ({})", name, value));
  if (ok) run.pass("plan constants");
}

struct Trace {
  std::string mode;          // simulator | hardware
  std::string proof_sha256;  // the proof revision run.py read ("" for raw traces)
  std::vector<float> values;
};

// run.py's result JSON, or n raw little-endian f32 values (mode given by the caller). Untrusted.
Trace parse_trace(const std::string& bytes, const std::string& name, size_t n, const std::string& raw_mode) {
  Trace tr;
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {
    bool too_deep = false;
    json::parser_callback_t limit = [&too_deep](int depth, json::parse_event_t, json&) {
      too_deep |= depth > 8;
      return !too_deep;
    };
    json doc = json::parse(bytes, limit, /*allow_exceptions=*/false);
    if (too_deep || doc.is_discarded() || !doc.is_object()) bs::fail("{}: not a run.py result (invalid JSON)", name);
    auto str = [&](const char* key) {
      auto it = doc.find(key);
      if (it == doc.end() || !it->is_string()) bs::fail("{}: \"{}\" is missing or not a string", name, key);
      return it->get<std::string>();
    };
    if (str("schema") != "blueshift.csl-result") bs::fail("{}: schema is not blueshift.csl-result", name);
    tr.mode = str("mode");
    tr.proof_sha256 = str("proof_sha256");
    auto it = doc.find("values");
    if (it == doc.end() || !it->is_array() || it->size() != n)
      bs::fail("{}: \"values\" must be an array of {} numbers", name, n);
    for (const json& v : *it) {
      if (!v.is_number()) bs::fail("{}: \"values\" must hold numbers", name);
      tr.values.push_back(float(v.get<double>()));
    }
  } else {
    if (bytes.size() != n * 4) bs::fail("{}: {} bytes; a raw trace holds {} f32 values ({} bytes)", name, bytes.size(), n, n * 4);
    if (raw_mode.empty()) fail_kind(ErrorKind::usage, "{}: a raw f32 trace needs --trace-mode simulator|hardware", name);
    tr.mode = raw_mode;
    tr.values.resize(n);
    std::memcpy(tr.values.data(), bytes.data(), bytes.size());
  }
  if (tr.mode != "simulator" && tr.mode != "hardware") bs::fail("{}: mode '{}' is neither simulator nor hardware", name, tr.mode);
  return tr;
}

DeviceStatus judge(const Proof& pr, const Trace& tr, int revision, const std::string& file) {
  DeviceStatus st;
  st.revision = revision;
  st.trace = file;
  st.max_abs_error_vs_reference = max_abs_diff(tr.values, pr.reference);
  st.max_abs_error_vs_emulation = max_abs_diff(tr.values, pr.emulated);
  st.status = st.max_abs_error_vs_reference <= pr.tolerance ? "match" : "no_match";
  return st;
}

// A recorded device status must be what its trace file says.
void check_status(Run& run, const fs::path& dir, const Proof& pr, const DeviceStatus& st, const char* which) {
  std::string name = std::string(which) + ".status";
  if (st.status == "pending") {
    run.pass(name);
    return;
  }
  const FileRecord* rec = find_file(pr, st.trace);
  if (!rec || rec->role != "trace") {
    run.fail(name, fmt::format("trace {} is not listed in proof.json files as a trace", st.trace), kExitIntegrity);
    return;
  }
  try {
    Trace tr = parse_trace(read_file_bytes(dir / st.trace), st.trace, pr.reference.size(), which);
    DeviceStatus again = judge(pr, tr, st.revision, st.trace);
    if (tr.mode != which) run.fail(name, fmt::format("{} is a {} trace", st.trace, tr.mode), kExitIntegrity);
    else if (again.status != st.status || again.max_abs_error_vs_reference != st.max_abs_error_vs_reference ||
             again.max_abs_error_vs_emulation != st.max_abs_error_vs_emulation)
      run.fail(name, fmt::format("{} gives {} (max abs error {}), proof.json records {} ({})", st.trace, again.status,
                                 again.max_abs_error_vs_reference, st.status, st.max_abs_error_vs_reference), kExitIntegrity);
    else run.pass(name);
  } catch (const Error& e) {
    run.fail(name, e.what(), kExitIntegrity);
  }
}

}  // namespace

VerifyReport verify_bundle(const fs::path& dir) {
  Run run;
  Proof pr;
  try {
    pr = parse_proof(read_file_bytes(dir / kProofFile));
  } catch (const Error& e) {
    std::string detail = e.what();
    if (detail.starts_with("proof.json: ")) detail.erase(0, 12);
    run.fail(std::string(kProofFile), detail, kExitInput);
    return run.report;
  }
  if (pr.seal_ok) run.pass("proof.json seal");
  else run.fail(std::string(kProofFile), "content differs from its proof_sha256: proof.json was edited after it was written", kExitIntegrity);
  check_files(run, dir, pr);
  check_emulation(run, dir, pr);
  BundleSources src;
  auto slurp = [&](std::string_view name) {
    std::error_code ec;
    return fs::is_regular_file(dir / name, ec) ? read_file_bytes(dir / name) : std::string();
  };
  src.layout = slurp(kLayoutFile);
  src.pe = slurp(kPeFile);
  src.run_py = slurp(kRunFile);
  src.compile_sh = slurp(kCompileFile);
  check_sources(run, src, pr);
  check_status(run, dir, pr, pr.simulator, "simulator");
  check_status(run, dir, pr, pr.hardware, "hardware");
  run.report.proof = std::move(pr);
  return run.report;
}

TraceOutcome record_trace(const fs::path& dir, const fs::path& trace, const std::string& mode_for_raw) {
  VerifyReport report = verify_bundle(dir);
  if (const VerifyCheck* bad = report.first_failure())
    fail_kind(ErrorKind(bad->exit_code == kExitMismatch ? kExitInput : bad->exit_code),
              "verify-proof: {}: {} (the trace is not recorded on a bundle that does not verify)", bad->name, bad->detail);
  Proof pr = *report.proof;
  std::string bytes = read_file_bytes(trace);
  Trace tr = parse_trace(bytes, trace.filename().string(), pr.reference.size(), mode_for_raw);
  bool known_revision = tr.proof_sha256.empty() || tr.proof_sha256 == pr.proof_sha256;
  for (const json& h : pr.history) known_revision |= h.at("proof_sha256").get<std::string>() == tr.proof_sha256;
  if (!known_revision)
    fail_kind(ErrorKind::integrity, "{}: was produced from a proof.json ({}) that is not a revision of this bundle",
              trace.filename().string(), tr.proof_sha256);

  int revision = pr.revision + 1;
  bool is_json = bytes.find_first_not_of(" \t\r\n") != std::string::npos && bytes[bytes.find_first_not_of(" \t\r\n")] == '{';
  std::string name = fmt::format("trace_r{}_{}.{}", revision, tr.mode, is_json ? "json" : "f32.bin");
  write_file_bytes(dir / name, bytes);
  DeviceStatus st = judge(pr, tr, revision, name);

  pr.history.push_back({{"revision", pr.revision},
                        {"proof_sha256", pr.proof_sha256},
                        {"simulator_status", pr.simulator.status},
                        {"hardware_status", pr.hardware.status}});
  pr.revision = revision;
  pr.files.push_back({name, "trace", uint64_t(bytes.size()), sha256_hex(bytes)});
  (tr.mode == "hardware" ? pr.hardware : pr.simulator) = st;
  write_file_bytes(dir / kProofFile, write_proof(pr));
  return {revision, tr.mode, st.status, name, st.max_abs_error_vs_reference, st.max_abs_error_vs_emulation, pr.tolerance};
}

}  // namespace bs::csl
