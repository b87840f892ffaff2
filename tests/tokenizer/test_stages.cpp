// Pipeline stages one at a time (pre-tokenizer split behaviors, normalizers, decoders), the
// UTF-8 helpers, and the error messages for malformed tokenizer.json files.
#include <gtest/gtest.h>

#include <fstream>

#include "runtime/base/error.h"
#include "runtime/tokenizer/pipeline.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/unicode.h"
#include "tests/common/testing.h"

using namespace bs::tok;
using nlohmann::json;

namespace {

std::vector<std::string> pre(const json& j, const std::string& text) {
  auto p = make_pre_tokenizer(j, "test");
  std::vector<Piece> pieces = {{text, true}};
  p->split(pieces);
  std::vector<std::string> out;
  for (auto& piece : pieces) out.push_back(piece.text);
  return out;
}

using Strings = std::vector<std::string>;

TEST(Stages, SplitBehaviors) {
  auto split = [](const char* behavior, bool invert = false) {
    return json{{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}};
  };
  EXPECT_EQ(pre(split("Removed"), "a-b--c"), (Strings{"a", "b", "c"}));
  EXPECT_EQ(pre(split("Isolated"), "a-b--c"), (Strings{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(pre(split("MergedWithPrevious"), "a-b--c"), (Strings{"a-", "b-", "-", "c"}));
  EXPECT_EQ(pre(split("MergedWithNext"), "a-b--c"), (Strings{"a", "-b", "-", "-c"}));
  EXPECT_EQ(pre(split("Contiguous"), "a-b--c"), (Strings{"a", "-", "b", "--", "c"}));
  EXPECT_EQ(pre(split("Removed", true), "a-b--c"), (Strings{"-", "-", "-"}));
  json regex = {{"type", "Split"}, {"pattern", {{"Regex", "\\p{N}+"}}}, {"behavior", "Isolated"}};
  EXPECT_EQ(pre(regex, "ab12c\xD9\xA3\xD9\xA4"), (Strings{"ab", "12", "c", "\xD9\xA3\xD9\xA4"}));  // Arabic-Indic digits
}

TEST(Stages, DigitsWhitespaceByteLevel) {
  EXPECT_EQ(pre({{"type", "Digits"}, {"individual_digits", true}}, "a123"), (Strings{"a", "1", "2", "3"}));
  EXPECT_EQ(pre({{"type", "Digits"}, {"individual_digits", false}}, "a123b4"), (Strings{"a", "123", "b", "4"}));
  EXPECT_EQ(pre({{"type", "WhitespaceSplit"}}, " a  b\tc "), (Strings{"a", "b", "c"}));
  EXPECT_EQ(pre({{"type", "Whitespace"}}, "hi, you!"), (Strings{"hi", ",", "you", "!"}));
  // GPT-2 regex + byte mapping: ' ' -> 'Ġ', '\n' -> 'Ċ'.
  EXPECT_EQ(pre({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}, "Hi there\n"),
            (Strings{"Hi", "\xC4\xA0there", "\xC4\x8A"}));
  EXPECT_EQ(pre({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}, "Hi"),
            (Strings{"\xC4\xA0Hi"}));
}

TEST(Stages, Normalizers) {
  auto norm = [](const json& j, std::string s) {
    make_normalizer(j, "test")->normalize(s);
    return s;
  };
  EXPECT_EQ(norm({{"type", "NFC"}}, "e\xCC\x81"), "\xC3\xA9");
  EXPECT_EQ(norm({{"type", "NFD"}}, "\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(norm({{"type", "NFKC"}}, "\xEF\xAC\x81"), "fi");  // ligature
  EXPECT_EQ(norm({{"type", "Lowercase"}}, "\xC3\x89T\xC3\x89"), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(norm({{"type", "Strip"}, {"strip_left", true}, {"strip_right", false}}, " \t x "), "x ");
  EXPECT_EQ(norm({{"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", "_"}}, "a  b c"), "a_b_c");
  EXPECT_EQ(norm({{"type", "Prepend"}, {"prepend", ">"}}, ""), "");
  EXPECT_EQ(norm({{"type", "Sequence"}, {"normalizers", {{{"type", "NFD"}}, {{"type", "StripAccents"}}}}}, "caf\xC3\xA9"),
            "cafe");
}

TEST(Stages, Decoders) {
  auto dec = [](const json& j, std::vector<std::string> tokens) {
    std::string out;
    for (auto& s : make_decoder(j, "test")->decode_chain(std::move(tokens))) out += s;
    return out;
  };
  EXPECT_EQ(dec({{"type", "ByteLevel"}}, {"Hello", "\xC4\xA0world", "\xC4\x8A"}), "Hello world\n");
  EXPECT_EQ(dec({{"type", "Strip"}, {"content", "x"}, {"start", 2}, {"stop", 1}}, {"xxxaxx"}), "xax");
  EXPECT_EQ(dec({{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}},
                {"\xE2\x96\x81Hi", "\xE2\x96\x81there"}),
            "Hi there");
  EXPECT_EQ(dec({{"type", "ByteFallback"}}, {"<0xE2>", "<0x82>", "<0xAC>", "a", "<0xFF>"}),
            "\xE2\x82\xAC" "a\xEF\xBF\xBD");
}

TEST(Unicode, LossyMatchesRust) {
  // Rust's from_utf8_lossy replaces each maximal invalid prefix by one U+FFFD.
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8_lossy("a\xF0\x9F\x98"), "a" + r);
  EXPECT_EQ(utf8_lossy("\xE2\x28\xA1"), r + "(" + r);
  EXPECT_EQ(utf8_lossy("\xC0\xAF"), r + r);       // overlong
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), r + r + r);  // surrogate
  EXPECT_EQ(utf8_lossy("ok \xE2\x82\xAC"), "ok \xE2\x82\xAC");
  EXPECT_EQ(utf8_incomplete_tail("ab\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8_incomplete_tail("ab\xE2\x82\xAC"), 0u);
  EXPECT_EQ(utf8_incomplete_tail("ab\xC3"), 1u);
  EXPECT_EQ(utf8_incomplete_tail("ab\x80"), 0u);
}

// Malformed tokenizer.json files fail with a message that names the field.
TEST(Errors, MalformedTokenizerJson) {
  auto error_of = [](const json& j) -> std::string {
    try {
      Tokenizer::from_json(j, nullptr, "tok.json");
    } catch (const bs::Error& e) {
      EXPECT_EQ(e.kind(), bs::ErrorKind::input);
      return e.what();
    }
    return "no error";
  };
  json ok = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}}};
  EXPECT_EQ(Tokenizer::from_json(ok, nullptr).encode("ab"), (std::vector<int32_t>{2}));
  auto with = [&](const char* path, json v) {
    json j = ok;
    j[json::json_pointer(path)] = std::move(v);
    return j;
  };
  auto has = [](const std::string& msg, const char* part) {
    return msg.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "message: " << msg;
  };
  EXPECT_TRUE(has(error_of(json::array()), "top level"));
  EXPECT_TRUE(has(error_of(json::object()), "missing field \"model\""));
  EXPECT_TRUE(has(error_of(with("/model/type", "Unigram")), "only \"BPE\""));
  EXPECT_TRUE(has(error_of(with("/model/vocab", json::array())), "model.vocab: expected an object"));
  EXPECT_TRUE(has(error_of(with("/model/vocab/a", "zero")), "vocab[\"a\"]: expected an integer"));
  EXPECT_TRUE(has(error_of(with("/model/vocab/b", 0)), "id 0 is used by two tokens"));
  EXPECT_TRUE(has(error_of(with("/model/merges/0", "a c")), "merges[0]: \"a c\" uses a token missing"));
  EXPECT_TRUE(has(error_of(with("/model/merges/0", "ab")), "merges[0]: expected \"left right\""));
  EXPECT_TRUE(has(error_of(with("/normalizer", {{"type", "Bert"}})), "unsupported normalizer type \"Bert\""));
  EXPECT_TRUE(has(error_of(with("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(a"}}}})), "invalid regex"));
  EXPECT_TRUE(has(error_of(with("/decoder", {{"kind", "x"}})), "decoder: missing field \"type\""));
  EXPECT_TRUE(has(error_of(with("/added_tokens", {{{"id", "x"}, {"content", "<s>"}}})), "added_tokens[0].id"));
  EXPECT_TRUE(has(error_of(with("/post_processor", {{"type", "TemplateProcessing"},
                                                     {"single", {{{"SpecialToken", {{"id", "<s>"}}}}}}})),
                  "names token \"<s>\""));
}

TEST(Errors, FilesOnDisk) {
  bs::testing::TempDir dir;
  auto write = [&](const std::string& text) {
    std::ofstream(dir.path / "tokenizer.json") << text;
  };
  auto message = [&]() -> std::string {
    try {
      Tokenizer::from_dir(dir.path);
    } catch (const bs::Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message().find("no tokenizer.json"), std::string::npos);
  write("{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [\"a");
  EXPECT_NE(message().find("not valid JSON"), std::string::npos) << message();
  write("{\"model\": {\"vocab\": {\"a\": 0}}}");
  EXPECT_NE(message().find("missing field \"merges\""), std::string::npos) << message();
  write("{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [[\"a\"]]}}");
  EXPECT_NE(message().find("merges[0]"), std::string::npos) << message();
  write("{\"model\": {\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [[\"a\", \"b\"]]}}");
  EXPECT_EQ(Tokenizer::from_dir(dir.path).encode("abab"), (std::vector<int32_t>{2, 2}));
}

}  // namespace
