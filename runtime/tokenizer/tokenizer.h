// HF tokenizer.json tokenizers (BPE: byte-level like Llama 3 / Qwen2 / GPT-2, and SentencePiece-
// style with "▁" and byte fallback like Llama 2 / Mistral / Phi-3 / Gemma), with the settings of
// tokenizer_config.json (add_bos_token / add_eos_token, bos/eos tokens, chat_template).
//
//   auto tok = bs::tok::Tokenizer::from_dir("models/qwen2.5");  // tokenizer.json (+ config)
//   std::vector<int32_t> ids = tok.encode("Hello world", /*add_special=*/true);
//   std::string text = tok.decode(ids);
//   bs::tok::StreamDecoder out(tok);
//   for (int32_t id : generated) fputs(out.push(id).c_str(), stdout);  // never half a char
//
// Encoding follows HF tokenizers 0.2x exactly: added tokens are split out first (leftmost-
// longest, lstrip/rstrip/single_word/normalized as flagged), then normalizer, pre-tokenizer, BPE,
// and with add_special the post-processor's template (BOS/EOS). A Tokenizer is immutable after
// loading and safe to share between threads.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bs::tok {

class BpeModel;

class Tokenizer {
 public:
  // tokenizer.json; tokenizer_config.json (and chat_template.jinja) beside it are read when present.
  static Tokenizer from_file(const std::filesystem::path& tokenizer_json);
  // A model directory (HF or RDRR) holding tokenizer.json.
  static Tokenizer from_dir(const std::filesystem::path& dir);
  // `name` labels error messages. `config` (tokenizer_config.json) may be null.
  static Tokenizer from_json(const nlohmann::json& tokenizer, const nlohmann::json* config,
                             const std::string& name = "tokenizer.json");
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Invalid UTF-8 in `text` is replaced by U+FFFD first (HF only accepts valid strings).
  std::vector<int32_t> encode(std::string_view text, bool add_special = false) const;
  // Ids without a token are skipped, as HF does; the result is always valid UTF-8.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  // One past the largest id (vocab and added tokens).
  int32_t vocab_size() const;
  // The id of a token string (an added token's content or a vocab entry, e.g. "Ġthe").
  std::optional<int32_t> token_id(std::string_view token) const;
  // The token string of an id, or nullopt.
  std::optional<std::string> id_token(int32_t id) const;
  bool is_special(int32_t id) const;

  // From tokenizer_config.json (bos_token / eos_token); without one, BOS is the first token the
  // post-processor puts in front, and EOS is unknown.
  std::optional<int32_t> bos_id() const;
  std::optional<int32_t> eos_id() const;
  const std::string& bos_token() const;
  const std::string& eos_token() const;
  // The ids add_special puts before and after the text.
  const std::vector<int32_t>& prefix_ids() const;
  const std::vector<int32_t>& suffix_ids() const;

  // The Jinja chat template of tokenizer_config.json, empty when there is none.
  const std::string& chat_template() const;
  // Renders chat_template() with bos_token/eos_token filled in (see jinja.h). Throws bs::Error
  // when there is no template.
  std::string apply_chat_template(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                  const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

 private:
  Tokenizer();
  static Tokenizer build(const nlohmann::json& file, BpeModel&& model, const nlohmann::json* config,
                         const std::string& name);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Turns ids into text one at a time without ever returning part of a UTF-8 character, and
// without the per-token artifacts of decoding tokens alone (a SentencePiece decoder strips the
// leading space of the first token; here the previous token is kept as context so it does not).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool skip_special = false);
  // Text that became complete with this id (often empty while a character is pending).
  std::string push(int32_t id);
  // Whatever is still pending (an incomplete character comes out as U+FFFD); resets the stream.
  std::string flush();

 private:
  const Tokenizer* tok_;
  bool skip_special_;
  std::vector<int32_t> ids_;  // the ids printed last (context), then the pending ones
  size_t context_ = 0;        // how many of ids_ are context
  std::string prefix_;        // decode of the context
};

}  // namespace bs::tok
