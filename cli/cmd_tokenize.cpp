// blueshift tokenize (--model M | --tokenizer FILE) --text TEXT [--add-special] [--json]
// Prints the ids of TEXT, comma-separated (the form `detokenize --ids` and `generate
// --prompt-tokens` read), or with --json {"ids": [...], "tokens": [...]}.
// blueshift tokenize (--model M | --tokenizer FILE) --chat MESSAGES.json [--add-generation-prompt] [--json]
// Prints the prompt the chat template renders for the messages, exactly (as transformers'
// apply_chat_template or llama.cpp's --verbose-prompt would show it), or with --json the text and
// its ids: what `generate --chat` would feed the model.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer.h"

namespace {

struct Args {
  std::string model, tokenizer, text, chat;
  bool add_special = false, add_generation_prompt = false, json = false;
};

std::string read_input(const std::string& path) {
  if (path == "-") return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  std::ifstream f(path, std::ios::binary);
  if (!f) bs::fail("{}: cannot read the messages file", path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A chat request: a JSON array of {"role", "content", ...} messages, or an object holding one under
// "messages" (the form of the `chat` cases in HF's expected files, and of an OpenAI request body).
// The object's other keys are the template's other variables, as transformers' apply_chat_template
// (messages, tools=..., add_generation_prompt=..., **kwargs) passes them: tools, documents,
// enable_thinking, ... Key order is kept: a template that iterates a message or prints it with
// tojson sees the keys as written.
struct ChatRequest {
  nlohmann::ordered_json messages;
  nlohmann::ordered_json vars = nlohmann::ordered_json::object();
  bool add_generation_prompt = false;
};

ChatRequest read_chat_request(const std::string& path) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_input(path), nullptr, false);
  if (j.is_discarded()) bs::fail("{}: not valid JSON", path);
  ChatRequest req;
  if (j.is_object()) {
    if (!j.contains("messages"))
      bs::fail("{}: expected an array of messages or an object with \"messages\"", path);
    for (auto& [key, value] : j.items()) {
      if (key == "messages") continue;
      if (key == "add_generation_prompt") {
        if (!value.is_boolean())
          bs::fail("{}: \"add_generation_prompt\": expected a boolean, got {}", path, value.type_name());
        req.add_generation_prompt = value.get<bool>();
        continue;
      }
      req.vars[key] = value;
    }
    j = std::move(j["messages"]);
  }
  if (!j.is_array()) bs::fail("{}: \"messages\": expected an array, got {}", path, j.type_name());
  for (size_t i = 0; i < j.size(); ++i)
    if (!j[i].is_object())
      bs::fail("{}: messages[{}]: expected an object, got {}", path, i, j[i].type_name());
  req.messages = std::move(j);
  return req;
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json token_strings(const bs::tok::Tokenizer& t, const std::vector<int32_t>& ids) {
  nlohmann::json tokens = nlohmann::json::array();
  for (int32_t id : ids) tokens.push_back(t.id_token(id).value_or(""));
  return tokens;
}

void run_chat(const Args& a, const bs::tok::Tokenizer& t) {
  ChatRequest req = read_chat_request(a.chat);
  std::string text =
      t.apply_chat_template(req.messages, a.add_generation_prompt || req.add_generation_prompt, req.vars);
  if (!a.json) {
    // Exactly the rendered text, no newline added: a template's trailing newline is part of the prompt.
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  // The template writes BOS itself where the model wants one, so no special tokens are added (as
  // apply_chat_template(tokenize=True) and generate --chat do).
  std::vector<int32_t> ids = t.encode(text, false);
  nlohmann::json out = {
      {"text", text}, {"ids", ids}, {"tokens", token_strings(t, ids)}, {"count", ids.size()}};
  std::puts(dump(out).c_str());
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "model directory holding tokenizer.json (RDRR or Hugging Face)");
  app.add_option("--tokenizer", a->tokenizer,
                 "a tokenizer.json file (tokenizer_config.json beside it is read too)");
  app.add_option("--text", a->text, "text to encode; '-' reads standard input");
  app.add_option(
      "--chat", a->chat,
      "a JSON file of messages ([{\"role\": ..., \"content\": ...}, ...] or {\"messages\": [...], ...} whose "
      "other keys (tools, enable_thinking, ...) are template variables; '-' reads standard input): print the "
      "prompt the model's chat template renders for them");
  app.add_flag("--add-generation-prompt", a->add_generation_prompt,
               "with --chat: end with the template's assistant header, as generate --chat does");
  app.add_flag("--add-special", a->add_special,
               "add BOS/EOS as the tokenizer's post-processor and config say");
  app.add_flag("--json", a->json,
               "print {\"ids\": [...], \"tokens\": [...]} (with --chat also \"text\", the rendered prompt)");
  app.callback([a, &app] {
    // Checked here rather than with CLI11's excludes() so the exit code is the usage code, 2.
    if (a->model.empty() == a->tokenizer.empty())
      bs::fail_kind(bs::ErrorKind::usage, "give exactly one of --model DIR or --tokenizer FILE");
    const bool chat = app.count("--chat") > 0;
    if (chat == (app.count("--text") > 0))
      bs::fail_kind(bs::ErrorKind::usage, "give exactly one of --text TEXT or --chat MESSAGES.json");
    if (chat && a->add_special)
      bs::fail_kind(bs::ErrorKind::usage,
                    "--add-special does not apply to --chat: the template places BOS itself");
    if (!chat && a->add_generation_prompt)
      bs::fail_kind(bs::ErrorKind::usage, "--add-generation-prompt applies to --chat only");
    bs::tok::Tokenizer t = a->model.empty() ? bs::tok::Tokenizer::from_file(a->tokenizer)
                                            : bs::tok::Tokenizer::from_dir(a->model);
    if (chat) return run_chat(*a, t);
    std::string text = a->text;
    if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::vector<int32_t> ids = t.encode(text, a->add_special);
    if (a->json) {
      nlohmann::json out = {{"ids", ids}, {"tokens", token_strings(t, ids)}, {"count", ids.size()}};
      std::puts(dump(out).c_str());
      return;
    }
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? "," : "") + std::to_string(ids[i]);
    std::puts(line.c_str());
  });
}

bs::cli::Command tokenize_cmd{
    "tokenize",
    "Encode text into token ids with a model's tokenizer, or show the prompt its chat "
    "template renders for a list of messages",
    setup};

}  // namespace
