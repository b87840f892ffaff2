// Fuzz target: an OpenAI request body through parse_request (both endpoints), then the response JSON
// built from what was accepted. Built as a libFuzzer binary with -DBLUESHIFT_FUZZ=ON (clang);
// test_api.cpp runs the same function on deterministic mutations.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/serve/api.h"
#include "runtime/serve/stop.h"

int fuzz_request(const uint8_t* data, size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  for (auto ep : {bs::serve::Endpoint::chat, bs::serve::Endpoint::completions}) {
    try {
      auto r = bs::serve::parse_request(ep, body);
      // What was accepted holds the invariants the server relies on.
      if (r.stop.size() > 4 || (r.max_tokens && *r.max_tokens < 1) || r.temperature < 0 || r.top_p > 1) __builtin_trap();
      if (ep == bs::serve::Endpoint::chat && (!r.messages.is_array() || r.messages.empty())) __builtin_trap();
      if (ep == bs::serve::Endpoint::completions && r.prompt.empty() && r.prompt_tokens.empty()) __builtin_trap();
      bs::serve::StopMatcher m(r.stop);
      std::string out = m.push(body.substr(0, body.size() / 2));
      out += m.push(body.substr(body.size() / 2));
      out += m.flush();
      bs::serve::CompletionMeta meta{ep, "id", "m", 0};
      (void)bs::serve::sse(bs::serve::completion_json(meta, out, "stop", {}));
    } catch (const bs::serve::ApiError& e) {
      if (e.status != 400) __builtin_trap();
    }
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_request(data, size); }
#endif
