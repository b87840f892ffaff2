// `blueshift wgsl`: writes GLSL/SPIR-V, checks, applies --define, exits 3 with diagnostics.
#include <cstdlib>

#include "tests/wgsl/wgsl_test.h"

namespace bs::testing {
namespace {

TEST(WgslCli, EmitsCheckAndFails) {
#ifdef BS_WGSL_BINARY
  setenv("BS_BINARY", BS_WGSL_BINARY, 0);  // keep one given by the environment
#endif
  std::string file = (corpus_dir() / "rms_norm.wgsl").string();
  auto r = run_blueshift({"wgsl", file, "--emit", "check"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ok:"), std::string::npos);

  TempDir dir;
  r = run_blueshift({"wgsl", file, "--emit", "glsl", "--define", "WG=64", "-o", (dir / "x.glsl").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_text(dir / "x.glsl").find("local_size_x = 64"), std::string::npos);

  r = run_blueshift({"wgsl", file, "-o", (dir / "x.spv").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string spv = read_text(dir / "x.spv");
  ASSERT_GE(spv.size(), 20u);
  EXPECT_EQ(uint8_t(spv[0]), 0x03);
  EXPECT_EQ(uint8_t(spv[3]), 0x07);

  r = run_blueshift({"wgsl", file, "--emit", "check", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"workgroup_size\""), std::string::npos) << r.out;

  std::ofstream(dir / "bad.wgsl") << "fn f() {\n  let x: u32 = -1;\n}\n";
  r = run_blueshift({"wgsl", (dir / "bad.wgsl").string(), "--emit", "check"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("bad.wgsl:2:16: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;

  r = run_blueshift({"wgsl", file, "--define", "WG"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_blueshift({"wgsl", (dir / "missing.wgsl").string()});
  EXPECT_EQ(r.exit_code, 3);
}

}  // namespace
}  // namespace bs::testing
