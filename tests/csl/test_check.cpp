// The emitted CSL against the SDK 2.10 rules, and the static checker against broken variants.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/csl/csl_check.h"
#include "cli/csl/emit.h"

namespace bs::csl {
namespace {

Plan plan_of(std::string_view kernel, int dim, int w, int h, int tokens, bool offset = false) {
  ModelConfig cfg;
  cfg.arch = "llama";
  cfg.dim = dim;
  cfg.vocab = 32000;
  cfg.norm_offset = offset;
  return make_plan(kernel, cfg, w, h, 0, tokens);
}

BundleSources sources(const Plan& p) {
  EmitNotes notes{"llama (test)", "test device"};
  return {emit_layout(p, notes), emit_pe_program(p), emit_run_py(p, notes), emit_compile_sh(p)};
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test setup: '" << from << "' not in the emitted text";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

bool has_rule(const std::vector<CslFinding>& f, std::string_view rule) {
  return std::any_of(f.begin(), f.end(), [&](const CslFinding& x) { return x.rule == rule; });
}

std::string dump(const std::vector<CslFinding>& f) {
  std::string s;
  for (const auto& x : f) s += to_string(x) + "\n";
  return s;
}

TEST(CslCheck, EmittedBundlesPassEveryRule) {
  for (const Plan& p : {plan_of("lm_head", 2048, 8, 4, 16), plan_of("lm_head", 1152, 5, 3, 7, true),
                        plan_of("lm_head", 64, 1, 1, 1), plan_of("rmsnorm", 1152, 6, 1, 0)}) {
    auto findings = check_csl(sources(p));
    EXPECT_TRUE(findings.empty()) << p.kernel() << " " << p.width << "x" << p.height << ":\n" << dump(findings);
  }
}

TEST(CslCheck, EmittedCslFollowsSdk210Conventions) {
  BundleSources s = sources(plan_of("lm_head", 2048, 8, 4, 16));
  EXPECT_NE(s.pe.find("param memcpy_params;\n"), std::string::npos);
  EXPECT_NE(s.pe.find("param c2d_params;\n"), std::string::npos);
  EXPECT_EQ(s.pe.find("comptime_struct"), std::string::npos);
  EXPECT_EQ(s.layout.find("comptime_struct"), std::string::npos);
  EXPECT_NE(s.pe.find("@import_module(\"<memcpy/memcpy>\", memcpy_params)"), std::string::npos);
  EXPECT_NE(s.layout.find("@import_module(\"<memcpy/get_params>\""), std::string::npos);
  EXPECT_NE(s.pe.find("reduce_fadds("), std::string::npos);
  EXPECT_NE(s.pe.find(".broadcast("), std::string::npos);
  EXPECT_EQ(s.pe.find("@bind_data_task"), std::string::npos);
  EXPECT_EQ(s.pe.find("@rpc"), std::string::npos);
  // Reads like hand-written CSL: named, commented parameters and the plan spelled out.
  EXPECT_NE(s.layout.find("param tile_width: u16;   // hidden values per PE"), std::string::npos);
  EXPECT_NE(s.layout.find("// ID map"), std::string::npos);
  EXPECT_NE(s.layout.find("the hidden state (dim 2048) is split into `width` = 8 column tiles"), std::string::npos);
  EXPECT_NE(s.compile_sh.find("--fabric-dims=15,6 --fabric-offsets=4,1"), std::string::npos);
  EXPECT_NE(s.compile_sh.find("--params=width:8,height:4,tile_width:256,dim:2048,rows_per_pe:4 "), std::string::npos);
}

struct Mutation {
  const char* what;
  std::string BundleSources::*file;
  const char* from;
  const char* to;
  const char* rule;
};

TEST(CslCheck, BrokenVariantsAreCaughtByTheRightRule) {
  const Mutation cases[] = {
      {"typed memcpy param", &BundleSources::pe, "param memcpy_params;", "param memcpy_params: comptime_struct;", "memcpy"},
      {"comptime_struct", &BundleSources::pe, "param c2d_params;", "param c2d_params: comptime_struct;", "removed-syntax"},
      {"@rpc", &BundleSources::pe, "  @export_symbol(compute);", "  @export_symbol(compute);\n  @rpc(@get_color(12));", "removed-syntax"},
      {"memcpy_multi", &BundleSources::pe, "\"<memcpy/memcpy>\"", "\"<memcpy_multi/memcpy>\"", "removed-syntax"},
      {"data task", &BundleSources::pe, "@bind_local_task(done, done_task_id);", "@bind_data_task(done, done_task_id);", "tasks"},
      {"unbound task", &BundleSources::pe, "  @bind_local_task(share, share_task_id);\n", "", "tasks"},
      {"unblock removed", &BundleSources::pe, "  sys_mod.unblock_cmd_stream();\n", "", "unblock"},
      {"unblock on some PEs only", &BundleSources::pe, "  sys_mod.unblock_cmd_stream();",
       "  if (logits[0] > 0.0) {\n    sys_mod.unblock_cmd_stream();\n  }", "unblock"},
      {"early return", &BundleSources::pe, "  const scale = inv_rms();", "  if (sumsq_total[0] == 0.0) {\n    return;\n  }\n  const scale = inv_rms();", "unblock"},
      {"callback lost", &BundleSources::pe, "rows_per_pe, done_task_id);", "rows_per_pe, share_task_id);", "unblock"},
      {"task id in collectives range", &BundleSources::pe, "@get_local_task_id(11)", "@get_local_task_id(5)", "ids"},
      {"task id shared", &BundleSources::pe, "@get_local_task_id(11)", "@get_local_task_id(10)", "ids"},
      {"memcpy color", &BundleSources::layout, "@get_color(1)", "@get_color(22)", "ids"},
      {"app color in c2d", &BundleSources::layout, "@get_local_task_id(5)", "@get_local_task_id(12)", "ids"},
      {"u8 export", &BundleSources::layout, "@export_name(\"head_tile\", [*]u32, true);", "@export_name(\"head_tile\", [*]u8, true);", "exports"},
      {"export missing in pe", &BundleSources::pe, "  @export_symbol(logits_ptr, \"logits\");\n", "", "exports"},
      {"run.py symbol", &BundleSources::run_py, "runner.get_id(\"logits\")", "runner.get_id(\"logit\")", "exports"},
      {"run.py launch", &BundleSources::run_py, "runner.launch(\"compute\"", "runner.launch(\"main\"", "exports"},
      {"cslc channels", &BundleSources::compile_sh, "--memcpy --channels=1", "--memcpy", "compile"},
      {"cslc arch", &BundleSources::compile_sh, "--arch=wse3", "--arch=wse2", "compile"},
      {"layout rectangle", &BundleSources::layout, "@set_rectangle(width, height);", "", "memcpy"},
  };
  const BundleSources good = sources(plan_of("lm_head", 1152, 5, 3, 7, true));
  for (const Mutation& m : cases) {
    BundleSources s = good;
    s.*m.file = replaced(s.*m.file, m.from, m.to);
    auto findings = check_csl(s);
    EXPECT_TRUE(has_rule(findings, m.rule)) << m.what << ": expected a [" << m.rule << "] finding, got:\n" << dump(findings);
  }
}

TEST(CslCheck, BothBranchesUnblockingIsFine) {
  BundleSources s = sources(plan_of("lm_head", 256, 2, 1, 2));
  s.pe = replaced(s.pe, "  sys_mod.unblock_cmd_stream();",
                  "  if (logits[0] > 0.0) {\n    sys_mod.unblock_cmd_stream();\n  } else {\n    @activate(apply_task_id);\n    "
                  "sys_mod.unblock_cmd_stream();\n  }");
  auto findings = check_csl(s);
  EXPECT_TRUE(findings.empty()) << dump(findings);
}

TEST(CslCheck, DirectTaskCallAndSelfActivationAreCaught) {
  BundleSources s = sources(plan_of("rmsnorm", 512, 4, 1, 0));
  BundleSources direct = s;
  direct.pe = replaced(direct.pe, "  @activate(sumsq_task_id);\n}", "  sumsq();\n}");
  EXPECT_TRUE(has_rule(check_csl(direct), "tasks")) << dump(check_csl(direct));
  // A task that only re-activates itself never unblocks; the checker must terminate and say so.
  BundleSources loop = s;
  loop.pe = replaced(loop.pe, "  sys_mod.unblock_cmd_stream();", "  @activate(done_task_id);");
  EXPECT_TRUE(has_rule(check_csl(loop), "unblock")) << dump(check_csl(loop));
}

TEST(CslCheck, MissingFilesAreNamed) {
  BundleSources s = sources(plan_of("lm_head", 256, 2, 1, 2));
  s.pe.clear();
  auto findings = check_csl(s);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].file, "pe_program.csl");
  EXPECT_EQ(findings[0].rule, "present");
}

}  // namespace
}  // namespace bs::csl
