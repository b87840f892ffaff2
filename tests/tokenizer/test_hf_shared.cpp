// Encode/decode/chat-template parity with HF tokenizers 0.23 on the real tokenizers in
// ../shared/data/tokenizers (Llama 3, Qwen2.5, Phi-3). Skips when ../shared is absent.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "runtime/tokenizer/tokenizer.h"
#include "tests/common/testing.h"

namespace fs = std::filesystem;
using bs::tok::StreamDecoder;
using bs::tok::Tokenizer;
using nlohmann::ordered_json;

namespace {

ordered_json read(const fs::path& p) {
  std::ifstream f(p);
  return ordered_json::parse(f);
}

class HfTokenizer : public ::testing::TestWithParam<const char*> {
 protected:
  fs::path dir() const { return bs::testing::shared_dir() / "data" / "tokenizers" / GetParam(); }
};

TEST_P(HfTokenizer, EncodeDecodeMatchHf) {
  BS_REQUIRE_SHARED();
  Tokenizer tok = Tokenizer::from_dir(dir());
  ordered_json expected = read(dir() / "expected.json");
  ASSERT_GT(expected["cases"].size(), 20u);
  for (auto& c : expected["cases"]) {
    std::string text = c["text"];
    SCOPED_TRACE("text: " + text.substr(0, 80));
    EXPECT_EQ(tok.encode(text, false), c["ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(tok.encode(text, true), c["ids_with_special"].get<std::vector<int32_t>>());
    std::vector<int32_t> ids = c["ids"];
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>());
    // Streaming the same ids one at a time gives the same text.
    StreamDecoder stream(tok);
    std::string streamed;
    for (int32_t id : ids) streamed += stream.push(id);
    streamed += stream.flush();
    EXPECT_EQ(streamed, c["decoded"].get<std::string>());
  }
}

// Llama 3's directory has no tokenizer_config.json, so no template.
using HfChatTemplate = HfTokenizer;

TEST_P(HfChatTemplate, RendersLikeTransformers) {
  BS_REQUIRE_SHARED();
  ordered_json expected = read(dir() / "expected.json");
  ASSERT_TRUE(expected.contains("chat"));
  Tokenizer tok = Tokenizer::from_dir(dir());
  const ordered_json& chat = expected["chat"];
  std::string rendered = tok.apply_chat_template(chat["messages"], chat["add_generation_prompt"].get<bool>());
  EXPECT_EQ(rendered, chat["rendered"].get<std::string>());
  EXPECT_EQ(tok.encode(rendered, false), chat["ids"].get<std::vector<int32_t>>());
}

INSTANTIATE_TEST_SUITE_P(Shared, HfTokenizer, ::testing::Values("llama3", "qwen2.5", "phi3"));
INSTANTIATE_TEST_SUITE_P(Shared, HfChatTemplate, ::testing::Values("qwen2.5", "phi3"));

TEST(HfTokenizerLoad, Llama3LoadsFast) {
  BS_REQUIRE_SHARED();
  fs::path file = bs::testing::shared_dir() / "data/tokenizers/llama3/tokenizer.json";
  // CPU time, not wall time: CI machines are shared. The target is well under a second.
  std::clock_t c0 = std::clock();
  Tokenizer tok = Tokenizer::from_file(file);
  double cpu_s = double(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("llama3 tokenizer.json (128k vocab, 280k merges): loaded in %.3f s of CPU\n", cpu_s);
  EXPECT_EQ(tok.vocab_size(), 128256);
  EXPECT_EQ(tok.token_id("<|begin_of_text|>"), 128000);
  EXPECT_EQ(tok.bos_id(), 128000);
#ifndef __SANITIZE_ADDRESS__
  EXPECT_LT(cpu_s, 1.5);
#endif
}

TEST(HfTokenizerLoad, SpecialTokensAndFlags) {
  BS_REQUIRE_SHARED();
  Tokenizer qwen = Tokenizer::from_dir(bs::testing::shared_dir() / "data/tokenizers/qwen2.5");
  EXPECT_EQ(qwen.eos_id(), 151645);  // <|im_end|> per tokenizer_config.json
  EXPECT_TRUE(qwen.is_special(151644));
  EXPECT_FALSE(qwen.is_special(151657));  // <tool_call> is added but not special
  std::vector<int32_t> ids = qwen.encode("<|im_start|>user\nhi<|im_end|>");
  EXPECT_EQ(ids.front(), 151644);
  EXPECT_EQ(ids.back(), 151645);
  EXPECT_EQ(qwen.decode(ids, /*skip_special=*/true), "user\nhi");

  Tokenizer phi = Tokenizer::from_dir(bs::testing::shared_dir() / "data/tokenizers/phi3");
  // <|end|> has rstrip: the newline after it belongs to the token.
  EXPECT_EQ(phi.encode("<|end|>\n<|user|>"), (std::vector<int32_t>{32007, 32010}));
  EXPECT_EQ(phi.bos_id(), 1);
  EXPECT_EQ(phi.eos_id(), 32000);
  EXPECT_TRUE(phi.encode("hi", true) == phi.encode("hi", false));  // add_bos_token: false
}

}  // namespace
