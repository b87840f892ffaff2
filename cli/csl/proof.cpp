#include "cli/csl/proof.h"

#include <cmath>
#include <limits>

#include "cli/csl/emit.h"
#include "cli/csl/sha256.h"
#include "runtime/base/error.h"

namespace bs::csl {

using nlohmann::json;

namespace {

constexpr size_t kMaxText = size_t(64) << 20;   // a proof of a 64k-token prompt is well under this
constexpr size_t kMaxArray = size_t(1) << 20;
constexpr size_t kMaxString = size_t(1) << 20;
constexpr int kMaxDepth = 32;

json status_json(const DeviceStatus& s) {
  json j = {{"status", s.status}};
  if (s.status != "pending") {
    j["revision"] = s.revision;
    j["trace"] = s.trace;
    j["max_abs_error_vs_reference"] = s.max_abs_error_vs_reference;
    j["max_abs_error_vs_emulation"] = s.max_abs_error_vs_emulation;
  }
  return j;
}

json plan_json(const Plan& p) {
  const KernelInfo& k = kernel_info(p.kind);
  auto dims = p.fabric_dims();
  auto offs = p.fabric_offsets();
  return {
      {"sdk", "2.10"},
      {"arch", "wse3"},
      {"kernel", k.name},
      {"width", p.width},
      {"height", p.height},
      {"dim", p.dim},
      {"tile_width", p.tile_width},
      {"padded_dim", p.padded_dim()},
      {"tokens", p.tokens},
      {"rows_per_pe", p.rows_per_pe},
      {"operand_dtype", p.kind == KernelKind::lm_head ? "f16" : "f32"},
      {"accum_dtype", "f32"},
      {"norm_eps", double(p.norm_eps)},
      {"norm_offset", p.norm_offset},
      {"fabric_dims", {dims[0], dims[1]}},
      {"fabric_offsets", {offs[0], offs[1]}},
      {"compile_params", compile_params(p)},
      {"launch", kLaunchFunction},
      {"output_symbol", k.output_symbol},
      {"task_ids", {{"sumsq", p.tasks.sumsq}, {"share", p.tasks.share}, {"apply", p.tasks.apply}, {"done", p.tasks.done}}},
      {"pe_data_bytes", p.pe_data_bytes()},
      {"pe_data_budget", kPeMemoryBytes - kPeReservedBytes},
  };
}

// --- untrusted reading: every accessor names the field it failed on ---

const json& field(const json& obj, const char* key, const std::string& path) {
  if (!obj.is_object()) fail("proof.json: {} is not an object", path.empty() ? "the document" : path);
  auto it = obj.find(key);
  if (it == obj.end()) fail("proof.json: {}{} is missing", path.empty() ? "" : path + ".", key);
  return *it;
}

std::string name_of(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

int64_t get_int(const json& obj, const char* key, const std::string& path, int64_t lo, int64_t hi) {
  const json& v = field(obj, key, path);
  if (!v.is_number_integer()) fail("proof.json: {} must be an integer", name_of(path, key));
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi))
    fail("proof.json: {} = {} is outside {}..{}", name_of(path, key), v.get<uint64_t>(), lo, hi);
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) fail("proof.json: {} = {} is outside {}..{}", name_of(path, key), x, lo, hi);
  return x;
}

double get_number(const json& obj, const char* key, const std::string& path) {
  const json& v = field(obj, key, path);
  if (!v.is_number()) fail("proof.json: {} must be a number", name_of(path, key));
  double x = v.get<double>();
  if (!std::isfinite(x)) fail("proof.json: {} is not finite", name_of(path, key));
  return x;
}

float to_f32(double x, const std::string& what) {
  if (std::fabs(x) > double(std::numeric_limits<float>::max()) || double(float(x)) != x)
    fail("proof.json: {} = {} is not an f32 value as written by blueshift", what, x);
  return float(x);
}

bool get_bool(const json& obj, const char* key, const std::string& path) {
  const json& v = field(obj, key, path);
  if (!v.is_boolean()) fail("proof.json: {} must be true or false", name_of(path, key));
  return v.get<bool>();
}

