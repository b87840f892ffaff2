// The builtin demo tokenizer (byte-level BPE trained on the embedded corpus): exact vocab size,
// determinism, UTF-8 round trips on random text, special-token splitting, streaming decode.
#include <gtest/gtest.h>

#include <fstream>

#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/trainer.h"
#include "runtime/tokenizer/unicode.h"
#include "tests/common/testing.h"

using bs::tok::StreamDecoder;
using bs::tok::Tokenizer;
using nlohmann::json;

namespace {

constexpr int kVocab = 1000;

const json& trained() {
  static const json j = bs::tok::train_byte_bpe(bs::tok::builtin_corpus(), kVocab);
  return j;
}

const Tokenizer& builtin() {
  static const json config = bs::tok::builtin_tokenizer_config();
  static const Tokenizer t = Tokenizer::from_json(trained(), &config, "builtin");
  return t;
}

// Random UTF-8 drawn from ASCII, whitespace, Latin, Cyrillic, CJK, Hangul, emoji (with ZWJ and
// variation selectors), combining marks and the special-token alphabet.
std::string random_text(std::mt19937_64& r, size_t max_chars) {
  static const std::pair<char32_t, char32_t> kRanges[] = {
      {0x20, 0x7E}, {0x09, 0x0D}, {0xA0, 0x17F}, {0x300, 0x36F}, {0x400, 0x4FF}, {0x4E00, 0x9FFF},
      {0xAC00, 0xD7A3}, {0x1F300, 0x1F6FF}, {0x200D, 0x200D}, {0xFE0F, 0xFE0F}, {0x10000, 0x1007F}};
  static const char* kPieces[] = {"<|eos|>", "<|bos|>", "<|", "|>", " the", "\n\n", "  ", "'s", "123456"};
  std::string s;
  size_t n = r() % (max_chars + 1);
  for (size_t i = 0; i < n; ++i) {
    if (r() % 10 == 0) {
      s += kPieces[r() % std::size(kPieces)];
      continue;
    }
    auto [lo, hi] = kRanges[r() % std::size(kRanges)];
    bs::tok::utf8_append(s, lo + char32_t(r() % (hi - lo + 1)));
  }
  return s;
}

TEST(Builtin, VocabLayout) {
  const Tokenizer& t = builtin();
  EXPECT_EQ(t.vocab_size(), kVocab);
  EXPECT_EQ(t.token_id("<|bos|>"), bs::tok::kBuiltinBosId);
  EXPECT_EQ(t.token_id("<|eos|>"), bs::tok::kBuiltinEosId);
  EXPECT_EQ(t.bos_id(), bs::tok::kBuiltinBosId);
  EXPECT_EQ(t.eos_id(), bs::tok::kBuiltinEosId);
  EXPECT_TRUE(t.is_special(2));
  EXPECT_FALSE(t.is_special(3));
  for (int32_t id = 0; id < kVocab; ++id) EXPECT_TRUE(t.id_token(id).has_value()) << id;
  // Frequent English words of the corpus became single tokens.
  for (const char* w : {"the", " the", " and", " of"}) EXPECT_EQ(t.encode(w).size(), 1u) << w;
}

TEST(Builtin, TrainingIsDeterministic) {
  json again = bs::tok::train_byte_bpe(bs::tok::builtin_corpus(), kVocab);
  EXPECT_EQ(again.dump(), trained().dump());
  // A larger vocab extends the same merge list.
  json bigger = bs::tok::train_byte_bpe(bs::tok::builtin_corpus(), kVocab + 200);
  const json& m = trained()["model"]["merges"];
  ASSERT_GE(bigger["model"]["merges"].size(), m.size());
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(bigger["model"]["merges"][i], m[i]) << i;
}

TEST(Builtin, VocabTooSmallIsAUsageError) {
  try {
    bs::tok::train_byte_bpe("abc", 100);
    FAIL() << "expected an error";
  } catch (const bs::Error& e) {
    EXPECT_EQ(e.kind(), bs::ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("259"), std::string::npos) << e.what();
  }
}

TEST(Builtin, HugeVocabIsFilledWithReservedTokens) {
  json j = bs::tok::train_byte_bpe("tiny corpus, tiny corpus", 400);
  Tokenizer t = Tokenizer::from_json(j, nullptr);
  EXPECT_EQ(t.vocab_size(), 400);
  EXPECT_TRUE(t.is_special(399));
  EXPECT_EQ(t.id_token(399).value_or("").rfind("<|reserved_", 0), 0u);
}

TEST(Builtin, RandomUtf8RoundTrips) {
  const Tokenizer& t = builtin();
  auto& r = bs::testing::rng();
  for (int i = 0; i < 400; ++i) {
    std::string s = random_text(r, 48);
    std::vector<int32_t> ids = t.encode(s);
    ASSERT_EQ(t.decode(ids), s) << "seed " << bs::testing::test_seed() << " case " << i;
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < kVocab);
  }
}

