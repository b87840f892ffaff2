// serve's request parsing (every field's type and range, the error's status, param and code), the
// response shapes, stop strings across token boundaries, and the parser on mutated bodies.
#include <gtest/gtest.h>

#include <random>

#include "runtime/serve/api.h"
#include "runtime/serve/stop.h"

int fuzz_request(const uint8_t* data, size_t size);

namespace bs::serve {
namespace {

using nlohmann::json;

ApiError refusal(Endpoint ep, const std::string& body) {
  try {
    parse_request(ep, body);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "", "", "");
}

TEST(ServeApi, ParsesAChatRequest) {
  auto r = parse_request(Endpoint::chat, R"({"model": "m", "messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}]}],
      "max_tokens": 7, "temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "seed": 18446744073709551615,
      "stop": ["\n\n", "END"], "stream": true, "n": 1, "user": "ignored", "stream_options": {"include_usage": true}})");
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1]["content"], "hi there");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_FLOAT_EQ(r.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.top_p, 0.9f);
  EXPECT_EQ(r.top_k, 40);
  EXPECT_FLOAT_EQ(r.min_p, 0.05f);
  EXPECT_EQ(r.seed, 18446744073709551615ull);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(r.stream);
}

TEST(ServeApi, ParsesCompletionPrompts) {
  EXPECT_EQ(parse_request(Endpoint::completions, R"({"prompt": "abc"})").prompt, "abc");
  EXPECT_EQ(parse_request(Endpoint::completions, R"({"prompt": ["abc"]})").prompt, "abc");
  EXPECT_EQ(parse_request(Endpoint::completions, R"({"prompt": [5, 6, 7]})").prompt_tokens, (std::vector<int32_t>{5, 6, 7}));
  auto d = parse_request(Endpoint::completions, R"({"prompt": "x", "stop": "Q"})");
  EXPECT_FLOAT_EQ(d.temperature, 1.0f);  // OpenAI's default
  EXPECT_FALSE(d.max_tokens.has_value());
  EXPECT_EQ(d.stop, std::vector<std::string>{"Q"});
}

