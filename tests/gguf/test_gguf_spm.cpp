// SentencePiece vocabularies in GGUF (tokenizer.ggml.model "llama": Llama 2, Phi-3, Gemma): tokens, scores,
// token types and add_space_prefix, written here as llama.cpp's converter writes them from a tokenizer.json,
// come back as a tokenizer.json the runtime tokenizer reads and that encodes, decodes and renders chats as
// the original does: a synthetic vocabulary (both space-prefix settings) and, with ../shared, Phi-3's real
// one against HF's own ids.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "rdrr/gguf.h"
#include "rdrr/gguf_import.h"
#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer.h"
#include "tests/common/testing.h"
#include "tests/gguf/round_trip.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace bs::gguf;
using bs::testing::TempDir;

const std::string kSp = "\xE2\x96\x81";  // U+2581

// GGUF vocabulary metadata from an HF SentencePiece-BPE tokenizer.json, as llama.cpp's converter writes it
// from tokenizer.model: token types (unknown, control for special added tokens, user-defined for the others,
// byte for <0xNN>), and scores that order the pieces as the merges do (a piece's score: minus the index of
// the first merge that makes it; pieces no merge makes score lowest).
std::vector<KeyValue> spm_metadata(const json& tok, const json* config, bool add_space_prefix) {
  size_t n = 0;
  for (auto& [text, id] : tok["model"]["vocab"].items()) n = std::max(n, id.get<size_t>() + 1);
  for (auto& a : tok["added_tokens"]) n = std::max(n, a["id"].get<size_t>() + 1);
  std::vector<std::string> tokens(n);
  std::vector<int64_t> types(n, 5);
  std::vector<double> scores(n, -1e9);
  for (size_t i = 0; i < n; ++i) tokens[i] = "[PAD" + std::to_string(i) + "]";
  std::map<std::string, size_t> first_merge;
  size_t k = 0;
  for (auto& m : tok["model"]["merges"]) {
    std::string l, r;
    if (m.is_string()) {
      std::string s = m;
      l = s.substr(0, s.find(' '));
      r = s.substr(s.find(' ') + 1);
    } else {
      l = m[0];
      r = m[1];
    }
    first_merge.emplace(l + r, k++);
  }
  for (auto& [text, id] : tok["model"]["vocab"].items()) {
    size_t i = id;
    tokens[i] = text;
    types[i] = text.size() == 6 && text.starts_with("<0x") ? 6 : 1;
    if (auto it = first_merge.find(text); it != first_merge.end()) scores[i] = -double(it->second);
  }
  for (auto& a : tok["added_tokens"]) {
    size_t id = a["id"];
    tokens[id] = a["content"];
    types[id] = a["content"] == tok["model"]["unk_token"] ? 2 : a["special"].get<bool>() ? 3 : 4;
  }
  std::vector<KeyValue> kv = {
      {"tokenizer.ggml.model", Value::str("llama")},
      {"tokenizer.ggml.pre", Value::str("default")},
      {"tokenizer.ggml.tokens", Value::str_array(tokens)},
      {"tokenizer.ggml.scores", Value::f32_array(scores)},
      {"tokenizer.ggml.token_type", Value::i32_array(types)},
      {"tokenizer.ggml.unknown_token_id", Value::u32(0)},
      {"tokenizer.ggml.bos_token_id", Value::u32(1)},
      {"tokenizer.ggml.add_space_prefix", Value::boolean(add_space_prefix)},
  };
  if (config) {
    bool add_bos = config->value("add_bos_token", false);
    kv.push_back({"tokenizer.ggml.add_bos_token", Value::boolean(add_bos)});
    std::string eos = (*config)["eos_token"];
    for (size_t i = 0; i < n; ++i)
      if (tokens[i] == eos) kv.push_back({"tokenizer.ggml.eos_token_id", Value::u32(uint32_t(i))});
    kv.push_back({"tokenizer.chat_template", Value::str((*config)["chat_template"])});
  }
  return kv;
}

// Writes a GGUF holding only `kv` (plus the architecture) and rebuilds its tokenizer into `dir`.
bs::tok::Tokenizer rebuilt(const std::vector<KeyValue>& kv, const fs::path& dir,
                           const std::string& arch = "llama") {
  fs::create_directories(dir);
  {
    Writer w((dir / "v.gguf").string());
    w.add("general.architecture", Value::str(arch));
    for (const auto& e : kv) w.add(e.key, e.value);
    w.write_header();
    w.finish();
  }
  Header h = read_header((dir / "v.gguf").string());
  std::string why;
  auto t = bs::gguf_tokenizer(h, "v.gguf", why);
  if (!t) throw std::runtime_error(why);
  std::ofstream(dir / "tokenizer.json") << t->tokenizer.dump();
  std::ofstream(dir / "tokenizer_config.json") << t->config.dump();
  return bs::tok::Tokenizer::from_dir(dir);
}