std::string get_string(const json& obj, const char* key, const std::string& path, size_t max = kMaxString) {
  const json& v = field(obj, key, path);
  if (!v.is_string()) fail("proof.json: {} must be a string", name_of(path, key));
  if (v.get_ref<const std::string&>().size() > max) fail("proof.json: {} is longer than {} bytes", name_of(path, key), max);
  return v.get<std::string>();
}

std::string get_hex(const json& obj, const char* key, const std::string& path) {
  std::string s = get_string(obj, key, path, 64);
  if (s.size() != 64 || s.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail("proof.json: {} must be 64 lowercase hex digits", name_of(path, key));
  return s;
}

const json& get_array(const json& obj, const char* key, const std::string& path, size_t max = kMaxArray) {
  const json& v = field(obj, key, path);
  if (!v.is_array()) fail("proof.json: {} must be an array", name_of(path, key));
  if (v.size() > max) fail("proof.json: {} has {} entries, more than {}", name_of(path, key), v.size(), max);
  return v;
}

std::vector<float> get_floats(const json& obj, const char* key, const std::string& path) {
  const json& a = get_array(obj, key, path);
  std::vector<float> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::string what = fmt::format("{}[{}]", name_of(path, key), i);
    if (!a[i].is_number()) fail("proof.json: {} must be a number", what);
    out.push_back(to_f32(a[i].get<double>(), what));
  }
  return out;
}

std::vector<int32_t> get_ids(const json& obj, const char* key, const std::string& path) {
  const json& a = get_array(obj, key, path);
  std::vector<int32_t> out;
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number_integer() || a[i].get<int64_t>() < 0 || a[i].get<int64_t>() > std::numeric_limits<int32_t>::max())
      fail("proof.json: {}[{}] must be a token id (0..2^31-1)", name_of(path, key), i);
    out.push_back(int32_t(a[i].get<int64_t>()));
  }
  return out;
}

DeviceStatus get_status(const json& obj, const char* key) {
  const json& s = field(obj, key, "");
  DeviceStatus st;
  st.status = get_string(s, "status", key, 16);
  if (st.status == "pending") return st;
  if (st.status != "match" && st.status != "no_match")
    fail("proof.json: {}.status '{}' is not one of pending, match, no_match", key, st.status);
  st.revision = int(get_int(s, "revision", key, 2, 1 << 20));
  st.trace = get_string(s, "trace", key, 255);
  st.max_abs_error_vs_reference = get_number(s, "max_abs_error_vs_reference", key);
  st.max_abs_error_vs_emulation = get_number(s, "max_abs_error_vs_emulation", key);
  return st;
}

Plan get_plan(const json& doc) {
  const json& c = field(doc, "csl", "");
  Plan p;
  std::string kernel = get_string(c, "kernel", "csl", 32);
  bool known = false;
  for (const auto& k : kernel_table())
    if (k.name == kernel) p.kind = k.kind, known = true;
  if (!known) fail("proof.json: csl.kernel '{}' is not a known kernel", kernel);
  p.width = int(get_int(c, "width", "csl", 1, kMaxGridSide));
  p.height = int(get_int(c, "height", "csl", 1, kMaxGridSide));
  p.dim = int(get_int(c, "dim", "csl", 2, 65535));
  p.tile_width = int(get_int(c, "tile_width", "csl", 2, 65535));
  p.tokens = int(get_int(c, "tokens", "csl", 0, 65535));
  p.rows_per_pe = int(get_int(c, "rows_per_pe", "csl", 0, 65535));
  p.norm_eps = to_f32(get_number(c, "norm_eps", "csl"), "csl.norm_eps");
  p.norm_offset = get_bool(c, "norm_offset", "csl");
  const json& t = field(c, "task_ids", "csl");
  p.tasks.sumsq = int(get_int(t, "sumsq", "csl.task_ids", 0, 63));
  p.tasks.share = int(get_int(t, "share", "csl.task_ids", 0, 63));
  p.tasks.apply = int(get_int(t, "apply", "csl.task_ids", 0, 63));
  p.tasks.done = int(get_int(t, "done", "csl.task_ids", 0, 63));
  validate_plan(p);
  // Derived numbers must be what the plan derives: an edit to one of them is an edit to the proof.
  json expect = plan_json(p);
  for (auto it = expect.begin(); it != expect.end(); ++it) {
    const json& got = field(c, it.key().c_str(), "csl");
    if (got != it.value())
      fail("proof.json: csl.{} is {}, but the plan gives {}", it.key(), got.dump(), it.value().dump());
  }
  return p;
}

}  // namespace

