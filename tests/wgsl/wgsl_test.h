// Helpers shared by the WGSL tests.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/base/error.h"
#include "runtime/wgsl/wgsl.h"
#include "tests/common/testing.h"

namespace bs::testing {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::filesystem::path corpus_dir() {
#ifdef BS_WGSL_CORPUS
  return BS_WGSL_CORPUS;
#else
  return source_dir() / "tests/wgsl/corpus";
#endif
}
inline std::string corpus(const std::string& name) { return read_text(corpus_dir() / name); }

// GLSL of `src` (no SPIR-V); fails the test with the diagnostics if it does not compile.
inline std::string glsl_of(const std::string& src, const std::string& entry = "",
                           std::map<std::string, double> overrides = {}) {
  wgsl::CompileOptions opt;
  opt.entry = entry;
  opt.overrides = std::move(overrides);
  opt.spirv = false;
  try {
    return wgsl::compile_wgsl(src, "test.wgsl", opt).glsl;
  } catch (const bs::Error& e) {
    ADD_FAILURE() << e.what();
    return "";
  }
}

// The diagnostics `src` produces ("" when it compiles).
inline std::string diagnostics_of(const std::string& src) {
  try {
    wgsl::CompileOptions opt;
    opt.spirv = false;
    auto m = wgsl::parse_and_resolve(src, "bad.wgsl");
    if (m.entry_points.size() == 1) wgsl::compile_wgsl(m, opt);
    return "";
  } catch (const bs::Error& e) {
    return e.what();
  }
}

}  // namespace bs::testing