TEST(ServeApi, RefusesBadRequestsNamingTheField) {
  struct Case {
    Endpoint ep;
    const char* body;
    const char* param;
    const char* code;
  };
  const Case cases[] = {
      {Endpoint::chat, "{\"messages\": [", "", ""},
      {Endpoint::chat, "[1, 2]", "", ""},
      {Endpoint::chat, "{}", "messages", ""},
      {Endpoint::chat, R"({"messages": []})", "messages", ""},
      {Endpoint::chat, R"({"messages": [{"content": "x"}]})", "messages[0]", ""},
      {Endpoint::chat, R"({"messages": [{"role": "wizard", "content": "x"}]})", "messages[0].role", ""},
      {Endpoint::chat, R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content", ""},
      {Endpoint::chat, R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content", ""},
      {Endpoint::completions, R"({"prompt": 5})", "prompt", ""},
      {Endpoint::completions, R"({"prompt": ["a", "b"]})", "prompt", ""},
      {Endpoint::completions, R"({"prompt": [1, -2]})", "prompt", ""},
      {Endpoint::completions, R"({"prompt": ""})", "prompt", ""},
      {Endpoint::completions, R"({"prompt": "x", "n": 2})", "n", "unsupported_value"},
      {Endpoint::completions, R"({"prompt": "x", "max_tokens": 0})", "max_tokens", ""},
      {Endpoint::completions, R"({"prompt": "x", "max_tokens": 1.5})", "max_tokens", ""},
      {Endpoint::completions, R"({"prompt": "x", "max_tokens": 18446744073709551615})", "max_tokens", ""},
      {Endpoint::completions, R"({"prompt": "x", "temperature": 3})", "temperature", ""},
      {Endpoint::completions, R"({"prompt": "x", "temperature": "hot"})", "temperature", ""},
      {Endpoint::completions, R"({"prompt": "x", "top_p": -0.1})", "top_p", ""},
      {Endpoint::completions, R"({"prompt": "x", "top_k": -1})", "top_k", ""},
      {Endpoint::completions, R"({"prompt": "x", "seed": "7"})", "seed", ""},
      {Endpoint::completions, R"({"prompt": "x", "stop": ["a", "b", "c", "d", "e"]})", "stop", ""},
      {Endpoint::completions, R"({"prompt": "x", "stop": [""]})", "stop", ""},
      {Endpoint::completions, R"({"prompt": "x", "stop": [1]})", "stop", ""},
      {Endpoint::completions, R"({"prompt": "x", "stream": "yes"})", "stream", ""},
      {Endpoint::completions, R"({"prompt": "x", "model": 3})", "model", ""},
      {Endpoint::completions, R"({"prompt": "x", "presence_penalty": 0.5})", "presence_penalty", "unsupported_value"},
      {Endpoint::completions, R"({"prompt": "x", "logprobs": true})", "logprobs", "unsupported_value"},
  };
  for (const auto& c : cases) {
    ApiError e = refusal(c.ep, c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << ": " << e.what();
    EXPECT_EQ(e.code, c.code) << c.body;
    json b = error_body(e);
    EXPECT_TRUE(b["error"]["message"].is_string() && !b["error"]["message"].get<std::string>().empty());
  }
}

TEST(ServeApi, ChunksAndResponsesHaveOpenAIsShape) {
  CompletionMeta chat{Endpoint::chat, "chatcmpl-1", "tiny", 42};
  json first = chunk_json(chat, "", true);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  std::string reason = "length";
  Usage u{5, 3, 2};
  json last = chunk_json(chat, "", false, &reason, &u);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(last["choices"][0]["delta"], json::object());
  EXPECT_EQ(last["usage"]["total_tokens"], 8);
  EXPECT_EQ(last["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
  EXPECT_FALSE(last.contains("timings"));  // no times known
  json whole = completion_json(chat, "hello", "stop", u);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_FALSE(whole.contains("timings"));
  Usage timed{5, 3, 2, 1.5, 20.0, 40.0};
  json t = chunk_json(chat, "", false, &reason, &timed)["timings"];
  EXPECT_EQ(t["queued_ms"], 1.5);
  EXPECT_EQ(t["prompt_n"], 3);  // 5 less the 2 cached
  EXPECT_EQ(t["prompt_ms"], 20.0);
  EXPECT_DOUBLE_EQ(t["prompt_per_second"].get<double>(), 150.0);
  EXPECT_EQ(t["predicted_n"], 3);
  EXPECT_DOUBLE_EQ(t["predicted_per_second"].get<double>(), 50.0);  // the 2 tokens after the first in 40 ms
  EXPECT_EQ(completion_json(chat, "hello", "stop", timed)["timings"], t);
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "hello");
  CompletionMeta text{Endpoint::completions, "cmpl-1", "tiny", 42};
  EXPECT_EQ(chunk_json(text, "ab", false)["choices"][0]["text"], "ab");
  EXPECT_EQ(completion_json(text, "ab", "stop", u)["object"], "text_completion");
  std::string frame = sse(json{{"a", 1}});
  EXPECT_EQ(frame, "data: {\"a\":1}\n\n");
}

TEST(ServeApi, StopStringsAcrossTokenBoundaries) {
  StopMatcher m({"END", "\n\n"});
  std::string out;
  for (const char* piece : {"Hello E", "N", "o wor", "ld\n", "\nmore"}) out += m.push(piece);
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(out, "Hello ENo world");
  EXPECT_EQ(m.push("x"), "");

  StopMatcher held({"END"});
  EXPECT_EQ(held.push("abcE"), "abc");  // "E" could start END: held back
  EXPECT_EQ(held.push("N"), "");
  EXPECT_EQ(held.push("x"), "ENx");     // it did not
  EXPECT_EQ(held.push("EN"), "");
  EXPECT_EQ(held.flush(), "EN");        // the end: what was held comes out
  EXPECT_FALSE(held.stopped());

  StopMatcher first({"bc", "abcd"});
  EXPECT_EQ(first.push("xabcd"), "x");  // the match that starts first wins
  StopMatcher none({});
  EXPECT_EQ(none.push("abc"), "abc");
}

TEST(ServeApi, ParserSurvivesMutatedBodies) {
  const std::string seeds[] = {
      R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":7,"temperature":0.5,"stop":["a","bc"],"seed":3,"stream":true})",
      R"({"prompt":[1,2,3],"max_tokens":16,"top_k":4,"top_p":0.9,"min_p":0.1,"n":1,"stop":"x"})",
  };
  static const char* kTokens[] = {"-1", "0", "18446744073709551616", "1e308", "null", "[]", "{}", "\"\"", "true",
                                  "[{\"type\":\"text\",\"text\":\"q\"}]", "9", "2.5", "\"\\ud800\""};
  std::mt19937_64 r(777);
  for (int i = 0; i < 6000; ++i) {
    std::string s = seeds[i % 2];
    for (int k = 0, n = 1 + int(r() % 3); k < n && !s.empty(); ++k) {
      size_t at = r() % s.size();
      switch (r() % 5) {
        case 0: s[at] = char(r()); break;
        case 1: s.erase(at, 1 + r() % 8); break;
        case 2: s.resize(at); break;
        default: s.insert(at, kTokens[r() % std::size(kTokens)]); break;
      }
    }
    fuzz_request(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
}

}  // namespace
}  // namespace bs::serve
