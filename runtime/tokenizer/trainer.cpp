#include "runtime/tokenizer/trainer.h"

#include <fstream>
#include <map>
#include <tuple>
#include <unordered_map>

#include "runtime/base/error.h"
#include "runtime/tokenizer/regex.h"
#include "runtime/tokenizer/tokenizer_json.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

using nlohmann::json;

namespace {

struct Word {
  std::vector<int32_t> syms;  // token ids
  int64_t count;
};

uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

void count_pairs(const Word& w, int64_t sign, std::unordered_map<uint64_t, int64_t>& counts) {
  for (size_t i = 0; i + 1 < w.syms.size(); ++i) {
    auto& c = counts[pair_key(w.syms[i], w.syms[i + 1])];
    c += sign * w.count;
  }
}

}  // namespace

json train_byte_bpe(std::string_view corpus, int vocab_size, const TrainOptions& opt) {
  const int32_t n_special = int32_t(opt.special_tokens.size());
  const int32_t first_byte = n_special;
  if (vocab_size < n_special + 256)
    fail_kind(ErrorKind::usage, "tokenizer vocab_size {} is too small: need at least {} ({} special + 256 bytes)",
              vocab_size, n_special + 256, n_special);
  if (!utf8_is_valid(corpus)) fail("training corpus is not valid UTF-8");

  // Words and their frequencies, in first-seen order so training is deterministic.
  Regex split(opt.pattern, "trainer pattern");
  std::map<std::string, size_t> index;
  std::vector<Word> words;
  for (auto [b, e] : split.find_all(corpus)) {
    std::string w(corpus.substr(b, e - b));
    auto [it, fresh] = index.emplace(w, words.size());
    if (fresh) {
      Word word{{}, 0};
      for (unsigned char c : w) word.syms.push_back(first_byte + c);
      words.push_back(std::move(word));
    }
    words[it->second].count++;
  }

  const auto& map = byte_level_map();
  std::vector<std::string> token(size_t(first_byte + 256));
  for (int c = 0; c < 256; ++c) token[size_t(first_byte + c)] = map.byte_to_utf8[size_t(c)];
  std::vector<std::pair<int32_t, int32_t>> merges;

  std::unordered_map<uint64_t, int64_t> counts;
  for (auto& w : words) count_pairs(w, 1, counts);
  while (int32_t(token.size()) < vocab_size) {
    // Most frequent pair; ties go to the pair whose bytes sort first.
    uint64_t best = 0;
    int64_t best_count = 0;
    for (auto& [k, c] : counts) {
      if (c <= 0) continue;
      if (c > best_count) {
        best = k;
        best_count = c;
      } else if (c == best_count) {
        const std::string &ka = token[k >> 32], &kb = token[k & 0xFFFFFFFF];
        const std::string &ba = token[best >> 32], &bb = token[best & 0xFFFFFFFF];
        if (std::tie(ka, kb) < std::tie(ba, bb)) best = k;
      }
    }
    if (best_count == 0) break;
    int32_t a = int32_t(best >> 32), b = int32_t(best & 0xFFFFFFFF), merged = int32_t(token.size());
    token.push_back(token[size_t(a)] + token[size_t(b)]);
    merges.emplace_back(a, b);
    for (auto& w : words) {
      bool has = false;
      for (size_t i = 0; i + 1 < w.syms.size() && !has; ++i) has = w.syms[i] == a && w.syms[i + 1] == b;
      if (!has) continue;
      count_pairs(w, -1, counts);
      std::vector<int32_t> out;
      for (size_t i = 0; i < w.syms.size(); ++i) {
        if (i + 1 < w.syms.size() && w.syms[i] == a && w.syms[i + 1] == b) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(w.syms[i]);
        }
      }
      w.syms = std::move(out);
      count_pairs(w, 1, counts);
    }
    counts.erase(best);
  }

  json added = json::array();
  auto add_special = [&](const std::string& content, int32_t id) {
    added.push_back({{"id", id}, {"content", content}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}});
  };
  for (int32_t i = 0; i < n_special; ++i) add_special(opt.special_tokens[size_t(i)], i);
  for (int32_t id = int32_t(token.size()), k = 0; id < vocab_size; ++id, ++k)
    add_special(fmt::format("<|reserved_{}|>", k), id);

  json vocab = json::object();
  for (int32_t id = first_byte; id < int32_t(token.size()); ++id) vocab[token[size_t(id)]] = id;
  json merge_list = json::array();
  for (auto [a, b] : merges) merge_list.push_back(token[size_t(a)] + " " + token[size_t(b)]);

  const std::string& bos = opt.special_tokens.at(0);
  ByteLevelBpeJson spec;
  spec.added_tokens = added;
  spec.split_pattern = opt.pattern;
  spec.post_processor = bos_template_processing(bos, 0);
  spec.vocab = vocab;
  spec.merges = merge_list;
  json tok = byte_level_bpe_json(spec);
  return tok;
}

json builtin_tokenizer_config(const TrainOptions& opt) {
  const std::string &bos = opt.special_tokens.at(0), &eos = opt.special_tokens.at(1);
  const std::string start = opt.special_tokens.size() > 2 ? opt.special_tokens[2] : std::string("<|start|>");
  // Roles are checked so a typo in a message fails loudly instead of rendering silently.
  std::string tmpl =
      "{{ bos_token }}{% for message in messages %}"
      "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
      "{{ raise_exception('unknown role: ' ~ message['role']) }}{% endif %}" +
      start + "{{ message['role'] }}\n{{ message['content'] | trim }}{{ eos_token }}\n{% endfor %}" +
      "{% if add_generation_prompt %}" + start + "assistant\n{% endif %}";
  return {{"add_bos_token", true},
          {"add_eos_token", false},
          {"bos_token", bos},
          {"eos_token", eos},
          {"pad_token", eos},
          {"clean_up_tokenization_spaces", false},
          {"model_max_length", 131072},
          {"tokenizer_class", "PreTrainedTokenizerFast"},
          {"chat_template", tmpl}};
}

void write_builtin_tokenizer(const std::filesystem::path& dir, int vocab_size) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("{}: cannot create directory: {}", dir.string(), ec.message());
  auto write = [&](const char* name, const json& j) {
    std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
    f << j.dump(1) << "\n";
    if (!f) fail("{}: cannot write", (dir / name).string());
  };
  write("tokenizer.json", train_byte_bpe(builtin_corpus(), vocab_size));
  write("tokenizer_config.json", builtin_tokenizer_config());
}

}  // namespace bs::tok
