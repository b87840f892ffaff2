// blueshift generate: stream tokens from a model. Text to stdout as tokens arrive (or JSON lines with
// --json); a stats line to stderr.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/generate_common.h"
#include "cli/util.h"

namespace {

struct Args {
  std::string model, prompt, prompt_tokens, system;
  bool chat = false, json = false;
  std::string kernels = "glsl";
  bs::cli::SamplingFlags flags;
};

void run(Args& a) {
  auto lm = bs::cli::load_for_generation(a.model, a.flags.ctx, 256, bs::gpu::parse_kernel_source(a.kernels), {},
                                         bs::cli::parse_precision(a.flags.precision), a.flags.deterministic);
  std::vector<int32_t> ids;
  if (!a.prompt_tokens.empty()) {
    ids = bs::cli::parse_ids(a.prompt_tokens, "--prompt-tokens");
  } else {
    if (!lm.tokenizer) bs::fail("{}: no tokenizer.json; pass --prompt-tokens instead of --prompt", a.model);
    std::string text = a.prompt;
    if (a.chat) {
      nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
      if (!a.system.empty()) msgs.push_back({{"role", "system"}, {"content", a.system}});
      msgs.push_back({{"role", "user"}, {"content", a.prompt}});
      text = lm.tokenizer->apply_chat_template(msgs, true);
      ids = lm.tokenizer->encode(text, false);
    } else {
      ids = lm.tokenizer->encode(text, true);
    }
  }
  bs::generate::Session session(*lm.model);
  std::optional<bs::tok::StreamDecoder> dec;
  if (lm.tokenizer) dec.emplace(*lm.tokenizer, true);
  auto st = session.generate(ids, a.flags.opts, [&](int32_t id, double t_ms) {
    std::string text = dec ? dec->push(id) : "";
    if (a.json) {
      nlohmann::json j = {{"id", id}, {"text", text}, {"t_ms", t_ms}};
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else if (dec) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::printf("%d ", id);
    }
    std::fflush(stdout);
    return true;
  });
  if (dec && !a.json) {
    auto rest = dec->flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
  }
  if (!a.json) std::printf("\n");
  std::fflush(stdout);
  std::fprintf(stderr,
               "prompt %d tokens, generated %d tokens, TTFT %.1f ms, decode %.1f tok/s, submits %llu prefill + %llu "
               "decode, load %.2f s on %s\n",
               st.prompt_tokens, st.generated, st.ttft_ms, st.decode_tok_s(), (unsigned long long)st.prefill_submits,
               (unsigned long long)st.decode_submits, lm.load_s, lm.device->adapter().name.c_str());
}

bs::cli::Command generate_cmd{"generate", "Stream generated tokens from a model", [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "RDRR model directory (or Hugging Face checkpoint)")->required();
  auto* p = app.add_option("--prompt", a->prompt, "prompt text");
  auto* pt = app.add_option("--prompt-tokens", a->prompt_tokens, "prompt token ids, comma-separated");
  p->excludes(pt);
  app.add_flag("--chat", a->chat, "wrap the prompt in the model's chat template");
  app.add_option("--system", a->system, "system message (with --chat)");
  app.add_flag("--json", a->json, "one JSON line per token: {id, text, t_ms}");
  app.add_option("--kernels", a->kernels, "kernel set: glsl (embedded SPIR-V, default) or wgsl (the WGSL twins "
                 "compiled at load by the built-in WGSL front-end; decode path)");
  a->flags.add_to(app);
  app.callback([a, p, pt] {
    if (p->count() == 0 && pt->count() == 0) throw CLI::RequiredError("--prompt or --prompt-tokens");
    run(*a);
  });
}};

}  // namespace
