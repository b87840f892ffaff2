// blueshift wgsl FILE.wgsl [--entry NAME] [--define NAME=VALUE ...] [--emit glsl|spirv|check] [-o OUT]
// Compiles a WGSL compute shader through blueshift's own front-end. Invalid WGSL prints the
// diagnostics (file:line:col, source line, caret) and exits 3.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "runtime/base/error.h"
#include "runtime/wgsl/wgsl.h"

namespace {

struct WgslArgs {
  std::string file;
  std::string entry;
  std::vector<std::string> defines;
  std::string emit = "spirv";
  std::string out;
  bool json = false;
};

const char* kind_name(bs::wgsl::BindingKind k) {
  switch (k) {
    case bs::wgsl::BindingKind::uniform_buffer: return "uniform";
    case bs::wgsl::BindingKind::storage_buffer: return "storage";
    default: return "read-only-storage";
  }
}

int run_wgsl(const WgslArgs& a) {
  std::ifstream in(a.file, std::ios::binary);
  if (!in) bs::fail("{}: cannot open file", a.file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string source = ss.str();

  bs::wgsl::CompileOptions opt;
  opt.entry = a.entry;
  opt.spirv = a.emit != "glsl";
  for (const std::string& d : a.defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) bs::fail_kind(bs::ErrorKind::usage, "--define {}: expected NAME=VALUE", d);
    std::string v = d.substr(eq + 1);
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v == "true") x = 1;
    else if (v == "false") x = 0;
    else if (v.empty() || *end) bs::fail_kind(bs::ErrorKind::usage, "--define {}: '{}' is not a number", d, v);
    opt.overrides[d.substr(0, eq)] = x;
  }
  bs::wgsl::CompiledShader shader;
  try {
    shader = bs::wgsl::compile_wgsl(source, a.file, opt);
  } catch (const bs::Error& e) {
    // Diagnostics are already in compiler form; print them as they are.
    std::fprintf(stderr, "%s\n", e.what());
    return int(e.kind());
  }
  std::string payload;
  if (a.emit == "glsl") {
    payload = shader.glsl;
  } else if (a.emit == "spirv") {
    payload.assign(reinterpret_cast<const char*>(shader.spirv.data()), shader.spirv.size() * 4);
  }
  if (a.json || a.emit == "check") {
    nlohmann::json j;
    j["file"] = a.file;
    j["entry"] = shader.entry;
    j["workgroup_size"] = shader.workgroup_size;
    j["spirv_words"] = shader.spirv.size();
    for (const auto& b : shader.bindings)
      j["bindings"].push_back({{"group", b.group}, {"binding", b.binding}, {"kind", kind_name(b.kind)}, {"name", b.name},
                               {"min_size", b.min_size}, {"runtime_stride", b.runtime_stride}});
    const auto& f = shader.features;
    j["features"] = {{"f16", f.f16}, {"subgroups", f.subgroups}, {"subgroup_f16", f.subgroup_f16},
                     {"uniform_standard_layout", f.uniform_standard_layout}};
    std::string text = a.json ? j.dump(2) + "\n" : "";
    if (a.emit == "check") {
      if (!a.json) text = "ok: " + a.file + " (entry point '" + shader.entry + "')\n";
      std::fputs(text.c_str(), stdout);
      return 0;
    }
    std::fputs(text.c_str(), stderr);  // the payload owns stdout
  }
  if (a.out.empty()) {
    std::fwrite(payload.data(), 1, payload.size(), stdout);
  } else {
    std::ofstream o(a.out, std::ios::binary);
    o.write(payload.data(), std::streamsize(payload.size()));
    if (!o) bs::fail("{}: cannot write", a.out);
  }
  return 0;
}

void setup_wgsl(CLI::App& app) {
  auto a = std::make_shared<WgslArgs>();
  app.add_option("file", a->file, "WGSL source file")->required();
  app.add_option("--entry", a->entry, "compute entry point (default: the only one)");
  app.add_option("--define", a->defines, "override constant NAME=VALUE (by name or @id), repeatable");
  app.add_option("--emit", a->emit, "glsl | spirv | check")->check(CLI::IsMember({"glsl", "spirv", "check"}));
  app.add_option("-o,--output", a->out, "output file (default: stdout)");
  app.add_flag("--json", a->json, "print entry point, bindings and features as JSON (stdout for check, else stderr)");
  app.callback([a] { bs::cli::set_exit_code(run_wgsl(*a)); });
}

bs::cli::Command wgsl_cmd{"wgsl", "Compile a WGSL compute shader (WGSL -> Vulkan GLSL -> SPIR-V)", setup_wgsl};

}  // namespace
