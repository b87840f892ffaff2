// A small byte-level BPE trainer, and the project's own demo tokenizer built with it.
//
// The builtin tokenizer lets `blueshift synth` produce a complete model (weights + tokenizer +
// chat template) without downloading anything. It is trained on a few KB of English written for
// this project (builtin_corpus()), so it segments English sensibly and round-trips any UTF-8
// through its 256 byte tokens.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bs::tok {

struct TrainOptions {
  // Added tokens at ids 0, 1, 2, ...; the first two are BOS and EOS.
  std::vector<std::string> special_tokens = {"<|bos|>", "<|eos|>", "<|start|>"};
  // The pre-tokenizer split (Llama 3's pattern).
  std::string pattern =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
};

// Trains byte-level BPE on `corpus` and returns an HF tokenizer.json of exactly `vocab_size`
// ids: the special tokens, the 256 byte tokens, then merges by frequency (ties broken by the
// pair's bytes, so the result is deterministic). When the corpus runs out of pairs to merge,
// the rest of the ids are special "<|reserved_N|>" tokens. Throws bs::Error(usage) when
// vocab_size is smaller than the special and byte tokens.
nlohmann::json train_byte_bpe(std::string_view corpus, int vocab_size, const TrainOptions& options = {});

// The tokenizer_config.json that goes with a trained tokenizer: add_bos_token, bos/eos tokens,
// and a simple chat template:
//   <|bos|><|start|>user\nHi<|eos|>\n<|start|>assistant\n
nlohmann::json builtin_tokenizer_config(const TrainOptions& options = {});

// A few KB of English prose written for this project.
std::string_view builtin_corpus();

// Ids of the builtin tokenizer's BOS and EOS (the first two special tokens).
constexpr int32_t kBuiltinBosId = 0;
constexpr int32_t kBuiltinEosId = 1;

// Trains on builtin_corpus() and writes DIR/tokenizer.json and DIR/tokenizer_config.json
// (creating DIR). `blueshift synth` calls this for its default tokenizer.
void write_builtin_tokenizer(const std::filesystem::path& dir, int vocab_size);

}  // namespace bs::tok
