// Helpers every test may use: where the shared data and the binary are, fresh random data,
// running the blueshift binary, temporary directories.
#pragma once
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace bs::testing {

// ../shared, or empty when it is absent (tests then GTEST_SKIP with a message).
std::filesystem::path shared_dir();
// Skips the current test, with a message, when ../shared is absent. Use as: BS_REQUIRE_SHARED();
#define BS_REQUIRE_SHARED()                                                                  \
  do {                                                                                       \
    if (::bs::testing::shared_dir().empty()) GTEST_SKIP() << "needs ../shared (reference data)"; \
  } while (0)

// The tiny HF checkpoints of ../shared/data/models with HF float32 logits that blueshift runs (parity,
// quantized conversions, greedy ids).
inline const std::vector<std::string> kSharedTinyModels = {"llama-tiny", "qwen3-tiny",  "gemma3-tiny",
                                                           "gemma2-tiny", "phi3-tiny",  "lfm2-tiny",
                                                           "qwen35-tiny", "gemma4-tiny", "gemma4e-tiny",
                                                           "mixtral-tiny", "qwen3moe-tiny", "gptoss-tiny"};

std::filesystem::path binary();      // the blueshift executable under test
std::filesystem::path source_dir();  // repository root

// A fresh temporary directory, removed when the object dies.
struct TempDir {
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  std::filesystem::path path;
  std::filesystem::path operator/(const std::string& s) const { return path / s; }
};

struct RunResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs `blueshift <args>` (args are shell-quoted here); returns exit code and captured output.
RunResult run_blueshift(const std::vector<std::string>& args);
// ... with extra environment variables (NAME, VALUE) for that run.
RunResult run_blueshift(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env);

// `config_json` (an HF config.json's text) as dir/config.json, synthesized into dir/hf by `blueshift synth`, then
// `args` (its seed, a tokenizer).
RunResult synth_into(const std::filesystem::path& dir, const std::string& config_json, std::vector<std::string> args = {});

// The config.json text of a tiny Llama (2 layers, hidden 128, GQA 4/2, vocab 512, tied embeddings, BOS 1, EOS 2)
// for synth_into (with `--tokenizer builtin`: the small model the CLI tests generate with).
const char* tiny_llama_config();
// That Llama synthesized with the builtin tokenizer (seed 3) and converted to Q8_0 RDRR (directory "tiny": serve names the model by it), once per test process.
const std::filesystem::path& tiny_llama_q8_model();

// Fresh random data: a new seed every run unless BS_TEST_SEED is set; the seed is printed on failure.
std::mt19937_64& rng();
uint64_t test_seed();
std::vector<float> random_floats(size_t n, float lo = -1.0f, float hi = 1.0f);

// Normalized mean squared error: sum((a-b)^2) / sum(b^2).
double nmse(const float* a, const double* ref, size_t n);
double nmse(const std::vector<float>& a, const std::vector<double>& ref);

// Float64 reference for Y[batch, m] (+)= X[batch, k] W[m, k]^T, with each output's scale: the sum of
// |terms| (and |y0|), which f32 rounding error grows with. nmse divides by the outputs themselves, so
// a single output whose terms cancel to near zero fails it by luck of the draw; the error measured
// against the scale does not depend on cancellation, and a wrong kernel still misses it by orders.
struct DotRef {
  std::vector<double> value, scale;
};
DotRef dot_ref(const float* w, const float* x, const float* y0, uint32_t m, uint32_t k, uint32_t batch);
// sum((a - value)^2) / sum(scale^2).
double scaled_error(const std::vector<float>& a, const DotRef& ref);

}  // namespace bs::testing
