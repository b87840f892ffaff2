// blueshift tokenize --chat: the prompt a chat template renders, byte for byte, and its ids. On a
// builtin tokenizer with a small template of the test's own, and (with ../shared) on every `chat`
// case of the HF expected files.
//
// The npm tokenizers of ../shared/data/tokenizers/expected-npm are too large to keep in ../shared:
//   ../shared/tools/fetch_tokenizers.sh DIR && export BS_NPM_TOKENIZERS=DIR
// Without them their cases are skipped with a message.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/trainer.h"
#include "tests/common/testing.h"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

bs::testing::RunResult run(const std::vector<std::string>& args) { return bs::testing::run_blueshift(args); }

ordered_json read(const fs::path& p) {
  std::ifstream f(p);
  return ordered_json::parse(f);
}

// Renders `chat` (an expected file's case) with the CLI on the tokenizer in `dir`; checks text and ids.
void check_case(const fs::path& dir, const ordered_json& chat, const fs::path& scratch) {
  fs::path msgs = scratch / "messages.json";
  write_file(msgs, chat.dump());  // the whole case: {"messages": [...], ...} is accepted
  std::vector<std::string> args = {"tokenize", "--model", dir.string(), "--chat", msgs.string()};
  if (chat.value("add_generation_prompt", false)) args.push_back("--add-generation-prompt");
  auto plain = run(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, chat["rendered"].get<std::string>());
  args.push_back("--json");
  auto r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  EXPECT_EQ(out["text"], chat["rendered"]);
  EXPECT_EQ(out["ids"].get<std::vector<int32_t>>(), chat["ids"].get<std::vector<int32_t>>());
  EXPECT_EQ(out["count"], chat["ids"].size());
}

class TokenizeChat : public ::testing::Test {
 protected:
  void SetUp() override {
    bs::tok::write_builtin_tokenizer(dir.path / "builtin", 700);
    // The same vocabulary with a small template of the test's own (whitespace control, a filter, a
    // conditional generation prompt), so the expected text is written out by hand below.
    fs::create_directories(dir.path / "small");
    fs::copy_file(dir.path / "builtin/tokenizer.json", dir.path / "small/tokenizer.json");
    json config = {{"bos_token", "<|bos|>"},
                   {"eos_token", "<|eos|>"},
                   {"chat_template",
                    "{{- bos_token }}{% for m in messages %}[{{ m.role | upper }}] {{ m.content | trim }}{{ "
                    "eos_token }}\n"
                    "{%- endfor %}{% if add_generation_prompt %}[ASSISTANT] {% endif %}"}};
    write_file(dir.path / "small/tokenizer_config.json", config.dump());
    messages = {{{"role", "system"}, {"content", "Be brief. "}},
                {{"role", "user"}, {"content", " Sky colour?"}}};
    write_file(dir.path / "messages.json", messages.dump());
  }
  bs::testing::TempDir dir;
  ordered_json messages;
};

