// The public entry points: parse + resolve (with pipeline constants), emit GLSL for one entry
// point, and compile it to SPIR-V with shaderc for Vulkan 1.2.
#include <fmt/format.h>
#include <shaderc/shaderc.hpp>

#include "runtime/base/error.h"
#include "runtime/wgsl/emit_impl.h"
#include "runtime/wgsl/resolver.h"
#include "runtime/wgsl/wgsl.h"

namespace bs::wgsl {

namespace {

std::shared_ptr<Module> build(std::string_view source, std::string_view filename, const OverrideValues* ov,
                              Diagnostics*& diags_out, std::unique_ptr<Diagnostics>& holder) {
  auto m = std::make_shared<Module>();
  m->source = std::string(source);
  m->filename = std::string(filename);
  holder = std::make_unique<Diagnostics>(m->source, m->filename);
  diags_out = holder.get();
  try {
    parse_module(*m, *holder);
    if (!holder->has_errors()) resolve_module(*m, *holder, ov);
  } catch (const Abort&) {
    // Every Abort follows a recorded diagnostic; one escaping a recovery point still stops here.
    if (!holder->has_errors()) throw bs::Error("WGSL front-end aborted without a diagnostic (a blueshift bug)", bs::ErrorKind::internal);
  } catch (const ConstError& e) {
    holder->error(Loc{}, e.message);
  }
  return m;
}

}  // namespace

WgslModule parse_and_resolve(std::string_view source, std::string_view filename) {
  Diagnostics* diags = nullptr;
  std::unique_ptr<Diagnostics> holder;
  auto m = build(source, filename, nullptr, diags, holder);
  diags->throw_if_errors();
  WgslModule out;
  out.source = m->source;
  out.filename = m->filename;
  for (const Decl* d : m->globals) {
    if (d->kind == DeclKind::fn && d->is_entry) {
      EntryPointInfo ep;
      ep.name = d->name;
      for (size_t i = 0; i < 3; ++i) {
        const Expr* e = d->wg_exprs[i];
        if (!e) continue;
        if (e->value) ep.workgroup_size[i] = uint32_t(e->value->i);
        else ep.workgroup_size_known = false;
      }
      out.entry_points.push_back(ep);
    } else if (d->kind == DeclKind::override_) {
      out.overrides.push_back({d->name, d->override_id, type_name(d->type), d->init != nullptr});
    }
  }
  out.ast = m;
  return out;
}

CompiledShader compile_wgsl(const WgslModule& module, const CompileOptions& opt) {
  return compile_wgsl(module.source, module.filename, opt);
}

CompiledShader compile_wgsl(std::string_view source, std::string_view filename, const CompileOptions& opt) {
  Diagnostics* diags = nullptr;
  std::unique_ptr<Diagnostics> holder;
  auto m = build(source, filename, &opt.overrides, diags, holder);
  diags->throw_if_errors();
  // Every constant given must name an override, as WebGPU requires of a pipeline's `constants`.
  for (const auto& [key, value] : opt.overrides) {
    bool found = false;
    for (const Decl* d : m->globals)
      if (d->kind == DeclKind::override_ && (d->name == key || (d->override_id >= 0 && std::to_string(d->override_id) == key)))
        found = true;
    if (!found) fail("{}: no override named '{}' (pipeline constants must match an override's name or @id)", filename, key);
  }
  std::vector<Decl*> entries;
  for (Decl* d : m->globals)
    if (d->kind == DeclKind::fn && d->is_entry) entries.push_back(d);
  Decl* entry = nullptr;
  if (opt.entry.empty()) {
    if (entries.size() != 1)
      fail("{}: the module has {} compute entry points; choose one with --entry NAME", filename, entries.size());
    entry = entries[0];
  } else {
    for (Decl* d : entries)
      if (d->name == opt.entry) entry = d;
    if (!entry) {
      std::string names;
      for (Decl* d : entries) names += (names.empty() ? "" : ", ") + d->name;
      fail("{}: no compute entry point named '{}' (entry points: {})", filename, opt.entry, names.empty() ? "none" : names);
    }
  }
  EmitResult r = emit_glsl(*m, entry, *diags);
  diags->throw_if_errors();
  CompiledShader out;
  out.entry = entry->name;
  out.glsl = std::move(r.glsl);
  out.bindings = std::move(r.bindings);
  out.workgroup_size = r.workgroup_size;
  out.features = r.features;
  out.push_constant_bytes = r.push_constant_bytes;
  if (!opt.spirv) return out;

  shaderc::Compiler compiler;
  shaderc::CompileOptions co;
  co.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  co.SetTargetSpirv(shaderc_spirv_version_1_5);
  co.SetOptimizationLevel(opt.optimize ? shaderc_optimization_level_performance : shaderc_optimization_level_zero);
  std::string name = std::string(filename) + ".glsl";
  auto res = compiler.CompileGlslToSpv(out.glsl, shaderc_compute_shader, name.c_str(), "main", co);
  if (res.GetCompilationStatus() != shaderc_compilation_status_success) {
    throw bs::Error(fmt::format("{}: the generated GLSL did not compile (a blueshift bug):\n{}\n--- generated GLSL ---\n{}",
                                filename, res.GetErrorMessage(), out.glsl),
                    bs::ErrorKind::internal);
  }
  out.spirv.assign(res.cbegin(), res.cend());
  return out;
}

}  // namespace bs::wgsl
