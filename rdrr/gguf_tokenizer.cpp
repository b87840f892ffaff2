// GGUF vocabulary (tokenizer.ggml.*) -> HF tokenizer.json + tokenizer_config.json (gguf_import.h).
// llama.cpp's converter writes a byte-level BPE vocabulary as: tokens in id order (their byte-level
// text), token_type per id (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte),
// merges as "left right" strings, and the name of the pre-tokenizer (whose regex lives in llama.cpp's
// source, not in the file): this turns that back into what the HF tokenizer.json said.
// A SentencePiece vocabulary ("llama": Llama 2, Phi-3, Gemma) has no merges: tokens ("▁" for spaces,
// <0xNN> byte tokens), a score per token and add_space_prefix. HF's converter builds its BPE merges from
// the same pieces and scores (transformers' generate_merges): every split of a piece into two pieces of
// the vocabulary, ordered by the piece's score, then the left and right lengths, highest first; within a
// piece by the ids of its halves. Done here the same way, the rebuilt tokenizer.json is the one HF writes.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

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

constexpr size_t kMaxMergedPiece = 1024;

// HF's merges of a SentencePiece BPE vocabulary (see the top of the file). `skip[i]`: token i is not a piece.
nlohmann::json sentencepiece_merges(const std::vector<std::string>& tokens, const std::vector<double>& scores,
                                    const std::vector<bool>& skip) {
  std::unordered_map<std::string_view, int32_t> id;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (!skip[i]) id.emplace(tokens[i], int32_t(i));
  struct Merge {
    int32_t l, r;
    double score;
    uint32_t len_l, len_r;  // in code points, as Python's len
  };
  auto code_points = [](std::string_view s) {
    uint32_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  std::vector<Merge> merges, local;
  for (size_t i = 0; i < tokens.size(); ++i) {
    // A piece is split at every code point, each half looked up: quadratic in its length. Real pieces are
    // short (Gemma's longest, whitespace runs, are 31 characters); a hostile file's megabyte-long token
    // must not stall the import, so pieces over kMaxMergedPiece bytes are never a merge's result.
    if (skip[i] || tokens[i].size() > kMaxMergedPiece) continue;
    const std::string_view t = tokens[i];
    local.clear();
    for (size_t at = 1; at < t.size(); ++at) {
      if ((static_cast<unsigned char>(t[at]) & 0xC0) == 0x80) continue;  // split between code points only
      auto l = id.find(t.substr(0, at)), r = id.find(t.substr(at));
      if (l != id.end() && r != id.end())
        local.push_back(
            {l->second, r->second, scores[i], code_points(t.substr(0, at)), code_points(t.substr(at))});
    }
    std::sort(local.begin(), local.end(),
              [](const Merge& a, const Merge& b) { return a.l != b.l ? a.l < b.l : a.r < b.r; });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.len_l != b.len_l ? a.len_l > b.len_l : a.len_r > b.len_r;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const Merge& m : merges) out.push_back({tokens[size_t(m.l)], tokens[size_t(m.r)]});
  return out;
}

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
  const bool spm = *model->as_string() == "llama";
  if (*model->as_string() != "gpt2" && !spm) {
    why = "tokenizer.ggml.model '" + *model->as_string() +
          "' is not converted (byte-level BPE, 'gpt2', and SentencePiece BPE, 'llama', are)";
    return std::nullopt;
  }
  const gguf::Value* pre_v = h.find("tokenizer.ggml.pre");
  const std::string pre = pre_v && pre_v->as_string() ? *pre_v->as_string() : "";
  const PreTokenizer* pt = nullptr;
  for (const auto& p : kPre)
    if (p.name == pre) pt = &p;
  if (!pt && !spm) {
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
  std::vector<double> scores;
  if (spm) {
    const gguf::Value* sv = h.find("tokenizer.ggml.scores");
    const auto* list = sv ? std::get_if<std::vector<double>>(&sv->v) : nullptr;
    if (!list || list->size() != n)
      fail("{}: metadata 'tokenizer.ggml.scores': expected {} numbers (one per token){}", label, n,
           sv ? "" : ", found none");
    scores = *list;
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(scores[i]))
        fail("{}: metadata 'tokenizer.ggml.scores[{}]': expected a finite score, got {}", label, i,
             scores[i]);
  }
  json merges = json::array();
  if (const gguf::Value* mv = h.find("tokenizer.ggml.merges"); mv && !spm) {
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

  // llama.cpp gives Phi-3's special tokens rstrip (but <unk>, <s>, <|endoftext|>), and </s> too, by the
  // model's name (llama-vocab.cpp); Phi-3's tokenizer.json has the same. Here by architecture or name.
  const gguf::Value* arch = h.find("general.architecture");
  const gguf::Value* name = h.find("general.name");
  std::string lname = name && name->as_string() ? *name->as_string() : "";
  std::transform(lname.begin(), lname.end(), lname.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  const bool phi3 = (arch && arch->as_string() && *arch->as_string() == "phi3") ||
                    lname.find("phi-3") != std::string::npos || lname.find("phi3") != std::string::npos;
  json vocab = json::object(), added = json::array();
  std::vector<bool> skip(n, false);
  for (size_t i = 0; i < n; ++i) {
    const std::string& tok = (*tokens)[i];
    const int64_t type = types[i];
    skip[i] = type == kUnused;
    if (type == kUnused) continue;
    // SentencePiece's <unk> is an added special token in HF's files too.
    if (type == kControl || type == kUserDefined || (spm && type == kUnknown)) {
      const bool special = type != kUserDefined;
      const bool rstrip =
          phi3 && (tok == "</s>" || (special && tok != "<unk>" && tok != "<s>" && tok != "<|endoftext|>"));
      added.push_back({{"id", i},
                       {"content", tok},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", rstrip},
                       {"normalized", false},
                       {"special", special}});
    }
    if (!vocab.contains(tok)) vocab[tok] = i;  // the first id of a repeated text wins, as HF's dict would
  }
  GgufTokenizer out;
  if (const gguf::Value* ab = h.find("tokenizer.ggml.add_bos_token"))
    out.add_bos = ab->as_uint().value_or(0) != 0;
  json post =
      out.add_bos && bos ? tok::bos_template_processing((*tokens)[size_t(*bos)], *bos) : json(nullptr);
  if (spm) {
    tok::SentencePieceBpeJson sp;
    sp.added_tokens = added;
    // llama.cpp's default for SentencePiece vocabularies is a space prefix; Gemma's converter writes false.
    if (const gguf::Value* asp = h.find("tokenizer.ggml.add_space_prefix")) {
      if (asp->type != gguf::ValueType::boolean)
        fail("{}: metadata 'tokenizer.ggml.add_space_prefix': expected a boolean", label);
      sp.add_space_prefix = asp->as_uint().value_or(1) != 0;
    }
    sp.post_processor = post;
    if (unk) sp.unk_token = (*tokens)[size_t(*unk)];
    sp.vocab = vocab;
    sp.merges = sentencepiece_merges(*tokens, scores, skip);
    out.tokenizer = tok::sentencepiece_bpe_json(sp);
  } else {
    tok::ByteLevelBpeJson spec;
    spec.added_tokens = added;
    spec.split_pattern = pt->split;
    spec.post_processor = post;
    if (unk) spec.unk_token = (*tokens)[size_t(*unk)];
    spec.ignore_merges = pt->ignore_merges;
    spec.vocab = vocab;
    spec.merges = merges;
    out.tokenizer = tok::byte_level_bpe_json(spec);
  }
  out.config = {{"add_bos_token", out.add_bos}, {"tokenizer_class", "PreTrainedTokenizerFast"}};
  if (bos) out.config["bos_token"] = (*tokens)[size_t(*bos)];
  if (eos) out.config["eos_token"] = (*tokens)[size_t(*eos)];
  if (const gguf::Value* ct = h.find("tokenizer.chat_template"); ct && ct->as_string())
    out.config["chat_template"] = *ct->as_string();
  return out;
}

}  // namespace bs