TEST_F(TokenizeChat, RendersASmallTemplate) {
  std::string msgs = (dir.path / "messages.json").string();
  auto r = run({"tokenize", "--model", (dir.path / "small").string(), "--chat", msgs});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<|bos|>[SYSTEM] Be brief.<|eos|>[USER] Sky colour?<|eos|>");
  r = run({"tokenize", "--tokenizer", (dir.path / "small/tokenizer.json").string(), "--chat", msgs,
           "--add-generation-prompt", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  const std::string text = "<|bos|>[SYSTEM] Be brief.<|eos|>[USER] Sky colour?<|eos|>[ASSISTANT] ";
  EXPECT_EQ(out["text"], text);
  bs::tok::Tokenizer tok = bs::tok::Tokenizer::from_dir(dir.path / "small");
  std::vector<int32_t> ids = out["ids"];
  EXPECT_EQ(ids, tok.encode(text, false));
  EXPECT_EQ(ids.front(), 0) << "BOS comes from the template, as a special token";
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 2) << "two <|eos|>";
  EXPECT_EQ(out["tokens"][0], "<|bos|>");
  EXPECT_EQ(out["count"], ids.size());

  // The builtin tokenizer's own template: what generate --chat would feed the model.
  r = run(
      {"tokenize", "--model", (dir.path / "builtin").string(), "--chat", msgs, "--add-generation-prompt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, bs::tok::Tokenizer::from_dir(dir.path / "builtin").apply_chat_template(messages, true));
}

TEST_F(TokenizeChat, ErrorsAndExitCodes) {
  std::string model = (dir.path / "small").string(), msgs = (dir.path / "messages.json").string();
  auto r = run({"tokenize", "--model", model, "--chat", msgs, "--text", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--chat"), std::string::npos) << r.err;
  EXPECT_EQ(run({"tokenize", "--model", model}).exit_code, 2);
  EXPECT_EQ(run({"tokenize", "--model", model, "--text", "x", "--add-generation-prompt"}).exit_code, 2);
  EXPECT_EQ(run({"tokenize", "--model", model, "--chat", msgs, "--add-special"}).exit_code, 2);

  r = run({"tokenize", "--model", model, "--chat", (dir.path / "nope.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("nope.json"), std::string::npos) << r.err;
  write_file(dir.path / "bad.json", "[{\"role\": \"user\", ");
  r = run({"tokenize", "--model", model, "--chat", (dir.path / "bad.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  write_file(dir.path / "obj.json", R"({"msgs": []})");
  r = run({"tokenize", "--model", model, "--chat", (dir.path / "obj.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("\"messages\""), std::string::npos) << r.err;
  write_file(dir.path / "str.json", R"(["hi"])");
  r = run({"tokenize", "--model", model, "--chat", (dir.path / "str.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("messages[0]"), std::string::npos) << r.err;
  // The builtin template refuses an unknown role, naming it.
  write_file(dir.path / "robot.json", R"([{"role": "robot", "content": "x"}])");
  r = run(
      {"tokenize", "--model", (dir.path / "builtin").string(), "--chat", (dir.path / "robot.json").string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("robot"), std::string::npos) << r.err;
  // A tokenizer without a template.
  fs::create_directories(dir.path / "plain");
  fs::copy_file(dir.path / "small/tokenizer.json", dir.path / "plain/tokenizer.json");
  r = run({"tokenize", "--model", (dir.path / "plain").string(), "--chat", msgs});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("chat_template"), std::string::npos) << r.err;
}

// Every `chat` case of ../shared/data/tokenizers/*/expected*.json, rendered as transformers did.
TEST_F(TokenizeChat, SharedExpectedCases) {
  BS_REQUIRE_SHARED();
  int checked = 0;
  for (auto& d : fs::directory_iterator(bs::testing::shared_dir() / "data/tokenizers")) {
    if (!d.is_directory() || d.path().filename() == "expected-npm") continue;
    for (auto& f : fs::directory_iterator(d.path())) {
      std::string name = f.path().filename();
      if (name.rfind("expected", 0) != 0 || f.path().extension() != ".json") continue;
      ordered_json expected = read(f.path());
      if (!expected.contains("chat")) continue;
      SCOPED_TRACE(f.path().string());
      check_case(d.path(), expected["chat"], dir.path);
      ++checked;
    }
  }
  std::printf("checked %d chat cases in ../shared/data/tokenizers\n", checked);
  EXPECT_GE(checked, 2);  // qwen2.5, phi3
}

// The same for ../shared/data/tokenizers/expected-npm/NAME.shared.json, on the tokenizers
// fetch_tokenizers.sh puts in $BS_NPM_TOKENIZERS/NAME.
TEST_F(TokenizeChat, NpmExpectedCases) {
  BS_REQUIRE_SHARED();
  const char* env = std::getenv("BS_NPM_TOKENIZERS");
  int checked = 0;
  std::string missing;
  for (auto& f : fs::directory_iterator(bs::testing::shared_dir() / "data/tokenizers/expected-npm")) {
    std::string file = f.path().filename();
    const std::string suffix = ".shared.json";
    if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    ordered_json expected = read(f.path());
    if (!expected.contains("chat")) continue;
    std::string name = file.substr(0, file.size() - suffix.size());
    fs::path tok_dir = env ? fs::path(env) / name : fs::path();
    if (!env || !fs::exists(tok_dir / "tokenizer.json")) {
      missing += (missing.empty() ? "" : ", ") + name;
      continue;
    }
    SCOPED_TRACE(f.path().string());
    check_case(tok_dir, expected["chat"], dir.path);
    ++checked;
  }
  std::printf("checked %d npm chat cases\n", checked);
  if (!missing.empty())
    GTEST_SKIP() << "checked " << checked << "; no tokenizer for " << missing
                 << " (run ../shared/tools/fetch_tokenizers.sh DIR and set BS_NPM_TOKENIZERS=DIR)";
}

}  // namespace