std::string proof_seal(json doc) {
  if (doc.is_object()) doc.erase("proof_sha256");
  return sha256_hex(doc.dump());
}

std::string write_proof(Proof& pr) {
  json shards = json::array();
  for (const auto& s : pr.shards) shards.push_back({{"file", s.file}, {"sha256", s.sha256}});
  json files = json::array();
  for (const auto& f : pr.files)
    files.push_back({{"name", f.name}, {"role", f.role}, {"bytes", f.bytes}, {"sha256", f.sha256}});
  json doc = {
      {"schema", kProofSchema},
      {"schema_version", pr.schema_version},
      {"revision", pr.revision},
      {"kernel", kernel_info(pr.plan.kind).name},
      {"model", {{"manifest_sha256", pr.manifest_sha256}, {"shards", shards}, {"arch", pr.arch}, {"vocab", pr.vocab}}},
      {"prompt", {{"text", pr.prompt}, {"token_ids", pr.prompt_ids}}},
      {"selected_tokens", pr.tokens},
      {"producer", {{"blueshift_version", pr.blueshift_version}, {"vulkan_device", pr.vulkan_device}}},
      {"reference",
       {{"hidden_state",
         {{"dtype", pr.hidden.dtype}, {"shape", pr.hidden.shape}, {"sha256", pr.hidden.sha256}, {"preview", pr.hidden.preview}}},
        {"kind", kernel_info(pr.plan.kind).output_symbol},
        {"values", pr.reference}}},
      {"csl", plan_json(pr.plan)},
      {"files", files},
      {"emulation",
       {{"values", pr.emulated},
        {"max_abs_error", pr.max_abs_error},
        {"tolerance", pr.tolerance},
        {"passed", pr.passed},
        {"assumptions",
         {"same partition across PEs as pe_program.csl; per-PE f32 sums in index order",
          "reduce_fadds modelled as a sum over columns in ascending order (the library's order may differ by a few ulps)",
          "f16 conversion rounds to nearest even; f32 sqrt correctly rounded"}}}},
      {"simulator", status_json(pr.simulator)},
      {"hardware", status_json(pr.hardware)},
      {"history", pr.history},
      {"note", "No Cerebras compiler, simulator or hardware ran to produce this bundle; the CSL is checked "
               "statically and the plan is emulated on the host. Device status stays pending until a trace "
               "from run.py is recorded with `blueshift verify-proof --trace`."},
  };
  pr.proof_sha256 = proof_seal(doc);
  doc["proof_sha256"] = pr.proof_sha256;
  return doc.dump(2) + "\n";
}

