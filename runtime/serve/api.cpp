#include "runtime/serve/api.h"

#include <cmath>
#include <fmt/format.h>

namespace bs::serve {

using nlohmann::json;

nlohmann::json error_body(const ApiError& e) {
  json err = {{"message", e.what()}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return {{"error", err}};
}

void bad_request(const std::string& param, const std::string& message, const std::string& code) {
  throw ApiError(400, "invalid_request_error", code, param, message);
}

static const char* type_name(const json& v) { return v.type_name(); }

// Typed field readers: absent or null leaves the default; a wrong type or range names the field.
static bool get_bool(const json& b, const char* k, bool def) {
  if (!b.contains(k) || b[k].is_null()) return def;
  if (!b[k].is_boolean()) bad_request(k, fmt::format("'{}' must be a boolean, got {}", k, type_name(b[k])));
  return b[k].get<bool>();
}

static double get_number(const json& b, const char* k, double def, double lo, double hi) {
  if (!b.contains(k) || b[k].is_null()) return def;
  if (!b[k].is_number()) bad_request(k, fmt::format("'{}' must be a number, got {}", k, type_name(b[k])));
  double v = b[k].get<double>();
  if (!std::isfinite(v) || v < lo || v > hi)
    bad_request(k, fmt::format("'{}' must be in [{}, {}], got {}", k, lo, hi, v));
  return v;
}

static std::optional<int64_t> get_int(const json& b, const char* k, int64_t lo, int64_t hi) {
  if (!b.contains(k) || b[k].is_null()) return std::nullopt;
  const json& v = b[k];
  if (!v.is_number_integer()) bad_request(k, fmt::format("'{}' must be an integer, got {}", k, type_name(v)));
  bool in_range = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)
                      ? false
                      : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
  if (!in_range)
    bad_request(k, fmt::format("'{}' must be in [{}, {}], got {}", k, lo, hi, v.dump()));
  return v.get<int64_t>();
}

// A message's content: a string, or OpenAI's array of parts of which only text parts are supported.
static std::string content_text(const json& c, size_t i) {
  std::string param = fmt::format("messages[{}].content", i);
  if (c.is_string()) return c.get<std::string>();
  if (c.is_null()) return "";
  if (!c.is_array()) bad_request(param, fmt::format("'{}' must be a string or an array of parts, got {}", param, type_name(c)));
  std::string out;
  for (size_t p = 0; p < c.size(); ++p) {
    const json& part = c[p];
    if (!part.is_object() || part.value("type", json()) != "text" || !part.contains("text") || !part["text"].is_string())
      bad_request(param, fmt::format("'{}[{}]': only {{\"type\": \"text\", \"text\": string}} parts are supported", param, p));
    out += part["text"].get<std::string>();
  }
  return out;
}

ApiRequest parse_request(Endpoint endpoint, const std::string& body) {
  json b = json::parse(body, nullptr, false);
  if (b.is_discarded()) bad_request("", "could not parse the request body as JSON");
  if (!b.is_object()) bad_request("", fmt::format("the request body must be a JSON object, got {}", type_name(b)));
  ApiRequest r;
  r.endpoint = endpoint;
  if (b.contains("model") && !b["model"].is_null()) {
    if (!b["model"].is_string()) bad_request("model", fmt::format("'model' must be a string, got {}", type_name(b["model"])));
    r.model = b["model"].get<std::string>();
  }
  if (endpoint == Endpoint::chat) {
    if (!b.contains("messages")) bad_request("messages", "'messages' is required");
    const json& m = b["messages"];
    if (!m.is_array() || m.empty()) bad_request("messages", "'messages' must be a non-empty array");
    r.messages = nlohmann::ordered_json::array();
    for (size_t i = 0; i < m.size(); ++i) {
      if (!m[i].is_object() || !m[i].contains("role") || !m[i]["role"].is_string())
        bad_request(fmt::format("messages[{}]", i), fmt::format("'messages[{}]' must be an object with a string 'role'", i));
      std::string role = m[i]["role"].get<std::string>();
      if (role != "system" && role != "user" && role != "assistant" && role != "developer")
        bad_request(fmt::format("messages[{}].role", i),
                    fmt::format("'messages[{}].role' must be system, developer, user or assistant, got \"{}\"", i, role));
      r.messages.push_back({{"role", role == "developer" ? "system" : role}, {"content", content_text(m[i].value("content", json()), i)}});
    }
  } else {
    if (!b.contains("prompt")) bad_request("prompt", "'prompt' is required");
    const json& p = b["prompt"];
    if (p.is_string()) {
      r.prompt = p.get<std::string>();
    } else if (p.is_array() && p.size() == 1 && p[0].is_string()) {
      r.prompt = p[0].get<std::string>();
    } else if (p.is_array() && !p.empty() && p[0].is_number_integer()) {
      for (const json& t : p) {
        if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX)
          bad_request("prompt", "'prompt' as token ids must be an array of non-negative integers");
        r.prompt_tokens.push_back(t.get<int32_t>());
      }
    } else {
      bad_request("prompt", "'prompt' must be a string, an array of one string, or an array of token ids");
    }
    if (r.prompt.empty() && r.prompt_tokens.empty()) bad_request("prompt", "'prompt' is empty");
  }
  if (auto n = get_int(b, "n", INT32_MIN, INT32_MAX); n && *n != 1)
    bad_request("n", fmt::format("'n' must be 1 (one choice per request), got {}", *n), "unsupported_value");
  // max_completion_tokens is the newer chat name of max_tokens.
  auto mt = get_int(b, "max_tokens", 1, INT32_MAX);
  if (auto mc = get_int(b, "max_completion_tokens", 1, INT32_MAX)) mt = mc;
  if (mt) r.max_tokens = int32_t(*mt);
  r.temperature = float(get_number(b, "temperature", 1.0, 0.0, 2.0));
  r.top_p = float(get_number(b, "top_p", 1.0, 0.0, 1.0));
  r.min_p = float(get_number(b, "min_p", 0.0, 0.0, 1.0));
  r.top_k = int32_t(get_int(b, "top_k", 0, INT32_MAX).value_or(0));
  if (b.contains("seed") && !b["seed"].is_null()) {
    const json& s = b["seed"];
    if (!s.is_number_integer()) bad_request("seed", fmt::format("'seed' must be an integer, got {}", type_name(s)));
    r.seed = s.is_number_unsigned() ? s.get<uint64_t>() : uint64_t(s.get<int64_t>());
  }
  if (b.contains("stop") && !b["stop"].is_null()) {
    const json& s = b["stop"];
    if (s.is_string()) {
      r.stop.push_back(s.get<std::string>());
    } else if (s.is_array() && s.size() <= 4) {
      for (const json& e : s) {
        if (!e.is_string()) bad_request("stop", "'stop' must be a string or an array of at most 4 strings");
        r.stop.push_back(e.get<std::string>());
      }
    } else {
      bad_request("stop", "'stop' must be a string or an array of at most 4 strings");
    }
    for (const auto& s2 : r.stop)
      if (s2.empty()) bad_request("stop", "'stop' strings must not be empty");
  }
  r.stream = get_bool(b, "stream", false);
  r.ignore_eos = get_bool(b, "ignore_eos", false);
  for (const char* k : {"frequency_penalty", "presence_penalty"})
    if (get_number(b, k, 0.0, -2.0, 2.0) != 0.0)
      bad_request(k, fmt::format("'{}' is not supported (only 0)", k), "unsupported_value");
  if (get_bool(b, "logprobs", false) || (b.contains("logprobs") && b["logprobs"].is_number_integer()))
    bad_request("logprobs", "'logprobs' is not supported", "unsupported_value");
  if (b.contains("tools") && !b["tools"].is_null() && !(b["tools"].is_array() && b["tools"].empty()))
    bad_request("tools", "'tools' is not supported", "unsupported_value");
  return r;
}