// A small SentencePiece-BPE vocabulary in HF's layout: <unk> <s> </s>, the 256 byte tokens, the characters
// of a few words, and merges that build each word left to right.
json synthetic_spm(bool add_space_prefix) {
  json vocab = json::object(), merges = json::array();
  int32_t next = 0;
  auto add = [&](const std::string& t) {
    if (!vocab.contains(t)) vocab[t] = next++;
  };
  for (const char* t : {"<unk>", "<s>", "</s>"}) add(t);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf);
  }
  const std::vector<std::string> words = {kSp + "the",
                                          kSp + "quick",
                                          kSp + "brown",
                                          kSp + "fox",
                                          "ing",
                                          kSp + "jump",
                                          kSp + "over",
                                          kSp + "lazy",
                                          kSp + "dog",
                                          kSp + "th",
                                          "er",
                                          kSp + kSp,
                                          kSp + "caf\xC3\xA9",
                                          "\xE4\xB8\x96\xE7\x95\x8C"};
  for (const auto& w : words)  // single characters (UTF-8 sequences) first
    for (size_t i = 0; i < w.size();) {
      size_t len = 1;
      while (i + len < w.size() && (static_cast<unsigned char>(w[i + len]) & 0xC0) == 0x80) ++len;
      add(w.substr(i, len));
      i += len;
    }
  for (const auto& w : words) {
    size_t first = 1;
    while (first < w.size() && (static_cast<unsigned char>(w[first]) & 0xC0) == 0x80) ++first;
    for (size_t at = first; at < w.size();) {
      size_t len = 1;
      while (at + len < w.size() && (static_cast<unsigned char>(w[at + len]) & 0xC0) == 0x80) ++len;
      std::string l = w.substr(0, at), r = w.substr(at, len);
      if (!vocab.contains(l + r)) {
        merges.push_back({l, r});
        add(l + r);
      }
      at += len;
    }
  }
  json added = json::array();
  for (int id = 0; id < 3; ++id)
    added.push_back({{"id", id},
                     {"content", std::vector<std::string>{"<unk>", "<s>", "</s>"}[size_t(id)]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  added.push_back({{"id", next},
                   {"content", "<|turn|>"},
                   {"single_word", false},
                   {"lstrip", false},
                   {"rstrip", false},
                   {"normalized", false},
                   {"special", true}});
  json replace = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSp}};
  json decoders = json::array({{{"type", "Replace"}, {"pattern", {{"String", kSp}}}, {"content", " "}},
                               {{"type", "ByteFallback"}},
                               {{"type", "Fuse"}}});
  if (add_space_prefix) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", add_space_prefix
                             ? json{{"type", "Sequence"},
                                    {"normalizers", {{{"type", "Prepend"}, {"prepend", kSp}}, replace}}}
                             : replace},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", {{"type", "Sequence"}, {"decoders", decoders}}},
          {"model",
           {{"type", "BPE"},
            {"unk_token", "<unk>"},
            {"fuse_unk", true},
            {"byte_fallback", true},
            {"vocab", vocab},
            {"merges", merges}}}};
}

TEST(GgufSentencePiece, SyntheticVocabularyEncodesAsTheOriginal) {
  for (bool prefix : {true, false}) {  // Llama 2 / Phi-3 style, and Gemma's (no dummy prefix)
    SCOPED_TRACE(prefix ? "add_space_prefix" : "no space prefix");
    TempDir d;
    json orig = synthetic_spm(prefix);
    std::ofstream(d / "orig.json") << orig.dump();
    auto a = bs::tok::Tokenizer::from_file(d / "orig.json");
    auto b = rebuilt(spm_metadata(orig, nullptr, prefix), d / "out");
    size_t n = 0;
    for (std::string text :
         {"the quick brown fox", " jumping over the lazy dog", "thethe  the   caf\xC3\xA9",
          "\xE4\xB8\x96\xE7\x95\x8C and \xF0\x9F\x98\x80 bytes", "<s>the<|turn|>fox</s>", "xyz\tq\n", ""}) {
      for (bool special : {false, true}) EXPECT_EQ(b.encode(text, special), a.encode(text, special)) << text;
      auto ids = a.encode(text, false);
      EXPECT_EQ(b.decode(ids), a.decode(ids)) << text;
      n += ids.size();
    }
    EXPECT_GT(n, 30u);
  }
}

