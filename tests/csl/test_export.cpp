// export_bundle -> verify-proof, end to end on synthetic model state (vocab >= 32k), including
// tampering with every file, editing proof.json, dropping an unblock, and recording device traces.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/csl/exporter.h"
#include "cli/csl/verify.h"
#include "runtime/base/error.h"
#include "tests/common/testing.h"
#include "tests/csl/synth_input.h"

namespace bs::csl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using bs::testing::run_blueshift;
using bs::testing::TempDir;

ExportResult export_to(const fs::path& dir, const HeadExportInput& in, std::string kernel = "lm_head", int w = 3, int h = 2) {
  ExportOptions opt;
  opt.kernel = std::move(kernel);
  opt.grid_width = w;
  opt.grid_height = h;
  opt.out_dir = dir;
  return export_bundle(in, opt);
}

fs::path copy_bundle(const fs::path& from, const fs::path& to) {
  fs::copy(from, to, fs::copy_options::recursive);
  return to;
}

std::string failure_of(const VerifyReport& r) {
  const VerifyCheck* bad = r.first_failure();
  return bad ? bad->name + ": " + bad->detail : "(none)";
}

json read_json(const fs::path& p) { return json::parse(read_file_bytes(p)); }

void write_json_sealed(const fs::path& p, json doc) {
  doc["proof_sha256"] = proof_seal(doc);
  write_file_bytes(p, doc.dump(2));
}

class CslBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    synth_ = testing::make_synth({.dim = 320, .vocab = 32768, .n_tokens = 5});
    bundle_ = tmp_ / "bundle";
    result_ = export_to(bundle_, synth_.input);
  }
  TempDir tmp_;
  testing::Synth synth_;
  fs::path bundle_;
  ExportResult result_;
};