Proof parse_proof(std::string_view text) {
  if (text.size() > kMaxText) fail("proof.json: {} bytes, more than the {}-byte limit", text.size(), kMaxText);
  // Nesting is bounded before anything recurses over the tree (dump() for the seal does).
  bool too_deep = false;
  json::parser_callback_t limit_depth = [&too_deep](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  json doc = json::parse(text.begin(), text.end(), limit_depth, /*allow_exceptions=*/false);
  if (too_deep) fail("proof.json: nested deeper than {} levels", kMaxDepth);
  if (doc.is_discarded()) fail("proof.json: not valid JSON");
  if (!doc.is_object()) fail("proof.json: the document is not a JSON object");
  Proof pr;
  if (get_string(doc, "schema", "", 64) != kProofSchema) fail("proof.json: schema is not '{}'", kProofSchema);
  pr.schema_version = int(get_int(doc, "schema_version", "", 0, 1 << 20));
  if (pr.schema_version != kProofSchemaVersion)
    fail("proof.json: schema_version {} is not supported (this blueshift reads {})", pr.schema_version, kProofSchemaVersion);
  pr.revision = int(get_int(doc, "revision", "", 1, 1 << 20));
  pr.plan = get_plan(doc);
  if (get_string(doc, "kernel", "", 32) != kernel_info(pr.plan.kind).name) fail("proof.json: kernel differs from csl.kernel");

  const json& m = field(doc, "model", "");
  pr.manifest_sha256 = get_hex(m, "manifest_sha256", "model");
  for (const json& s : get_array(m, "shards", "model", 1 << 16))
    pr.shards.push_back({get_string(s, "file", "model.shards[]", 4096), get_hex(s, "sha256", "model.shards[]")});
  pr.arch = get_string(m, "arch", "model", 256);
  pr.vocab = get_int(m, "vocab", "model", 0, std::numeric_limits<int32_t>::max());

  const json& pp = field(doc, "prompt", "");
  pr.prompt = get_string(pp, "text", "prompt");
  pr.prompt_ids = get_ids(pp, "token_ids", "prompt");
  pr.tokens = get_ids(doc, "selected_tokens", "");
  if (pr.tokens.size() != size_t(pr.plan.tokens))
    fail("proof.json: selected_tokens has {} ids, csl.tokens says {}", pr.tokens.size(), pr.plan.tokens);
  for (int32_t t : pr.tokens)
    if (pr.vocab > 0 && t >= pr.vocab) fail("proof.json: selected token {} is outside the vocabulary ({})", t, pr.vocab);

  const json& prod = field(doc, "producer", "");
  pr.blueshift_version = get_string(prod, "blueshift_version", "producer", 64);
  pr.vulkan_device = get_string(prod, "vulkan_device", "producer", 256);

  const json& ref = field(doc, "reference", "");
  const json& hs = field(ref, "hidden_state", "reference");
  pr.hidden.dtype = get_string(hs, "dtype", "reference.hidden_state", 8);
  for (const json& d : get_array(hs, "shape", "reference.hidden_state", 4)) {
    if (!d.is_number_integer()) fail("proof.json: reference.hidden_state.shape must hold integers");
    pr.hidden.shape.push_back(d.get<int64_t>());
  }
  pr.hidden.sha256 = get_hex(hs, "sha256", "reference.hidden_state");
  pr.hidden.preview = get_floats(hs, "preview", "reference.hidden_state");
  if (get_string(ref, "kind", "reference", 32) != kernel_info(pr.plan.kind).output_symbol)
    fail("proof.json: reference.kind does not match the kernel");
  pr.reference = get_floats(ref, "values", "reference");

  for (const json& f : get_array(doc, "files", "", 4096)) {
    FileRecord r;
    r.name = get_string(f, "name", "files[]", 255);
    if (r.name.empty() || r.name.find('/') != std::string::npos || r.name.find('\\') != std::string::npos ||
        r.name == "." || r.name == ".." || r.name.find('\0') != std::string::npos)
      fail("proof.json: files[] name '{}' is not a plain file name", r.name);
    r.role = get_string(f, "role", "files[]", 16);
    r.bytes = uint64_t(get_int(f, "bytes", "files[]", 0, int64_t(1) << 40));
    r.sha256 = get_hex(f, "sha256", "files[]");
    pr.files.push_back(std::move(r));
  }

  const json& e = field(doc, "emulation", "");
  pr.emulated = get_floats(e, "values", "emulation");
  pr.max_abs_error = get_number(e, "max_abs_error", "emulation");
  pr.tolerance = get_number(e, "tolerance", "emulation");
  pr.passed = get_bool(e, "passed", "emulation");
  pr.simulator = get_status(doc, "simulator");
  pr.hardware = get_status(doc, "hardware");
  pr.history = get_array(doc, "history", "", 4096);
  for (const json& h : pr.history) {
    get_int(h, "revision", "history[]", 1, 1 << 20);
    get_hex(h, "proof_sha256", "history[]");
  }
  pr.proof_sha256 = get_hex(doc, "proof_sha256", "");
  pr.seal_ok = proof_seal(doc) == pr.proof_sha256;
  return pr;
}

}  // namespace bs::csl
