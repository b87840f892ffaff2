// blueshift detokenize (--model M | --tokenizer FILE) --ids 1,2,3 [--skip-special] [--json]
// Prints the text of the ids followed by a newline, or with --json {"text": ...}.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/util.h"
#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer.h"

namespace {

struct Args {
  std::string model, tokenizer, ids;
  bool skip_special = false, json = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "model directory holding tokenizer.json (RDRR or Hugging Face)");
  app.add_option("--tokenizer", a->tokenizer, "a tokenizer.json file (tokenizer_config.json beside it is read too)");
  app.add_option("--ids", a->ids, "comma-separated token ids, e.g. 9906,1917")->required();
  app.add_flag("--skip-special", a->skip_special, "leave out special tokens (BOS, EOS, chat markers)");
  app.add_flag("--json", a->json, "print {\"text\": ...}");
  app.callback([a] {
    // Checked here rather than with CLI11's excludes() so the exit code is the usage code, 2.
    if (a->model.empty() == a->tokenizer.empty())
      bs::fail_kind(bs::ErrorKind::usage, "give exactly one of --model DIR or --tokenizer FILE");
    bs::tok::Tokenizer t =
        a->model.empty() ? bs::tok::Tokenizer::from_file(a->tokenizer) : bs::tok::Tokenizer::from_dir(a->model);
    std::vector<int32_t> ids = bs::cli::parse_ids(a->ids, "--ids");
    for (int32_t id : ids)
      if (id < 0 || id >= t.vocab_size() || !t.id_token(id))
        bs::fail_kind(bs::ErrorKind::usage, "--ids: {} is not a token id of this tokenizer (vocabulary size {})", id,
                      t.vocab_size());
    std::string text = t.decode(ids, a->skip_special);
    if (a->json) {
      std::puts(nlohmann::json({{"text", text}}).dump().c_str());
      return;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
  });
}

bs::cli::Command detokenize_cmd{"detokenize", "Decode token ids into text with a model's tokenizer", setup};

}  // namespace
