// Streaming reader for tokenizer.json: the model's vocab and merges (hundreds of thousands of
// entries) go straight into BpeParts through nlohmann's SAX interface; only the small rest of
// the file becomes a JSON DOM. This halves the load time of a 128k-vocab tokenizer.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "runtime/tokenizer/bpe.h"

namespace bs::tok {

struct TokenizerFile {
  nlohmann::json rest;  // the whole file without model.vocab and model.merges
  BpeParts parts;       // model.vocab and model.merges
  bool has_vocab = false, has_merges = false;
};

// Throws bs::Error naming `name` for invalid JSON or malformed vocab/merges entries.
TokenizerFile read_tokenizer_file(std::string_view text, const std::string& name);

}  // namespace bs::tok
