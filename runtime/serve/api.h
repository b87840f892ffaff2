// The OpenAI-compatible request and response shapes of `blueshift serve`: parsing and checking a
// request body (untrusted input: every field's type and range, named in the error), and the JSON the
// server sends back (whole responses, server-sent-event chunks, errors).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bs::serve {

// An error the client caused (or a server refusal), as OpenAI reports it:
//   HTTP <status> {"error": {"message", "type", "param", "code"}}
struct ApiError : std::runtime_error {
  ApiError(int status, std::string type, std::string code, std::string param, const std::string& message)
      : std::runtime_error(message), status(status), type(std::move(type)), code(std::move(code)), param(std::move(param)) {}
  int status;
  std::string type, code, param;
};
nlohmann::json error_body(const ApiError& e);
// A 400 invalid_request_error about `param`.
[[noreturn]] void bad_request(const std::string& param, const std::string& message, const std::string& code = "");

enum class Endpoint { chat, completions };

// One checked request. Sampling fields keep OpenAI's defaults where the client leaves them out.
struct ApiRequest {
  Endpoint endpoint = Endpoint::chat;
  std::string model;                    // empty: not given
  nlohmann::ordered_json messages;      // chat: [{role, content (string)}], content parts joined
  std::string prompt;                   // completions: text ...
  std::vector<int32_t> prompt_tokens;   // ... or token ids (then prompt is empty)
  std::optional<int32_t> max_tokens;    // absent: until the end of the context
  float temperature = 1.0f, top_p = 1.0f, min_p = 0.0f;
  int32_t top_k = 0;
  std::optional<uint64_t> seed;         // absent: the server draws one
  std::vector<std::string> stop;        // at most 4, none empty
  bool stream = false;
  bool ignore_eos = false;              // extension (llama-server's name), for benchmarks
};

// Parses and checks a POST body for `endpoint`; throws ApiError (400) naming the field.
ApiRequest parse_request(Endpoint endpoint, const std::string& body);

// Why a completion ended: "stop" (end of sequence or a stop string), "length" (max_tokens or the context).
struct Usage {
  int32_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  // Server-side times (ms, negative: not known): waiting in the queue, from the start of work to the first token
  // (the prefill), and from the first token to the last. They go out as llama-server's "timings" object.
  double queued_ms = -1, prompt_ms = -1, predicted_ms = -1;
};
nlohmann::json usage_json(const Usage& u);
// {"queued_ms", "prompt_n", "prompt_ms", "prompt_per_second", "predicted_n", "predicted_ms", "predicted_per_second"}:
// prompt_n counts the tokens prefilled (the prompt less the cached prefix); predicted_per_second the tokens after
// the first over predicted_ms.
nlohmann::json timings_json(const Usage& u);

// What every response and chunk of one completion shares.
struct CompletionMeta {
  Endpoint endpoint;
  std::string id, model;
  int64_t created = 0;
};
// The whole (stream: false) response.
nlohmann::json completion_json(const CompletionMeta& m, const std::string& text, const std::string& finish_reason,
                               const Usage& u);
// One stream chunk: `text` as the delta; the first chat chunk also carries the role; the last has the
// finish reason and the usage. The last chunk and the whole response also carry "timings" where `u` has them.
nlohmann::json chunk_json(const CompletionMeta& m, const std::string& text, bool first,
                          const std::string* finish_reason = nullptr, const Usage* u = nullptr);
// "data: <json>\n\n" (the server-sent-event frame).
std::string sse(const nlohmann::json& j);

}  // namespace bs::serve
