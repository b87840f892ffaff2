// Writing HF tokenizer.json files: the byte-level BPE layout (GPT-2 / Llama 3 / Qwen style) that both the
// builtin trainer and the GGUF importer produce, so the two cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bs::tok {

struct ByteLevelBpeJson {
  nlohmann::json added_tokens = nlohmann::json::array();  // HF added_tokens entries
  std::string split_pattern;                               // the pre-tokenizer's Split regex
  nlohmann::json post_processor = nullptr;                 // e.g. TemplateProcessing adding BOS, or null
  nlohmann::json unk_token = nullptr;
  bool ignore_merges = false;
  nlohmann::json vocab = nlohmann::json::object();  // token text -> id
  nlohmann::json merges = nlohmann::json::array();  // "a b" strings
};

// A tokenizer.json: Split(pattern, Isolated) then ByteLevel pre-tokenization, a ByteLevel decoder, BPE model.
nlohmann::json byte_level_bpe_json(const ByteLevelBpeJson& spec);

// A TemplateProcessing post-processor that puts `bos` (id `bos_id`) before each sequence.
nlohmann::json bos_template_processing(const std::string& bos, int64_t bos_id);

}  // namespace bs::tok
