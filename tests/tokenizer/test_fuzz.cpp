// Runs the fuzz targets on a few thousand deterministic mutations of valid inputs, so CI
// exercises them without clang/libFuzzer (and under AddressSanitizer in the ASan build).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "runtime/tokenizer/trainer.h"

int fuzz_tokenizer_json(const uint8_t* data, size_t size);
int fuzz_jinja(const uint8_t* data, size_t size);

using nlohmann::json;

namespace {

int run(int (*target)(const uint8_t*, size_t), const std::string& s) {
  return target(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Byte-level mutations, plus splices of `tokens` that steer toward interesting inputs.
std::string mutate_bytes(const std::string& seed, std::mt19937_64& r, const std::vector<std::string>& tokens) {
  std::string s = seed;
  for (int k = 1 + int(r() % 4); k > 0 && !s.empty(); --k) {
    size_t at = r() % s.size();
    switch (r() % 6) {
      case 0: s[at] = char(s[at] ^ (1 << (r() % 8))); break;
      case 1: s[at] = char(r()); break;
      case 2: s.erase(at, 1 + r() % 16); break;
      case 3: s.insert(at, s.substr(r() % s.size(), r() % 32)); break;
      case 4: s.resize(at); break;
      default: s.insert(at, tokens[r() % tokens.size()]); break;
    }
  }
  return s;
}

// Structural mutations of a JSON document: a random node replaced by a value of another type,
// or removed. These get past the JSON parser and into the tokenizer's own validation.
json random_value(std::mt19937_64& r) {
  switch (r() % 9) {
    case 0: return nullptr;
    case 1: return bool(r() & 1);
    case 2: return -1;
    case 3: return int64_t(1) << 40;
    case 4: return 3.5;
    case 5: return "";
    case 6: return "\xE2\x96\x81";
    case 7: return json::array({"a b", 1});
    default: return json::object({{"type", "Sequence"}});
  }
}

void mutate_tree(json& j, std::mt19937_64& r, int depth) {
  if ((!j.is_object() && !j.is_array()) || j.empty() || depth > 6 || r() % 4 == 0) {
    j = random_value(r);
    return;
  }
  size_t i = r() % j.size();
  auto it = j.begin();
  std::advance(it, long(i));
  if (r() % 8 == 0) {
    j.erase(it);
    return;
  }
  mutate_tree(*it, r, depth + 1);
}

json small_sp_tokenizer() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"\xE2\x96\x81", 2}, {"a", 3}, {"b", 4}, {"ab", 5}, {"\xE2\x96\x81" "ab", 6}};
  for (int b = 0; b < 256; b += 17) vocab[fmt::format("<0x{:02X}>", b)] = 7 + b / 17;
  return {{"added_tokens", {{{"id", 1}, {"content", "<s>"}, {"special", true}, {"rstrip", true}, {"lstrip", true}}}},
          {"normalizer", {{"type", "Sequence"},
                          {"normalizers", {{{"type", "NFKC"}}, {{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                           {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
          {"pre_tokenizer", {{"type", "Sequence"},
                             {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}},
                                                {{"type", "Metaspace"}, {"prepend_scheme", "first"}, {"split", true}}}}}},
          {"post_processor", {{"type", "TemplateProcessing"},
                              {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}}}},
          {"decoder", {{"type", "Sequence"},
                       {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
                                     {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
                                     {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
          {"model", {{"type", "BPE"}, {"unk_token", "<unk>"}, {"byte_fallback", true}, {"fuse_unk", true},
                     {"vocab", vocab}, {"merges", {"a b", json::array({"\xE2\x96\x81", "ab"})}}}}};
}

TEST(Fuzz, TokenizerJsonMutations) {
  std::vector<std::string> seeds = {bs::tok::train_byte_bpe("the cat sat on the mat, the end. 12345", 300).dump(),
                                    small_sp_tokenizer().dump()};
  for (auto& s : seeds) ASSERT_EQ(run(fuzz_tokenizer_json, s), 0);
  const std::vector<std::string> tokens = {"null", "[]", "{}", "-1", "16777216", "\"\"", "\"a b\"", "\"(\"",
                                           "\"\\u0000\"", "true", "1e308", "\"Regex\"", "\"<0xFF>\""};
  std::mt19937_64 r(20240611);
  for (int i = 0; i < 3000; ++i) {
    const std::string& seed = seeds[size_t(i) % seeds.size()];
    if (i % 2 == 0) {
      run(fuzz_tokenizer_json, mutate_bytes(seed, r, tokens));
    } else {
      json j = json::parse(seed);
      for (int k = 1 + int(r() % 3); k > 0; --k) mutate_tree(j, r, 0);
      run(fuzz_tokenizer_json, j.dump());
    }
  }
}

TEST(Fuzz, JinjaMutations) {
  std::vector<std::string> seeds = {
      "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}[INST] {{ m['content'] | trim }} [/INST]"
      "{% elif m.role == 'assistant' %}{{ m.content ~ eos_token }}{% else %}{{ raise_exception('bad') }}{% endif %}"
      "{% endfor %}",
      "{%- set ns = namespace(n=0, s='') -%}\n{%- for m in messages if m.content is string %}\n  {%- set ns.n = ns.n + "
      "loop.index * 2 // 1 % 7 -%}\n  {{- m.content.split(' ')[-1:] | join(',') | upper }}{{ loop.cycle('a', 'b') }}\n"
      "{%- else %}none{%- endfor %}{{ ns.n }}{{ tools | tojson(indent=2) }}{{ (messages | map(attribute='role') | "
      "list)[1:] }}",
      "{% macro f(x, y=2) %}{{ x * y }}{% endmacro %}{{ f(3) }}{{ f('ab', y=3) }}{# c #}{% raw %}{{x}}{% endraw %}"
      "{{ {'a': [1, 2.5, none, true]}.items() | list }}{{ 'x' if 1 in [1] else 'y' }}{{ range(3) | sum }}"
      "{% for k, v in {'a': 1}.items() %}{{ k }}{{ v }}{% endfor %}{{ messages[0]['content'][::-1] }}"};
  for (auto& s : seeds) ASSERT_EQ(run(fuzz_jinja, s), 0);
  const std::vector<std::string> tokens = {"{{", "}}", "{%", "%}", "{%-", "-%}", "(", ")", "[", "]", "'", "\"", "|",
                                           " if ", " else ", " for ", " in ", "endfor", "endif", "loop.", "ns.n",
                                           "range(99999)", " * 99999", "f(f(", "{% set ns.n = [ns.n] %}"};
  std::mt19937_64 r(99);
  for (int i = 0; i < 4000; ++i) run(fuzz_jinja, mutate_bytes(seeds[size_t(i) % seeds.size()], r, tokens));
}

}  // namespace