nlohmann::json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

nlohmann::json timings_json(const Usage& u) {
  const int32_t prompt_n = u.prompt_tokens - u.cached_tokens, after_first = std::max(0, u.completion_tokens - 1);
  auto per_second = [](double n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; };
  return {{"queued_ms", u.queued_ms},
          {"prompt_n", prompt_n},
          {"prompt_ms", u.prompt_ms},
          {"prompt_per_second", per_second(prompt_n, u.prompt_ms)},
          {"predicted_n", u.completion_tokens},
          {"predicted_ms", u.predicted_ms},
          {"predicted_per_second", per_second(after_first, u.predicted_ms)}};
}

static json base(const CompletionMeta& m, bool chunk) {
  const char* object = m.endpoint == Endpoint::chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", m.id}, {"object", object}, {"created", m.created}, {"model", m.model}};
}

nlohmann::json completion_json(const CompletionMeta& m, const std::string& text, const std::string& finish_reason,
                               const Usage& u) {
  json j = base(m, false);
  json choice = {{"index", 0}};
  if (m.endpoint == Endpoint::chat) choice["message"] = {{"role", "assistant"}, {"content", text}};
  else choice["text"] = text, choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason;
  j["choices"] = json::array({choice});
  j["usage"] = usage_json(u);
  if (u.queued_ms >= 0) j["timings"] = timings_json(u);
  return j;
}

nlohmann::json chunk_json(const CompletionMeta& m, const std::string& text, bool first, const std::string* finish_reason,
                          const Usage* u) {
  json j = base(m, true);
  json choice = {{"index", 0}};
  if (m.endpoint == Endpoint::chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (first && !finish_reason)) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] = finish_reason ? json(*finish_reason) : json(nullptr);
  j["choices"] = json::array({choice});
  if (u) j["usage"] = usage_json(*u);
  if (u && u->queued_ms >= 0) j["timings"] = timings_json(*u);
  return j;
}

std::string sse(const nlohmann::json& j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace bs::serve
