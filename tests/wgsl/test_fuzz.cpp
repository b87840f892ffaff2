// Runs the fuzz target on deterministic mutations of the corpus, so CI exercises it without
// clang/libFuzzer: byte flips, truncations, spliced slices and inserted tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/wgsl/wgsl_test.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(bs::testing::corpus_dir())) {
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void feed(const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

TEST(WgslFuzz, DeterministicMutationsOfTheCorpus) {
  auto base = seeds();
  ASSERT_GE(base.size(), 6u);
  std::mt19937_64 rng(12345);  // fixed: the same inputs every run
  static const char* kTokens[] = {"<", ">", ">>", "<<", "(", ")", "{", "}", "[", "]", ";", ",", "&", "*", "ptr<",
                                  "array<", "vec3<", "f16", "1e40", "0x", "/*", "*/", "//", "@", "loop", "fn",
                                  "-2147483648", "4294967296u", "var<storage>", "let", "=", "override", "&&", "!"};
  size_t runs = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = base[rng() % base.size()];
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      size_t pos = rng() % s.size();
      switch (rng() % 5) {
        case 0: s[pos] = char(rng() % 256); break;                          // flip a byte
        case 1: s.resize(pos); break;                                       // truncate
        case 2: s.insert(pos, kTokens[rng() % std::size(kTokens)]); break;  // insert a token
        case 3: s.erase(pos, rng() % 16); break;                            // delete a run
        case 4: {                                                           // splice another seed
          const std::string& o = base[rng() % base.size()];
          size_t from = rng() % o.size();
          s.insert(pos, o.substr(from, rng() % 64));
          break;
        }
      }
    }
    feed(s);
    ++runs;
  }
  // Pathological shapes: deep nesting, long inputs, empty input.
  feed("");
  feed(std::string(5000, '('));
  feed("fn f() { " + std::string(3000, '{') + " }");
  feed("const a = " + std::string(2000, '-') + "1;");
  feed("alias A = array<array<array<f32, 65536>, 65536>, 65536>;");
  feed("const x = array<f32, 100000>();");
  feed("/* /* nested */ unterminated");
  EXPECT_EQ(runs, 3000u);
}

}  // namespace