TEST(Builtin, InvalidUtf8IsRepairedNotRejected) {
  const Tokenizer& t = builtin();
  std::string bad = "ok\xC3(\xF0\x9F\x98";
  EXPECT_EQ(t.decode(t.encode(bad)), "ok\xEF\xBF\xBD(\xEF\xBF\xBD");
}

TEST(Builtin, SpecialTokensSplitOut) {
  const Tokenizer& t = builtin();
  auto concat = [](std::initializer_list<std::vector<int32_t>> parts) {
    std::vector<int32_t> out;
    for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  EXPECT_EQ(t.encode("Hello<|eos|>world"), concat({t.encode("Hello"), {1}, t.encode("world")}));
  EXPECT_EQ(t.encode("<|bos|><|start|>user"), concat({{0, 2}, t.encode("user")}));
  // Near misses are plain text.
  for (const char* s : {"<|eos|", "<|eos |>", "<|EOS|>", "|eos|>"}) {
    std::vector<int32_t> ids = t.encode(s);
    for (int32_t id : ids) EXPECT_FALSE(t.is_special(id)) << s;
    EXPECT_EQ(t.decode(ids), s);
  }
  EXPECT_EQ(t.encode("hi", true).front(), 0);
  EXPECT_EQ(t.encode("hi", true).size(), t.encode("hi").size() + 1);
  EXPECT_EQ(t.decode(t.encode("a<|eos|>b"), /*skip_special=*/true), "ab");
  EXPECT_EQ(t.decode(t.encode("a<|eos|>b")), "a<|eos|>b");
}

TEST(Builtin, StreamDecoderNeverSplitsACharacter) {
  const Tokenizer& t = builtin();
  auto& r = bs::testing::rng();
  for (int i = 0; i < 200; ++i) {
    std::vector<int32_t> ids;
    if (i % 2 == 0) {
      ids = t.encode(random_text(r, 40));
    } else {  // arbitrary id sequences, including lone continuation bytes
      for (size_t k = r() % 30; k > 0; --k) ids.push_back(int32_t(r() % kVocab));
    }
    StreamDecoder stream(t);
    std::string all;
    for (int32_t id : ids) {
      std::string piece = stream.push(id);
      ASSERT_TRUE(bs::tok::utf8_is_valid(piece)) << "case " << i << " seed " << bs::testing::test_seed();
      all += piece;
    }
    std::string rest = stream.flush();
    ASSERT_TRUE(bs::tok::utf8_is_valid(rest));
    all += rest;
    ASSERT_EQ(all, t.decode(ids)) << "case " << i << " seed " << bs::testing::test_seed();
  }
}

TEST(Builtin, StreamDecoderHoldsPartialCharacters) {
  const Tokenizer& t = builtin();
  // The corpus has no emoji, so its four bytes arrive as four byte tokens.
  std::vector<int32_t> ids = t.encode("\xF0\x9F\x9A\x80!");
  ASSERT_EQ(ids.size(), 5u);
  StreamDecoder stream(t);
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.push(ids[1]), "");
  EXPECT_EQ(stream.push(ids[2]), "");
  EXPECT_EQ(stream.push(ids[3]), "\xF0\x9F\x9A\x80");
  EXPECT_EQ(stream.push(ids[4]), "!");
  EXPECT_EQ(stream.flush(), "");
  // A character cut off at the end comes out as U+FFFD on flush.
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
}

TEST(Builtin, WrittenFilesLoadAndChat) {
  bs::testing::TempDir dir;
  bs::tok::write_builtin_tokenizer(dir.path / "model", 600);
  Tokenizer t = Tokenizer::from_dir(dir.path / "model");
  EXPECT_EQ(t.vocab_size(), 600);
  // The file path (streamed SAX reader) and the DOM path build the same tokenizer.
  std::ifstream f(dir.path / "model" / "tokenizer.json");
  Tokenizer dom = Tokenizer::from_json(json::parse(f), nullptr);
  std::string text = "The keeper wrote the weather into a thick green book. 3.14159!";
  EXPECT_EQ(t.encode(text), dom.encode(text));
  nlohmann::ordered_json messages = {{{"role", "system"}, {"content", "Be brief."}},
                                     {{"role", "user"}, {"content", " Hello! "}}};
  std::string prompt = t.apply_chat_template(messages, true);
  EXPECT_EQ(prompt, "<|bos|><|start|>system\nBe brief.<|eos|>\n<|start|>user\nHello!<|eos|>\n<|start|>assistant\n");
  std::vector<int32_t> ids = t.encode(prompt);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 3);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 2);
  EXPECT_THROW(t.apply_chat_template(nlohmann::ordered_json::array({{{"role", "robot"}, {"content", "x"}}}), false),
               bs::Error);
}

}  // namespace
