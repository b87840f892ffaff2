#include "tests/common/testing.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace bs::testing {

fs::path shared_dir() {
  const char* env = std::getenv("BS_SHARED_DIR");
  if (!env) env = BS_DEFAULT_SHARED_DIR;
  fs::path p(env);
  std::error_code ec;
  if (!fs::exists(p / "data", ec)) return {};
  return fs::canonical(p, ec);
}

fs::path binary() {
  const char* env = std::getenv("BS_BINARY");
  return env ? fs::path(env) : fs::path(BS_DEFAULT_BINARY);
}

fs::path source_dir() {
  const char* env = std::getenv("BS_SOURCE_DIR");
  return env ? fs::path(env) : fs::path(BS_DEFAULT_SOURCE_DIR);
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "bs-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) std::abort();
  path = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

static std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

static std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

RunResult run_blueshift(const std::vector<std::string>& args) { return run_blueshift(args, {}); }

RunResult run_blueshift(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env) {
  TempDir tmp;
  std::string cmd = "BLUESHIFT_VALIDATION_FATAL=1 ";
  for (const auto& [k, v] : env) cmd += k + "=" + shell_quote(v) + " ";
  cmd += shell_quote(binary().string());
  for (auto& a : args) cmd += " " + shell_quote(a);
  cmd += " </dev/null >" + shell_quote((tmp / "out").string()) + " 2>" + shell_quote((tmp / "err").string());
  int status = std::system(cmd.c_str());
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return {code, slurp(tmp / "out"), slurp(tmp / "err")};
}

RunResult synth_into(const fs::path& dir, const std::string& config_json, std::vector<std::string> args) {
  std::ofstream(dir / "config.json") << config_json;
  args.insert(args.begin(), {"synth", "--config", (dir / "config.json").string(), (dir / "hf").string()});
  return run_blueshift(args);
}

const char* tiny_llama_config() {
  return R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 128,
    "intermediate_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
    "vocab_size": 512, "max_position_embeddings": 1024, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
    "tie_word_embeddings": true, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2})";
}

const fs::path& tiny_llama_q8_model() {
  static TempDir dir;
  static fs::path model = [] {
    auto r = synth_into(dir.path, tiny_llama_config(), {"--tokenizer", "builtin", "--seed", "3"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = run_blueshift({"convert", (dir / "hf").string(), (dir / "tiny").string(), "--quant", "q8_0"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir / "tiny";
  }();
  return model;
}

uint64_t test_seed() {
  static uint64_t seed = [] {
    if (const char* env = std::getenv("BS_TEST_SEED")) return uint64_t(std::strtoull(env, nullptr, 10));
    return uint64_t(std::random_device{}()) << 32 | std::random_device{}();
  }();
  return seed;
}

std::mt19937_64& rng() {
  static std::mt19937_64 r(test_seed());
  return r;
}

std::vector<float> random_floats(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng());
  return v;
}

double nmse(const float* a, const double* ref, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = double(a[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? num / den : num;
}

double nmse(const std::vector<float>& a, const std::vector<double>& ref) {
  return nmse(a.data(), ref.data(), std::min(a.size(), ref.size()));
}

DotRef dot_ref(const float* w, const float* x, const float* y0, uint32_t m, uint32_t k, uint32_t batch) {
  DotRef r{std::vector<double>(size_t(batch) * m), std::vector<double>(size_t(batch) * m)};
  for (uint32_t b = 0; b < batch; ++b)
    for (uint32_t row = 0; row < m; ++row) {
      size_t o = size_t(b) * m + row;
      double s = y0 ? y0[o] : 0.0, a = y0 ? std::abs(y0[o]) : 0.0;
      for (uint32_t i = 0; i < k; ++i) {
        double t = double(w[size_t(row) * k + i]) * x[size_t(b) * k + i];
        s += t;
        a += std::abs(t);
      }
      r.value[o] = s;
      r.scale[o] = a;
    }
  return r;
}

double scaled_error(const std::vector<float>& a, const DotRef& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < std::min(a.size(), ref.value.size()); ++i) {
    double d = double(a[i]) - ref.value[i];
    num += d * d;
    den += ref.scale[i] * ref.scale[i];
  }
  return den > 0 ? num / den : num;
}

}  // namespace bs::testing
