// blueshift chat: interactive multi-turn chat with the model's own chat template. The KV cache is kept
// across turns (each turn only prefills what is new); Ctrl-C stops the current answer, not the program.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/generate_common.h"

namespace {

struct Args {
  std::string model, system;
  bs::cli::SamplingFlags flags;
};

std::atomic<bool> g_interrupted{false};
void on_sigint(int) { g_interrupted = true; }

void run(Args& a) {
  auto lm = bs::cli::load_for_generation(a.model, a.flags.ctx, 256, bs::gpu::KernelSource::glsl, {},
                                         bs::cli::parse_precision(a.flags.precision), a.flags.deterministic);
  if (!lm.tokenizer) bs::fail("{}: chat needs tokenizer.json in the model directory", a.model);
  auto& tok = *lm.tokenizer;
  if (tok.chat_template().empty()) bs::fail("{}: tokenizer_config.json has no chat_template", a.model);
  bs::generate::Session session(*lm.model);
  nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
  if (!a.system.empty()) msgs.push_back({{"role", "system"}, {"content", a.system}});
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, nullptr);
  bool tty = isatty(0);
  std::string rendered_so_far;  // the template's text for everything already in the KV cache
  std::fprintf(stderr, "chat with %s on %s (Ctrl-C stops an answer, Ctrl-D quits)\n", a.model.c_str(),
               lm.device->adapter().name.c_str());
  for (;;) {
    if (tty) std::fprintf(stdout, "> "), std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    msgs.push_back({{"role", "user"}, {"content", line}});
    std::string full = tok.apply_chat_template(msgs, true);
    // Only the new part of the conversation is prefilled; the template renders earlier turns the same way.
    std::string delta = full.compare(0, rendered_so_far.size(), rendered_so_far) == 0 ? full.substr(rendered_so_far.size()) : full;
    if (delta.size() == full.size() && !rendered_so_far.empty()) session.reset();
    auto ids = tok.encode(delta, rendered_so_far.empty());
    bs::tok::StreamDecoder dec(tok, true);
    std::vector<int32_t> answer;
    g_interrupted = false;
    auto st = session.generate(ids, a.flags.opts, [&](int32_t id, double) {
      answer.push_back(id);
      auto text = dec.push(id);
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      return !g_interrupted.load();
    });
    auto rest = dec.flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::printf("\n");
    std::fflush(stdout);
    if (g_interrupted) std::fprintf(stderr, "[stopped]\n");
    std::string reply = tok.decode(answer, true);
    msgs.push_back({{"role", "assistant"}, {"content", reply}});
    rendered_so_far = full + tok.decode(answer, false);
    std::fprintf(stderr, "[%d tokens, %.1f tok/s, context %d]\n", st.generated, st.decode_tok_s(), session.position());
  }
}

bs::cli::Command chat_cmd{"chat", "Interactive multi-turn chat (model's chat template, KV cache kept)", [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "RDRR model directory (or Hugging Face checkpoint)")->required();
  app.add_option("--system", a->system, "system message");
  a->flags.add_to(app);
  app.callback([a] { run(*a); });
}};

}  // namespace
