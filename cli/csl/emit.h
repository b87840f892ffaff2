// Emitters: a Plan becomes CSL (layout.csl, pe_program.csl), a cs_python script (run.py) and the
// cslc command line (compile.sh). The text is meant to read like hand-written CSL: named params,
// comments on the plan, the ID map written out.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/csl/plan.h"

namespace bs::csl {

// What the comments say about where the plan came from.
struct EmitNotes {
  std::string model;   // e.g. "llama (manifest 3f2a…)"
  std::string device;  // Vulkan device that produced the reference
};

std::string emit_layout(const Plan& plan, const EmitNotes& notes);
std::string emit_pe_program(const Plan& plan);
std::string emit_run_py(const Plan& plan, const EmitNotes& notes);
std::string emit_compile_sh(const Plan& plan);

// The --params value of compile.sh ("width:4,height:2,..."): the integer shape of the plan.
std::string compile_params(const Plan& plan);
// How the emitter writes an f32 constant into CSL (round-trips exactly).
std::string csl_f32(float v);

// Replaces every @{name} in tmpl; throws (internal) on a marker without a value.
std::string fill_template(std::string_view tmpl, const std::vector<std::pair<std::string, std::string>>& vars);

}  // namespace bs::csl
