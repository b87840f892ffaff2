// The real chat templates of Gemma 4, Qwen 3.5 and LFM2.5 (tests/tokenizer/chat_templates/*.jinja,
// sources in SOURCES.md there) rendered by blueshift's Jinja engine, against the renderings Python
// jinja2 gives when set up as transformers' apply_chat_template sets it up (cross-checked with
// @huggingface/jinja): NAME.golden.json, made by scripts/make_chat_goldens.py. Every variable the
// template sees is in the case's "context", so the engine gets exactly what the reference got.
// Needs no ../shared.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/trainer.h"
#include "tests/common/testing.h"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

fs::path templates_dir() { return bs::testing::source_dir() / "tests/tokenizer/chat_templates"; }

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f.good()) << p;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

ordered_json golden(const std::string& name) {
  return ordered_json::parse(read_text(templates_dir() / (name + ".golden.json")));
}

class RealTemplate : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTemplate, RendersAsTransformers) {
  ordered_json g = golden(GetParam());
  ASSERT_GT(g["cases"].size(), 3u);
  bs::tok::jinja::Template tmpl(read_text(templates_dir() / g["template"].get<std::string>()), GetParam());
  for (const ordered_json& c : g["cases"]) {
    SCOPED_TRACE(GetParam() + ": " + c["name"].get<std::string>());
    if (c.contains("expected")) {
      std::string out;
      try {
        out = tmpl.render(c["context"]);
      } catch (const bs::Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_EQ(out, c["expected"].get<std::string>());
    } else {
      // The template raises: the message must reach the user.
      try {
        tmpl.render(c["context"]);
        ADD_FAILURE() << "expected the template to raise: " << c["error"];
      } catch (const bs::Error& e) {
        EXPECT_NE(std::string(e.what()).find(c["error"].get<std::string>()), std::string::npos) << e.what();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ChatTemplates, RealTemplate, ::testing::Values("gemma4", "qwen3_5", "lfm2_5"));

// The same cases through apply_chat_template's entry point (messages, add_generation_prompt and the
// rest as extra variables), and through plain nlohmann::json, whose objects iterate sorted.
TEST(RealTemplate, ApplyChatTemplateEntryPoints) {
  for (const char* name : {"gemma4", "qwen3_5", "lfm2_5"}) {
    ordered_json g = golden(name);
    std::string src = read_text(templates_dir() / g["template"].get<std::string>());
    for (const ordered_json& c : g["cases"]) {
      if (!c.contains("expected")) continue;
      SCOPED_TRACE(std::string(name) + ": " + c["name"].get<std::string>());
      ordered_json extra = c["context"];
      ordered_json messages = extra["messages"];
      bool agp = extra["add_generation_prompt"];
      extra.erase("messages");
      extra.erase("add_generation_prompt");
      EXPECT_EQ(bs::tok::apply_chat_template(src, messages, agp, extra), c["expected"].get<std::string>());
    }
  }
}

// blueshift tokenize --chat on a tokenizer with a real template as chat_template.jinja: the object
// form of the messages file carries the template's other variables (tools, enable_thinking, ...) as
// transformers' apply_chat_template(messages, tools=..., **kwargs) takes them.
TEST(RealTemplate, TokenizeChatPassesTemplateVariables) {
  bs::testing::TempDir dir;
  bs::tok::write_builtin_tokenizer(dir.path / "tok", 700);
  for (const char* name : {"gemma4", "qwen3_5"}) {
    ordered_json g = golden(name);
    write_text(dir.path / "tok/chat_template.jinja",
               read_text(templates_dir() / g["template"].get<std::string>()));
    for (const ordered_json& c : g["cases"]) {
      if (!c.contains("expected")) continue;
      const ordered_json& ctx = c["context"];
      SCOPED_TRACE(std::string(name) + ": " + c["name"].get<std::string>());
      write_text(dir.path / "case.json", ctx.dump());
      std::vector<std::string> args = {"tokenize", "--model", (dir.path / "tok").string(), "--chat",
                                       (dir.path / "case.json").string()};
      if (ctx["add_generation_prompt"].get<bool>()) args.push_back("--add-generation-prompt");
      auto r = bs::testing::run_blueshift(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, c["expected"].get<std::string>());
    }
  }
  // A raising template: exit 3 with the template's own message.
  ordered_json q = golden("qwen3_5");
  write_text(dir.path / "tok/chat_template.jinja", read_text(templates_dir() / "qwen3_5.jinja"));
  write_text(dir.path / "sys.json", R"({"messages": [{"role": "system", "content": "x"}]})");
  auto r = bs::testing::run_blueshift(
      {"tokenize", "--model", (dir.path / "tok").string(), "--chat", (dir.path / "sys.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("No user query found in messages."), std::string::npos) << r.err;
  // Variables must be an object's keys; a non-object "tools" is the template's business, but
  // "add_generation_prompt" in the file must be a boolean.
  write_text(dir.path / "agp.json",
             R"({"messages": [{"role": "user", "content": "x"}], "add_generation_prompt": 1})");
  r = bs::testing::run_blueshift(
      {"tokenize", "--model", (dir.path / "tok").string(), "--chat", (dir.path / "agp.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("add_generation_prompt"), std::string::npos) << r.err;
}

// With ../shared: LFM2.5's real tokenizer (beside DOPPLER's lfm2-5 manifest, which carries no chat
// template) encodes what its template renders with the ChatML markers as single special tokens:
// <|startoftext|> 1 first, one <|im_start|> 6 and one <|im_end|> 7 per turn, nothing else special.
TEST(RealTemplate, Lfm25RenderingEncodesWithItsTokenizer) {
  BS_REQUIRE_SHARED();
  fs::path tok_file =
      bs::testing::shared_dir() / "data/doppler/lfm2-5-1-2b-instruct-q4k-ehf16-af32/tokenizer.json";
  if (!fs::exists(tok_file)) GTEST_SKIP() << tok_file << " is absent";
  bs::tok::Tokenizer tok = bs::tok::Tokenizer::from_file(tok_file);
  ordered_json g = golden("lfm2_5");
  for (const ordered_json& c : g["cases"]) {
    if (c["name"] != "multi_turn_gen") continue;
    std::vector<int32_t> ids = tok.encode(c["expected"].get<std::string>(), false);
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.front(), 1);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 6), 5);  // system, user, assistant, user, assistant
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 7), 4);
    EXPECT_EQ(tok.decode(ids, false), c["expected"].get<std::string>());
    return;
  }
  FAIL() << "no multi_turn_gen case";
}

}  // namespace
