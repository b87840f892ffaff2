// blueshift tokenize / detokenize end to end on a builtin tokenizer written to a temp dir.
#include <gtest/gtest.h>

#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/trainer.h"
#include "tests/common/testing.h"

using nlohmann::json;

namespace {

bs::testing::RunResult run(const std::vector<std::string>& args) { return bs::testing::run_blueshift(args); }

class TokenizerCli : public ::testing::Test {
 protected:
  void SetUp() override { bs::tok::write_builtin_tokenizer(dir.path, 700); }
  bs::testing::TempDir dir;
};

TEST_F(TokenizerCli, TokenizeThenDetokenize) {
  std::string text = "The river rises after rain. \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80";
  auto r = run({"tokenize", "--model", dir.path.string(), "--text", text, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json out = json::parse(r.out);
  std::vector<int32_t> ids = out["ids"];
  bs::tok::Tokenizer tok = bs::tok::Tokenizer::from_dir(dir.path);
  EXPECT_EQ(ids, tok.encode(text));
  EXPECT_EQ(out["count"], ids.size());
  EXPECT_EQ(out["tokens"][0], *tok.id_token(ids[0]));

  auto plain = run({"tokenize", "--tokenizer", (dir.path / "tokenizer.json").string(), "--text", text, "--add-special"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  std::string csv = "0";
  for (int32_t id : ids) csv += "," + std::to_string(id);
  EXPECT_EQ(plain.out, csv + "\n");

  auto back = run({"detokenize", "--model", dir.path.string(), "--ids", csv});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "<|bos|>" + text + "\n");
  auto skipped = run({"detokenize", "--model", dir.path.string(), "--ids", csv, "--skip-special", "--json"});
  ASSERT_EQ(skipped.exit_code, 0) << skipped.err;
  EXPECT_EQ(json::parse(skipped.out)["text"], text);
}

TEST_F(TokenizerCli, ErrorsAndExitCodes) {
  auto both = run({"tokenize", "--model", dir.path.string(), "--tokenizer", "x", "--text", "a"});
  EXPECT_EQ(both.exit_code, 2);  // CLI11: mutually exclusive options
  auto neither = run({"tokenize", "--text", "a"});
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.err.find("--model"), std::string::npos) << neither.err;
  auto missing = run({"tokenize", "--model", (dir.path / "nope").string(), "--text", "a"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("no tokenizer.json"), std::string::npos) << missing.err;
  auto bad_id = run({"detokenize", "--model", dir.path.string(), "--ids", "1,700"});
  EXPECT_EQ(bad_id.exit_code, 2);
  EXPECT_NE(bad_id.err.find("700"), std::string::npos) << bad_id.err;
  auto bad_list = run({"detokenize", "--model", dir.path.string(), "--ids", "1,x"});
  EXPECT_EQ(bad_list.exit_code, 2);
}

}  // namespace
