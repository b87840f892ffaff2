// Writing HF tokenizer.json files: the byte-level BPE layout (GPT-2 / Llama 3 / Qwen style) that both the
// builtin trainer and the GGUF importer produce, so the two cannot drift apart, and SentencePiece's BPE
// layout (the GGUF importer's "llama" vocabularies).
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

// SentencePiece's BPE models as HF's converter writes them (Llama 2, Phi-3, Gemma): "▁" for spaces, a
// BPE with byte fallback (<0xNN> tokens) and a fused unknown token, no pre-tokenizer.
struct SentencePieceBpeJson {
  nlohmann::json added_tokens = nlohmann::json::array();
  bool add_space_prefix = true;  // SentencePiece's add_dummy_prefix: a "▁" before the text (Gemma: false)
  nlohmann::json post_processor = nullptr;
  nlohmann::json unk_token = nullptr;
  nlohmann::json vocab = nlohmann::json::object();
  nlohmann::json merges = nlohmann::json::array();
};
// Normalizer [Prepend "▁"] + Replace " " -> "▁"; decoder Replace "▁" -> " ", ByteFallback, Fuse [, Strip
// the prefix space]; BPE with byte_fallback and fuse_unk.
nlohmann::json sentencepiece_bpe_json(const SentencePieceBpeJson& spec);

// A TemplateProcessing post-processor that puts `bos` (id `bos_id`) before each sequence.
nlohmann::json bos_template_processing(const std::string& bos, int64_t bos_id);

}  // namespace bs::tok
