// blueshift verify-proof BUNDLE_DIR: re-hash a CSL bundle, re-run the host emulation of its plan,
// statically check its CSL, and (with --trace) record a device result in a new proof revision.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/csl/verify.h"
#include "runtime/base/error.h"

namespace {

struct Options {
  std::string bundle, trace, trace_mode;
  bool json = false;
};

nlohmann::json report_json(const std::string& bundle, const bs::csl::VerifyReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks)
    checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}, {"exit_code", c.exit_code}});
  nlohmann::json j = {{"bundle", bundle}, {"ok", r.ok()}, {"checks", checks}};
  if (const auto* bad = r.first_failure()) j["first_failure"] = bad->name + ": " + bad->detail;
  if (r.proof) {
    j["kernel"] = std::string(r.proof->plan.kernel());
    j["revision"] = r.proof->revision;
    j["max_abs_error"] = r.proof->max_abs_error;
    j["tolerance"] = r.proof->tolerance;
    j["simulator"] = r.proof->simulator.status;
    j["hardware"] = r.proof->hardware.status;
  }
  return j;
}

void run(const Options& o) {
  if (!o.trace_mode.empty() && o.trace_mode != "simulator" && o.trace_mode != "hardware")
    bs::fail_kind(bs::ErrorKind::usage, "--trace-mode: '{}' is neither simulator nor hardware", o.trace_mode);
  if (!o.trace.empty()) {
    bs::csl::TraceOutcome t = bs::csl::record_trace(o.bundle, o.trace, o.trace_mode);
    if (o.json) {
      std::cout << nlohmann::json{{"bundle", o.bundle}, {"revision", t.revision}, {"mode", t.mode}, {"status", t.status},
                                  {"trace_file", t.trace_file}, {"max_abs_error_vs_reference", t.max_abs_error_vs_reference},
                                  {"max_abs_error_vs_emulation", t.max_abs_error_vs_emulation}, {"tolerance", t.tolerance}}
                       .dump(2)
                << "\n";
    } else {
      std::printf("%s trace recorded as %s in proof revision %d: %s (max abs error %.3g vs reference, %.3g vs "
                  "emulation, tolerance %.3g)\n", t.mode.c_str(), t.trace_file.c_str(), t.revision, t.status.c_str(),
                  t.max_abs_error_vs_reference, t.max_abs_error_vs_emulation, t.tolerance);
    }
    bs::cli::set_exit_code(t.status == "match" ? 0 : bs::csl::kExitMismatch);
    return;
  }
  bs::csl::VerifyReport r = bs::csl::verify_bundle(o.bundle);
  if (o.json) {
    std::cout << report_json(o.bundle, r).dump(2) << "\n";
  } else {
    for (const auto& c : r.checks)
      if (!c.ok) std::printf("FAIL %s: %s\n", c.name.c_str(), c.detail.c_str());
    if (r.ok())
      std::printf("ok: %zu checks passed (%s, revision %d; simulator %s, hardware %s; no Cerebras tool ran here)\n",
                  r.checks.size(), std::string(r.proof->plan.kernel()).c_str(), r.proof->revision,
                  r.proof->simulator.status.c_str(), r.proof->hardware.status.c_str());
  }
  if (const auto* bad = r.first_failure()) {
    if (!o.json) std::fprintf(stderr, "error: %s: %s\n", bad->name.c_str(), bad->detail.c_str());
    bs::cli::set_exit_code(bad->exit_code);
  }
}

void setup(CLI::App& app) {
  auto o = std::make_shared<Options>();
  app.add_option("bundle", o->bundle, "bundle directory written by export-csl")->required();
  app.add_flag("--json", o->json, "print the checks as JSON");
  app.add_option("--trace", o->trace, "a device result (run.py's result.json, or raw f32 values) to record");
  app.add_option("--trace-mode", o->trace_mode, "simulator or hardware, for a raw f32 trace");
  app.footer("Exit status: 0 all checks pass (with --trace: the device matched); 1 the numbers miss the tolerance; "
             "3 malformed bundle or a CSL rule broken; 4 integrity: a file or a number differs from proof.json.");
  app.callback([o] { run(*o); });
}

bs::cli::Command verify_proof_cmd{"verify-proof", "Re-check a CSL bundle against its proof.json; record a device trace", setup};

}  // namespace
