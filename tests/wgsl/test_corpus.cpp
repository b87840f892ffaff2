// Every corpus kernel compiles for every entry point and passes spirv-val (Vulkan 1.2 rules), and
// reports the bindings and workgroup size the runtime builds its layouts from.
#include <cstdlib>

#include "tests/wgsl/wgsl_test.h"

namespace bs::testing {
namespace {

void spirv_val(const wgsl::CompiledShader& s, const std::string& what) {
  TempDir dir;
  auto path = dir / "shader.spv";
  {
    std::ofstream o(path, std::ios::binary);
    o.write(reinterpret_cast<const char*>(s.spirv.data()), std::streamsize(s.spirv.size() * 4));
  }
  std::string flags = s.features.uniform_standard_layout ? " --uniform-buffer-standard-layout --scalar-block-layout" : "";
  std::string cmd = std::string(BS_SPIRV_VAL) + " --target-env vulkan1.2" + flags + " " + path.string() + " > " +
                    (dir / "out.txt").string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << what << ": spirv-val failed:\n" << read_text(dir / "out.txt") << "\n" << s.glsl;
}

TEST(WgslCorpus, EveryKernelCompilesAndValidates) {
  int files = 0, entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(corpus_dir())) {
    if (e.path().extension() != ".wgsl") continue;
    ++files;
    std::string src = read_text(e.path());
    wgsl::WgslModule m;
    try {
      m = wgsl::parse_and_resolve(src, e.path().filename().string());
    } catch (const bs::Error& err) {
      ADD_FAILURE() << err.what();
      continue;
    }
    for (const auto& ep : m.entry_points) {
      ++entries;
      wgsl::CompileOptions opt;
      opt.entry = ep.name;
      try {
        auto s = wgsl::compile_wgsl(m, opt);
        ASSERT_FALSE(s.spirv.empty());
        EXPECT_EQ(s.spirv[0], 0x07230203u);
        spirv_val(s, e.path().filename().string() + ":" + ep.name);
      } catch (const bs::Error& err) {
        ADD_FAILURE() << e.path().filename() << ":" << ep.name << ": " << err.what();
      }
    }
  }
  EXPECT_GE(files, 10);
  EXPECT_GE(entries, 14);
}

TEST(WgslCorpus, ReflectionOfRmsNorm) {
  auto s = wgsl::compile_wgsl(corpus("rms_norm.wgsl"), "rms_norm.wgsl", {});
  EXPECT_EQ(s.workgroup_size, (std::array<uint32_t, 3>{128, 1, 1}));
  ASSERT_EQ(s.bindings.size(), 4u);
  EXPECT_EQ(s.bindings[0].name, "x");
  EXPECT_EQ(s.bindings[0].kind, wgsl::BindingKind::read_only_storage_buffer);
  EXPECT_EQ(s.bindings[0].runtime_stride, 4u);
  EXPECT_EQ(s.bindings[2].kind, wgsl::BindingKind::storage_buffer);
  EXPECT_EQ(s.bindings[3].kind, wgsl::BindingKind::uniform_buffer);
  EXPECT_EQ(s.bindings[3].min_size, 16u);
  // Overrides are pipeline constants: by name or by @id.
  wgsl::CompileOptions opt;
  opt.overrides = {{"WG", 64}};
  EXPECT_EQ(wgsl::compile_wgsl(corpus("rms_norm.wgsl"), "rms_norm.wgsl", opt).workgroup_size[0], 64u);
  opt.overrides = {{"0", 32}};
  EXPECT_EQ(wgsl::compile_wgsl(corpus("rms_norm.wgsl"), "rms_norm.wgsl", opt).workgroup_size[0], 32u);
  opt.overrides = {{"NOPE", 1}};
  EXPECT_THROW(wgsl::compile_wgsl(corpus("rms_norm.wgsl"), "rms_norm.wgsl", opt), bs::Error);
}

TEST(WgslCorpus, ReflectionOfLayoutKernel) {
  auto s = wgsl::compile_wgsl(corpus("layout.wgsl"), "layout.wgsl", {});
  ASSERT_EQ(s.bindings.size(), 5u);
  EXPECT_EQ(s.bindings[0].runtime_stride, 144u);  // array<Tricky>: WGSL size 144
  EXPECT_EQ(s.bindings[0].min_size, 144u);
  EXPECT_EQ(s.bindings[3].min_size, 64u);         // UniformTricky
  EXPECT_TRUE(s.features.f16);
  EXPECT_FALSE(s.features.uniform_standard_layout);  // std140 with scalar pads reproduces WGSL here
}

TEST(WgslCorpus, EntryPointSelection) {
  std::string src = corpus("semantics.wgsl");
  EXPECT_THROW(wgsl::compile_wgsl(src, "semantics.wgsl", {}), bs::Error);  // three entry points, none chosen
  wgsl::CompileOptions opt;
  opt.entry = "shifts";
  opt.spirv = false;
  auto s = wgsl::compile_wgsl(src, "semantics.wgsl", opt);
  EXPECT_EQ(s.entry, "shifts");
  EXPECT_EQ(s.bindings.size(), 3u);  // only what `shifts` uses: a, b and out, not f
  opt.entry = "nope";
  EXPECT_THROW(wgsl::compile_wgsl(src, "semantics.wgsl", opt), bs::Error);
}

}  // namespace
}  // namespace bs::testing
