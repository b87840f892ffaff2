// The stages of an HF tokenizer.json pipeline around the BPE model, built from their JSON:
//   normalizer      text -> text           (NFC, Prepend "▁", Replace " " -> "▁", ...)
//   pre_tokenizer   pieces -> finer pieces  (Split by regex, ByteLevel, Metaspace, Digits, ...)
//   decoder         tokens -> text          (ByteLevel, Replace, ByteFallback, Fuse, Strip, ...)
// Each follows the semantics of HF tokenizers 0.2x, including its quirks (which are named where
// they are implemented). An unknown "type" is an error naming the field, never a silent no-op.
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "runtime/tokenizer/regex.h"

namespace bs::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& s) const = 0;
};

// A piece of text on its way to the model. `first` marks the piece that starts at offset 0 of
// the input (Metaspace's prepend_scheme "first" looks at it).
struct Piece {
  std::string text;
  bool first = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `pieces` by their splits; empty pieces are dropped (as HF does after every split).
  virtual void split(std::vector<Piece>& pieces) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // HF's decode_chain: a list of token strings in, a (usually shorter) list out.
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
};

// `where` names the JSON path for error messages ("tokenizer.json: normalizer.normalizers[1]").
// A null JSON value yields nullptr (no stage).
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& j, const std::string& where);
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& j, const std::string& where);
std::unique_ptr<Decoder> make_decoder(const nlohmann::json& j, const std::string& where);

// Helpers the stages share with the tokenizer loader.
const nlohmann::json& json_field(const nlohmann::json& j, const char* key, const std::string& where);
std::string json_string(const nlohmann::json& j, const char* key, const std::string& where);
bool json_bool(const nlohmann::json& j, const char* key, bool fallback, const std::string& where);
// {"String": "..."} or {"Regex": "..."}, the two forms of a split/replace pattern.
Regex json_pattern(const nlohmann::json& j, const std::string& where);

}  // namespace bs::tok