TEST(GgufSentencePiece, MalformedScoresAreClearErrors) {
  TempDir d;
  auto kv = spm_metadata(synthetic_spm(true), nullptr, true);
  auto expect_error = [&](std::vector<KeyValue> m, const std::string& what) {
    try {
      rebuilt(m, d / "bad");
      ADD_FAILURE() << "accepted: " << what;
    } catch (const bs::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto set = [&](std::string key, Value v) {
    auto m = kv;
    std::erase_if(m, [&](const KeyValue& e) { return e.key == key; });
    m.push_back({key, std::move(v)});
    return m;
  };
  expect_error(set("tokenizer.ggml.scores", Value::f32_array({1.0, 2.0})),
               "'tokenizer.ggml.scores': expected 329 numbers (one per token)");
  auto nan = kv;
  for (auto& e : nan)
    if (e.key == "tokenizer.ggml.scores") std::get<std::vector<double>>(e.value.v)[7] = std::nan("");
  expect_error(nan, "'tokenizer.ggml.scores[7]': expected a finite score");
  expect_error(set("tokenizer.ggml.add_space_prefix", Value::u32(1)),
               "'tokenizer.ggml.add_space_prefix': expected a boolean");
  auto none = kv;
  std::erase_if(none, [](const KeyValue& e) { return e.key == "tokenizer.ggml.scores"; });
  expect_error(none, "'tokenizer.ggml.scores': expected 329 numbers (one per token), found none");
}

// The fuzz target on mutations of a SentencePiece vocabulary (types, scores, the space-prefix flag), and a
// hostile megabyte-long token, which must not make the merge extraction quadratic.
TEST(GgufSentencePiece, FuzzMutationsOfASentencePieceVocabulary) {
  TempDir d;
  rebuilt(spm_metadata(synthetic_spm(false), nullptr, false), d / "v");
  const std::vector<uint8_t> good = bs::testing::file_bytes(d / "v" / "v.gguf");
  std::mt19937_64 r(1919);
  const uint32_t words[] = {0, 1, 2, 3, 6, 7, 0x7FC00000u, 0xFFFFFFFFu};
  bs::testing::fuzz_mutations(good, good.size(), words, r, 2000);
  auto kv = spm_metadata(synthetic_spm(true), nullptr, true);
  for (auto& e : kv)
    if (e.key == "tokenizer.ggml.tokens")
      std::get<std::vector<std::string>>(e.value.v)[300] = std::string(1 << 20, 'a');
  auto t0 = std::chrono::steady_clock::now();
  rebuilt(kv, d / "long");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

// With ../shared: Phi-3's tokenizer (SentencePiece BPE from Llama 2's, with chat tokens) through GGUF gives
// HF's ids for every case of expected.json, decodes them back and renders and encodes the chat as HF did.
TEST(GgufSentencePiece, Phi3RealVocabularyMatchesHf) {
  BS_REQUIRE_SHARED();
  const fs::path dir = bs::testing::shared_dir() / "data/tokenizers/phi3";
  TempDir d;
  json tok = json::parse(std::ifstream(dir / "tokenizer.json"));
  json cfg = json::parse(std::ifstream(dir / "tokenizer_config.json"));
  json expected = json::parse(std::ifstream(dir / "expected.json"));
  auto b = rebuilt(spm_metadata(tok, &cfg, true), d / "out", "phi3");
  for (const auto& c : expected["cases"]) {
    const std::string text = c["text"];
    EXPECT_EQ(b.encode(text, false), c["ids"].get<std::vector<int32_t>>()) << text;
    EXPECT_EQ(b.encode(text, true), c["ids_with_special"].get<std::vector<int32_t>>()) << text;
    EXPECT_EQ(b.decode(c["ids"].get<std::vector<int32_t>>()), c["decoded"].get<std::string>()) << text;
  }
  const json& chat = expected["chat"];
  std::string rendered = b.apply_chat_template(chat["messages"], chat["add_generation_prompt"].get<bool>());
  EXPECT_EQ(rendered, chat["rendered"].get<std::string>());
  EXPECT_EQ(b.encode(rendered, false), chat["ids"].get<std::vector<int32_t>>());
}

}  // namespace