TEST_F(CslBundle, ExportThenVerifyProofPasses) {
  EXPECT_TRUE(result_.proof.passed) << "max abs error " << result_.proof.max_abs_error;
  EXPECT_LT(result_.proof.max_abs_error, 1e-2);
  EXPECT_EQ(result_.proof.hardware.status, "pending");
  VerifyReport r = verify_bundle(bundle_);
  EXPECT_TRUE(r.ok()) << failure_of(r);

  auto run = run_blueshift({"verify-proof", bundle_.string(), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  json j = json::parse(run.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_EQ(j["hardware"], "pending");
  EXPECT_EQ(j["kernel"], "lm_head");
}

TEST_F(CslBundle, ProofRecordsTheRunAndEveryFile) {
  json p = read_json(bundle_ / "proof.json");
  EXPECT_EQ(p["schema_version"], 1);
  EXPECT_EQ(p["model"]["manifest_sha256"], synth_.input.manifest_sha256);
  EXPECT_EQ(p["model"]["shards"].size(), 2u);
  EXPECT_EQ(p["prompt"]["text"], synth_.input.prompt);
  EXPECT_EQ(p["prompt"]["token_ids"].get<std::vector<int32_t>>(), synth_.input.prompt_ids);
  std::vector<int32_t> tokens = p["selected_tokens"];
  EXPECT_EQ(tokens, synth_.input.tokens);
  EXPECT_EQ(tokens.front(), 0);
  EXPECT_EQ(tokens.back(), 32767);
  EXPECT_EQ(p["producer"]["vulkan_device"], synth_.input.device_name);
  EXPECT_EQ(p["reference"]["hidden_state"]["shape"], json::array({320}));
  EXPECT_EQ(p["reference"]["hidden_state"]["preview"].size(), 8u);
  EXPECT_EQ(p["csl"]["tile_width"], 108);  // 320 over 3 columns, rounded up to even
  EXPECT_EQ(p["csl"]["padded_dim"], 324);
  EXPECT_EQ(p["hardware"]["status"], "pending");
  std::set<std::string> names;
  for (const auto& f : p["files"]) names.insert(f["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"layout.csl", "pe_program.csl", "run.py", "compile.sh", "hidden_f32.bin",
                                          "norm_weight_f32.bin", "head_tiles_f16x2.bin"}));
  // The emulated logits agree with the float64 reference of the untiled head.
  std::vector<double> ref = testing::reference_logits_f64(synth_.input);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(p["emulation"]["values"][i].get<double>(), ref[i], 1e-2);
}

TEST_F(CslBundle, TamperingWithAnyFileFailsNamingIt) {
  for (const FileRecord& f : result_.proof.files) {
    TempDir t;
    fs::path dir = copy_bundle(bundle_, t / "b");
    std::string bytes = read_file_bytes(dir / f.name);
    bytes[bytes.size() / 2] ^= 0x01;
    write_file_bytes(dir / f.name, bytes);
    VerifyReport r = verify_bundle(dir);
    ASSERT_FALSE(r.ok()) << f.name;
    EXPECT_EQ(r.first_failure()->name, f.name) << failure_of(r);
    EXPECT_EQ(r.first_failure()->exit_code, 4);
    auto run = run_blueshift({"verify-proof", dir.string()});
    EXPECT_EQ(run.exit_code, 4) << f.name << ": " << run.err;
    EXPECT_NE(run.err.find(f.name), std::string::npos) << run.err;
  }
  // A missing file is named too.
  fs::path dir = copy_bundle(bundle_, tmp_ / "missing");
  fs::remove(dir / "norm_weight_f32.bin");
  VerifyReport r = verify_bundle(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_failure()->name, "norm_weight_f32.bin");
}

TEST_F(CslBundle, ChangingANumberInProofJsonFails) {
  const std::vector<json::json_pointer> numbers = {
      json::json_pointer("/reference/values/2"),    json::json_pointer("/emulation/values/0"),
      json::json_pointer("/emulation/max_abs_error"), json::json_pointer("/emulation/tolerance"),
      json::json_pointer("/csl/width"),             json::json_pointer("/model/vocab"),
      json::json_pointer("/selected_tokens/1"),     json::json_pointer("/prompt/token_ids/0"),
      json::json_pointer("/reference/hidden_state/preview/3"), json::json_pointer("/revision")};
  const json original = read_json(bundle_ / "proof.json");
  for (const auto& ptr : numbers) {
    json doc = original;
    doc[ptr] = doc[ptr].is_number_integer() ? json(doc[ptr].get<int64_t>() + 1) : json(doc[ptr].get<double>() + 0.5);
    write_file_bytes(bundle_ / "proof.json", doc.dump(2));
    VerifyReport r = verify_bundle(bundle_);
    ASSERT_FALSE(r.ok()) << ptr.to_string();
    EXPECT_EQ(r.first_failure()->name, "proof.json") << ptr.to_string() << ": " << failure_of(r);
    auto run = run_blueshift({"verify-proof", bundle_.string()});
    EXPECT_NE(run.exit_code, 0) << ptr.to_string();
    EXPECT_NE(run.err.find("proof.json"), std::string::npos) << run.err;
  }
  // Re-sealed after the edit (as a forger would), the numbers still have to agree with the bundle.
  struct Sealed { const char* ptr; const char* expect; };
  for (Sealed s : {Sealed{"/emulation/values/0", "emulation.values"}, Sealed{"/emulation/max_abs_error", "emulation.max_abs_error"},
                   Sealed{"/reference/values/2", "emulation.max_abs_error"}, Sealed{"/reference/hidden_state/preview/3", "reference.hidden_state"}}) {
    json doc = original;
    json::json_pointer ptr(s.ptr);
    doc[ptr] = double(float(doc[ptr].get<double>() + 0.5));  // still an f32 value, so it parses
    write_json_sealed(bundle_ / "proof.json", doc);
    VerifyReport r = verify_bundle(bundle_);
    ASSERT_FALSE(r.ok()) << s.ptr;
    EXPECT_EQ(r.first_failure()->name, s.expect) << s.ptr << ": " << failure_of(r);
  }
  write_file_bytes(bundle_ / "proof.json", original.dump(2));
  EXPECT_TRUE(verify_bundle(bundle_).ok());
}

TEST_F(CslBundle, RemovingAnUnblockFails) {
  std::string pe = read_file_bytes(bundle_ / "pe_program.csl");
  size_t at = pe.find("sys_mod.unblock_cmd_stream();");
  ASSERT_NE(at, std::string::npos);
  pe.erase(at, std::string("sys_mod.unblock_cmd_stream();").size());
  write_file_bytes(bundle_ / "pe_program.csl", pe);
  VerifyReport r = verify_bundle(bundle_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_failure()->name, "pe_program.csl");  // the hash sees it first
  reseal_bundle(bundle_);                                  // then the static check on its own
  r = verify_bundle(bundle_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_failure()->name, "csl") << failure_of(r);
  EXPECT_NE(r.first_failure()->detail.find("[unblock]"), std::string::npos) << failure_of(r);
  auto run = run_blueshift({"verify-proof", bundle_.string()});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("unblock_cmd_stream"), std::string::npos) << run.err;
}

TEST_F(CslBundle, TracesAreRecordedInNewRevisions) {
  // A result file in run.py's format. These values are the host emulation, not a device run: the
  // test checks the bookkeeping, and says so in the file.
  auto result = [&](const std::string& mode, float shift) {
    json j = {{"schema", "blueshift.csl-result"}, {"schema_version", 1}, {"mode", mode},
              {"proof_sha256", result_.proof.proof_sha256}, {"note", "test data derived from the host emulation"}};
    std::vector<float> v = result_.proof.emulated;
    for (float& x : v) x += shift;
    j["values"] = v;
    fs::path p = tmp_ / (mode + ".json");
    write_file_bytes(p, j.dump());
    return p;
  };
  TraceOutcome sim = record_trace(bundle_, result("simulator", 0.0f));
  EXPECT_EQ(sim.revision, 2);
  EXPECT_EQ(sim.status, "match");
  VerifyReport r = verify_bundle(bundle_);
  ASSERT_TRUE(r.ok()) << failure_of(r);
  EXPECT_EQ(r.proof->simulator.status, "match");
  EXPECT_EQ(r.proof->hardware.status, "pending");
  EXPECT_EQ(r.proof->history.size(), 1u);

  auto run = run_blueshift({"verify-proof", bundle_.string(), "--trace", result("hardware", 1.0f).string(), "--json"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  json j = json::parse(run.out);
  EXPECT_EQ(j["status"], "no_match");
  EXPECT_EQ(j["revision"], 3);
  r = verify_bundle(bundle_);
  ASSERT_TRUE(r.ok()) << failure_of(r);
  EXPECT_EQ(r.proof->hardware.status, "no_match");

  // The recorded trace is bound like every other file.
  std::string name = r.proof->hardware.trace;
  std::string bytes = read_file_bytes(bundle_ / name);
  bytes[bytes.size() / 2] ^= 1;
  write_file_bytes(bundle_ / name, bytes);
  r = verify_bundle(bundle_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.first_failure()->name, name);
}

TEST_F(CslBundle, RawTraceNeedsAMode) {
  fs::path raw = tmp_ / "logits.f32";
  write_file_bytes(raw, std::string(reinterpret_cast<const char*>(result_.proof.emulated.data()), result_.proof.emulated.size() * 4));
  EXPECT_THROW(record_trace(bundle_, raw), Error);
  TraceOutcome t = record_trace(bundle_, raw, "hardware");
  EXPECT_EQ(t.status, "match");
  EXPECT_TRUE(verify_bundle(bundle_).ok());
}

TEST(CslBundleRmsNorm, ExportThenVerifyProofPasses) {
  TempDir tmp;
  auto s = testing::make_synth({.dim = 1152, .vocab = 32768, .n_tokens = 1, .norm_offset = true});
  ExportResult r = export_to(tmp / "b", s.input, "rmsnorm", 6, 1);
  EXPECT_TRUE(r.proof.passed) << r.proof.max_abs_error;
  VerifyReport v = verify_bundle(tmp / "b");
  EXPECT_TRUE(v.ok()) << failure_of(v);
  EXPECT_FALSE(fs::exists(tmp / "b" / "head_tiles_f16x2.bin"));
}

TEST(CslBundleInput, BadInputIsRejectedWithItsName) {
  TempDir tmp;
  auto s = testing::make_synth({.dim = 128, .vocab = 32768, .n_tokens = 3});
  auto expect_error = [&](HeadExportInput in, const char* needle) {
    try {
      export_to(tmp / "b", in, "lm_head", 2, 1);
      ADD_FAILURE() << "expected an error mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  HeadExportInput in = s.input;
  in.hidden.pop_back();
  expect_error(in, "hidden state");
  in = s.input;
  in.tokens[1] = 32768;
  expect_error(in, "--tokens");
  in = s.input;
  in.hidden[5] = std::nanf("");
  expect_error(in, "hidden[5]");
  in = s.input;
  in.reference_logits.pop_back();
  expect_error(in, "reference logits");
  in = s.input;
  in.manifest_sha256 = "xyz";
  expect_error(in, "manifest");
  // An existing bundle is not overwritten without --force.
  export_to(tmp / "b", s.input, "lm_head", 2, 1);
  expect_error(s.input, "--force");
}

TEST(CslCli, ExportCslRejectsBadInput) {
  TempDir tmp;
  auto run = run_blueshift({"export-csl", "--model", (tmp / "m").string(), "--prompt", "hi", "--tokens", "1,2",
                            "--grid", "4x2", "--out", (tmp / "b").string()});
  EXPECT_EQ(run.exit_code, 3) << run.err;  // no RDRR model there: the proof needs its manifest
  EXPECT_NE(run.err.find("manifest.json"), std::string::npos) << run.err;
  run = run_blueshift({"export-csl", "--model", "m", "--prompt", "hi", "--tokens", "1", "--grid", "4by2", "--out", "b"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  run = run_blueshift({"export-csl", "--model", "m", "--prompt", "hi", "--tokens", "1,x", "--grid", "4x2", "--out", "b"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  run = run_blueshift({"verify-proof", (tmp / "nothing").string()});
  EXPECT_EQ(run.exit_code, 3) << run.err;
}

}  // namespace
}  // namespace bs::csl
