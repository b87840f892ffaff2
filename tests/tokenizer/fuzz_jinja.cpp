// Fuzz target: the Jinja lexer, parser and evaluator on arbitrary template text, rendered with
// a small chat context under tight limits. Built as a libFuzzer binary with -DBLUESHIFT_FUZZ=ON
// (clang); test_fuzz.cpp runs the same function on deterministic mutations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja.h"

int fuzz_jinja(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json context = {
      {"messages",
       {{{"role", "system"}, {"content", "be brief"}},
        {{"role", "user"}, {"content", "hi \xC3\xA9"}},
        {{"role", "assistant"}, {"content", "hello"}, {"tool_calls", {{{"function", {{"name", "f"}, {"arguments", {{"x", 1}}}}}}}}}}},
      {"add_generation_prompt", true},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"},
      {"tools", {{{"name", "f"}, {"n", 1.5}}}}};
  bs::tok::jinja::Limits limits;
  limits.max_steps = 20000;
  limits.max_output = 1 << 16;
  try {
    bs::tok::jinja::Template t(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    t.render(context, limits);
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_jinja(data, size); }
#endif
