// verify-proof: re-checks a bundle against its proof.json before anyone spends device time on it,
// and records a device trace (run.py's result file) in a new proof revision.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/csl/proof.h"

namespace bs::csl {

// Exit codes of verify-proof: integrity (a hash or a recomputed number differs) is the project's 4;
// a malformed bundle or a CSL rule broken is 3 (input); numbers that agree with the proof but miss
// the reference tolerance are 1.
inline constexpr int kExitMismatch = 1;

struct VerifyCheck {
  std::string name;    // what was checked: a file name, "proof.json", "emulation", "csl", ...
  bool ok = true;
  std::string detail;  // on failure: what differs, expected vs actual
  int exit_code = 0;   // on failure: 4, 3 or 1
};

struct VerifyReport {
  std::vector<VerifyCheck> checks;
  std::optional<Proof> proof;  // when proof.json parsed
  bool ok() const;
  const VerifyCheck* first_failure() const;
};

// Runs every check it can; stops early only when proof.json itself cannot be read.
VerifyReport verify_bundle(const std::filesystem::path& dir);

struct TraceOutcome {
  int revision = 0;          // the new proof revision
  std::string mode;          // simulator | hardware
  std::string status;        // match | no_match
  std::string trace_file;    // its name inside the bundle
  double max_abs_error_vs_reference = 0;
  double max_abs_error_vs_emulation = 0;
  double tolerance = 0;
};

// Verifies the bundle (throws bs::Error naming the first failure), reads the trace — run.py's JSON
// result, or raw little-endian f32 values when mode_for_raw names the mode — copies it into the
// bundle, and writes proof revision N+1 with the simulator or hardware status set to match/no_match.
TraceOutcome record_trace(const std::filesystem::path& dir, const std::filesystem::path& trace,
                          const std::string& mode_for_raw = "");

}  // namespace bs::csl
