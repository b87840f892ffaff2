// GGUF vocabulary (tokenizer.ggml.*) -> HF tokenizer.json + tokenizer_config.json (gguf_import.h).
// llama.cpp's converter writes a byte-level BPE vocabulary as: tokens in id order (their byte-level
// text), token_type per id (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte),
// merges as "left right" strings, and the name of the pre-tokenizer (whose regex lives in llama.cpp's
// source, not in the file): this turns that back into what the HF tokenizer.json said.
#include <map>

#include "rdrr/gguf_import.h"
#include "runtime/base/error.h"
#include "runtime/tokenizer/tokenizer_json.h"

namespace bs {

namespace {

using nlohmann::json;

constexpr const char* kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt2Split =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// tokenizer.ggml.pre -> the split regex of the HF tokenizer.json it came from, and ignore_merges
// (Llama 3's tokenizer.json sets it; LFM2's, with the same regex, does not).
struct PreTokenizer {
  std::string_view name;
  const char* split;
  bool ignore_merges;
};
constexpr PreTokenizer kPre[] = {
    {"llama-bpe", kLlama3Split, true}, {"llama3", kLlama3Split, true},
    {"llama-v3", kLlama3Split, true},  {"lfm2", kLlama3Split, false},
    {"qwen2", kQwen2Split, false},     {"deepseek-r1-qwen", kQwen2Split, false},
    {"gpt-2", kGpt2Split, false},      {"gpt2", kGpt2Split, false},
};

enum TokenType : int64_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

}  // namespace

std::optional<GgufTokenizer> gguf_tokenizer(const gguf::Header& h, const std::string& label,
                                            std::string& why) {
  const gguf::Value* model = h.find("tokenizer.ggml.model");
  if (!model) {
    why = "the file has no tokenizer.ggml.model";
    return std::nullopt;
  }
  if (!model->as_string()) fail("{}: metadata 'tokenizer.ggml.model': expected a string", label);
  if (*model->as_string() != "gpt2") {
    why = "tokenizer.ggml.model '" + *model->as_string() + "' is not converted (byte-level BPE, 'gpt2', is)";
    return std::nullopt;
  }
  const gguf::Value* pre_v = h.find("tokenizer.ggml.pre");
  const std::string pre = pre_v && pre_v->as_string() ? *pre_v->as_string() : "";
  const PreTokenizer* pt = nullptr;
  for (const auto& p : kPre)
    if (p.name == pre) pt = &p;
  if (!pt) {
    why = "tokenizer.ggml.pre '" + pre + "': its split regex is not known here";
    return std::nullopt;
  }

  const gguf::Value* tv = h.find("tokenizer.ggml.tokens");
  const auto* tokens = tv ? std::get_if<std::vector<std::string>>(&tv->v) : nullptr;
  if (!tokens || tv->elem != gguf::ValueType::string)
    fail("{}: metadata 'tokenizer.ggml.tokens': expected an array of strings", label);
  const size_t n = tokens->size();
  std::vector<int64_t> types(n, kNormal);
  if (const gguf::Value* ty = h.find("tokenizer.ggml.token_type")) {
    const auto* t = std::get_if<std::vector<int64_t>>(&ty->v);
    const auto* tu = std::get_if<std::vector<uint64_t>>(&ty->v);
    if (t && t->size() == n)
      types = *t;
    else if (tu && tu->size() == n)
      types.assign(tu->begin(), tu->end());
    else
      fail("{}: metadata 'tokenizer.ggml.token_type': expected {} integers (one per token)", label, n);
  }
  json merges = json::array();
  if (const gguf::Value* mv = h.find("tokenizer.ggml.merges")) {
    const auto* list = std::get_if<std::vector<std::string>>(&mv->v);
    if (!list || mv->elem != gguf::ValueType::string)
      fail("{}: metadata 'tokenizer.ggml.merges': expected an array of strings", label);
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string& m = (*list)[i];
      size_t sp = m.find(' ');
      if (sp == 0 || sp == std::string::npos || sp + 1 == m.size() ||
          m.find(' ', sp + 1) != std::string::npos)
        fail("{}: metadata 'tokenizer.ggml.merges[{}]': expected \"left right\", got '{}'", label, i,
             m.substr(0, 60));
      merges.push_back({m.substr(0, sp), m.substr(sp + 1)});
    }
  }
  auto token_id = [&](const char* key) -> std::optional<int64_t> {
    const gguf::Value* v = h.find(key);
    if (!v) return std::nullopt;
    auto id = v->as_int();
    if (!id || *id < 0 || uint64_t(*id) >= n)
      fail("{}: metadata '{}': expected a token id below {}", label, key, n);
    return *id;
  };
  std::optional<int64_t> bos = token_id("tokenizer.ggml.bos_token_id"),
                         eos = token_id("tokenizer.ggml.eos_token_id"),
                         unk = token_id("tokenizer.ggml.unknown_token_id");

  json vocab = json::object(), added = json::array();
  for (size_t i = 0; i < n; ++i) {
    const std::string& tok = (*tokens)[i];
    const int64_t type = types[i];
    if (type == kUnused) continue;
    if (type == kControl || type == kUserDefined) {
      added.push_back({{"id", i},
                       {"content", tok},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", type == kControl}});
    }
    if (!vocab.contains(tok)) vocab[tok] = i;  // the first id of a repeated text wins, as HF's dict would
  }
  GgufTokenizer out;
  if (const gguf::Value* ab = h.find("tokenizer.ggml.add_bos_token"))
    out.add_bos = ab->as_uint().value_or(0) != 0;
  tok::ByteLevelBpeJson spec;
  spec.added_tokens = added;
  spec.split_pattern = pt->split;
  if (out.add_bos && bos) spec.post_processor = tok::bos_template_processing((*tokens)[size_t(*bos)], *bos);
  if (unk) spec.unk_token = (*tokens)[size_t(*unk)];
  spec.ignore_merges = pt->ignore_merges;
  spec.vocab = vocab;
  spec.merges = merges;
  out.tokenizer = tok::byte_level_bpe_json(spec);
  out.config = {{"add_bos_token", out.add_bos}, {"tokenizer_class", "PreTrainedTokenizerFast"}};
  if (bos) out.config["bos_token"] = (*tokens)[size_t(*bos)];
  if (eos) out.config["eos_token"] = (*tokens)[size_t(*eos)];
  if (const gguf::Value* ct = h.find("tokenizer.chat_template"); ct && ct->as_string())
    out.config["chat_template"] = *ct->as_string();
  return out;
}

}  // namespace bs
