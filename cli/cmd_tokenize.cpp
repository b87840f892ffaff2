// blueshift tokenize (--model M | --tokenizer FILE) --text TEXT [--add-special] [--json]
// Prints the ids of TEXT, comma-separated (the form `detokenize --ids` and `generate
// --prompt-tokens` read), or with --json {"ids": [...], "tokens": [...]}.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer.h"

namespace {

struct Args {
  std::string model, tokenizer, text;
  bool add_special = false, json = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "model directory holding tokenizer.json (RDRR or Hugging Face)");
  app.add_option("--tokenizer", a->tokenizer, "a tokenizer.json file (tokenizer_config.json beside it is read too)");
  app.add_option("--text", a->text, "text to encode; '-' reads standard input")->required();
  app.add_flag("--add-special", a->add_special, "add BOS/EOS as the tokenizer's post-processor and config say");
  app.add_flag("--json", a->json, "print {\"ids\": [...], \"tokens\": [...]}");
  app.callback([a] {
    // Checked here rather than with CLI11's excludes() so the exit code is the usage code, 2.
    if (a->model.empty() == a->tokenizer.empty())
      bs::fail_kind(bs::ErrorKind::usage, "give exactly one of --model DIR or --tokenizer FILE");
    bs::tok::Tokenizer t =
        a->model.empty() ? bs::tok::Tokenizer::from_file(a->tokenizer) : bs::tok::Tokenizer::from_dir(a->model);
    std::string text = a->text;
    if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::vector<int32_t> ids = t.encode(text, a->add_special);
    if (a->json) {
      nlohmann::json tokens = nlohmann::json::array();
      for (int32_t id : ids) tokens.push_back(t.id_token(id).value_or(""));
      nlohmann::json out = {{"ids", ids}, {"tokens", tokens}, {"count", ids.size()}};
      std::puts(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return;
    }
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? "," : "") + std::to_string(ids[i]);
    std::puts(line.c_str());
  });
}

bs::cli::Command tokenize_cmd{"tokenize", "Encode text into token ids with a model's tokenizer", setup};

}  // namespace
