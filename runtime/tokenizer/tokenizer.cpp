#include "runtime/tokenizer/tokenizer.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "runtime/base/error.h"
#include "runtime/tokenizer/added_tokens.h"
#include "runtime/tokenizer/bpe.h"
#include "runtime/tokenizer/jinja.h"
#include "runtime/tokenizer/pipeline.h"
#include "runtime/tokenizer/tokenizer_file.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

using nlohmann::json;

struct Tokenizer::Impl {
  BpeModel model = BpeModel::from_parts(json::object(), {}, "");
  std::vector<AddedToken> added;
  TokenMap added_by_content;
  std::unordered_map<int32_t, size_t> added_by_id;  // id -> index into `added`
  AddedTokenMatcher raw_matcher, normalized_matcher;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Decoder> decoder;
  std::vector<int32_t> prefix, suffix;  // what add_special adds around the text
  std::string bos_token, eos_token, chat_template;
  std::optional<int32_t> bos_id, eos_id;
  int32_t vocab_size = 0;
};

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

static json read_json(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open", path.string());
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", path.string(), e.what());
  }
}


static std::string read_text(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open", path.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Tokenizer Tokenizer::from_file(const std::filesystem::path& tokenizer_json) {
  std::string name = tokenizer_json.string();
  TokenizerFile file = read_tokenizer_file(read_text(tokenizer_json), name);
  if (!file.rest.is_object()) fail("{}: expected a JSON object at the top level", name);
  if (!file.rest.contains("model")) fail("{}: missing field \"model\"", name);
  if (!file.has_vocab) fail("{}: model: missing field \"vocab\"", name);
  if (!file.has_merges) fail("{}: model: missing field \"merges\"", name);
  BpeModel model = BpeModel::from_parts(file.rest["model"], std::move(file.parts), name + ": model");
  auto dir = tokenizer_json.parent_path();
  std::optional<json> config;
  if (std::filesystem::exists(dir / "tokenizer_config.json")) config = read_json(dir / "tokenizer_config.json");
  // Newer transformers keep the template in its own file.
  if (std::filesystem::exists(dir / "chat_template.jinja")) {
    std::ifstream f(dir / "chat_template.jinja", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!config) config = json::object();
    (*config)["chat_template"] = ss.str();
  }
  return build(file.rest, std::move(model), config ? &*config : nullptr, name);
}

Tokenizer Tokenizer::from_dir(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir / "tokenizer.json"))
    fail("{}: no tokenizer.json in this directory (needed for text input/output)", dir.string());
  return from_file(dir / "tokenizer.json");
}

// bos_token/eos_token in tokenizer_config.json: a string, an AddedToken object, or null.
static std::string config_token(const json* config, const char* key) {
  if (!config || !config->is_object() || !config->contains(key)) return {};
  const json& v = (*config)[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return {};
}

// Reads the post-processor into the ids it puts before and after a single sequence.
struct Wrap {
  std::vector<int32_t> prefix, suffix;
};
static void read_post_processor(const json& pp, const std::string& where, Wrap& t,
                                const std::function<int32_t(const std::string&)>& id_of) {
  if (pp.is_null()) return;
  std::string type = json_string(pp, "type", where);
  if (type == "ByteLevel") return;  // only adjusts offsets
  if (type == "Sequence") {
    const json& list = json_field(pp, "processors", where);
    for (size_t i = 0; i < list.size(); ++i)
      read_post_processor(list[i], fmt::format("{}.processors[{}]", where, i), t, id_of);
    return;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    auto tok = [&](const char* k) {
      const json& v = json_field(pp, k, where);
      if (!v.is_array() || v.size() != 2 || !v[0].is_string()) fail("{}.{}: expected [token, id]", where, k);
      return id_of(v[0].get<std::string>());
    };
    t.prefix.insert(t.prefix.begin(), tok("cls"));
    t.suffix.push_back(tok("sep"));
    return;
  }
  if (type == "TemplateProcessing") {
    const json& single = json_field(pp, "single", where);
    const json& specials = pp.contains("special_tokens") ? pp["special_tokens"] : json::object();
    if (!single.is_array()) fail("{}.single: expected an array", where);
    std::vector<int32_t> before, after;
    bool seen_sequence = false;
    for (size_t i = 0; i < single.size(); ++i) {
      const json& piece = single[i];
      if (piece.contains("Sequence")) {
        seen_sequence = true;
        continue;
      }
      if (!piece.contains("SpecialToken"))
        fail("{}.single[{}]: expected Sequence or SpecialToken, got {}", where, i, piece.dump());
      std::string name = json_string(piece["SpecialToken"], "id", fmt::format("{}.single[{}]", where, i));
      std::vector<int32_t> ids;
      if (specials.contains(name) && specials[name].contains("ids")) {
        for (auto& id : specials[name]["ids"]) ids.push_back(id.get<int32_t>());
      } else {
        ids.push_back(id_of(name));
      }
      auto& dst = seen_sequence ? after : before;
      dst.insert(dst.end(), ids.begin(), ids.end());
    }
    t.prefix.insert(t.prefix.begin(), before.begin(), before.end());
    t.suffix.insert(t.suffix.end(), after.begin(), after.end());
    return;
  }
  fail("{}: unsupported post_processor type \"{}\" (supported: TemplateProcessing ByteLevel "
       "BertProcessing RobertaProcessing Sequence)",
       where, type);
}

Tokenizer Tokenizer::from_json(const json& j, const json* config, const std::string& name) {
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", name, j.type_name());
  return build(j, BpeModel::from_json(json_field(j, "model", name), name + ": model"), config, name);
}

Tokenizer Tokenizer::build(const json& j, BpeModel&& model, const json* config, const std::string& name) {
  Tokenizer tok;
  Impl& t = *tok.impl_;
  t.model = std::move(model);
  t.vocab_size = t.model.size();

  if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
    const json& list = j["added_tokens"];
    if (!list.is_array()) fail("{}: added_tokens: expected an array", name);
    for (size_t i = 0; i < list.size(); ++i) {
      std::string where = fmt::format("{}: added_tokens[{}]", name, i);
      const json& e = list[i];
      AddedToken a;
      a.content = json_string(e, "content", where);
      const json& id = json_field(e, "id", where);
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (int64_t(1) << 24))
        fail("{}.id: expected an id in [0, 2^24), got {}", where, id.dump());
      a.id = id.get<int32_t>();
      a.special = json_bool(e, "special", false, where);
      a.lstrip = json_bool(e, "lstrip", false, where);
      a.rstrip = json_bool(e, "rstrip", false, where);
      a.normalized = json_bool(e, "normalized", !a.special, where);
      a.single_word = json_bool(e, "single_word", false, where);
      t.added_by_content.emplace(a.content, a.id);
      t.added_by_id.emplace(a.id, t.added.size());
      t.vocab_size = std::max(t.vocab_size, a.id + 1);
      t.added.push_back(std::move(a));
    }
  }
  t.raw_matcher = AddedTokenMatcher(t.added, [](const AddedToken& a) { return !a.normalized; });
  t.normalized_matcher = AddedTokenMatcher(t.added, [](const AddedToken& a) { return a.normalized; });

  auto stage = [&](const char* key) -> const json& {
    static const json null;
    return j.contains(key) ? j[key] : null;
  };
  t.normalizer = make_normalizer(stage("normalizer"), name + ": normalizer");
  t.pre_tokenizer = make_pre_tokenizer(stage("pre_tokenizer"), name + ": pre_tokenizer");
  t.decoder = make_decoder(stage("decoder"), name + ": decoder");

  auto id_of = [&](const std::string& token) {
    auto id = tok.token_id(token);
    if (!id) fail("{}: post_processor names token \"{}\", which is not in the vocab", name, token);
    return *id;
  };
  Wrap wrap;
  read_post_processor(stage("post_processor"), name + ": post_processor", wrap, id_of);
  t.prefix = wrap.prefix;
  t.suffix = wrap.suffix;

  t.bos_token = config_token(config, "bos_token");
  t.eos_token = config_token(config, "eos_token");
  if (!t.bos_token.empty()) t.bos_id = tok.token_id(t.bos_token);
  else if (!t.prefix.empty()) t.bos_id = t.prefix.front();
  if (!t.eos_token.empty()) t.eos_id = tok.token_id(t.eos_token);
  if (t.bos_id && t.bos_token.empty()) t.bos_token = *tok.id_token(*t.bos_id);

  // transformers rebuilds the post-processor from add_bos_token / add_eos_token when the config
  // states them; an unstated one keeps what tokenizer.json does.
  if (config && config->is_object()) {
    auto flag = [&](const char* key) -> std::optional<bool> {
      auto it = config->find(key);
      if (it == config->end() || !it->is_boolean()) return std::nullopt;
      return it->get<bool>();
    };
    if (auto add_bos = flag("add_bos_token")) {
      t.prefix.clear();
      if (*add_bos) {
        if (!t.bos_id) fail("{}: add_bos_token is true but bos_token is not a known token", name);
        t.prefix.push_back(*t.bos_id);
      }
    }
    if (auto add_eos = flag("add_eos_token")) {
      t.suffix.clear();
      if (*add_eos) {
        if (!t.eos_id) fail("{}: add_eos_token is true but eos_token is not a known token", name);
        t.suffix.push_back(*t.eos_id);
      }
    }
    if (config->contains("chat_template")) {
      const json& ct = (*config)["chat_template"];
      if (ct.is_string()) {
        t.chat_template = ct.get<std::string>();
      } else if (ct.is_array()) {  // [{name, template}, ...]: the one named "default"
        for (auto& e : ct)
          if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string())
            t.chat_template = e["template"].get<std::string>();
      }
    }
  }
  return tok;
}

std::vector<int32_t> Tokenizer::encode(std::string_view input, bool add_special) const {
  const Impl& t = *impl_;
  std::string repaired;
  if (!utf8_is_valid(input)) {
    repaired = utf8_lossy(input);
    input = repaired;
  }
  std::vector<int32_t> ids;
  if (add_special) ids = t.prefix;
  std::vector<Piece> pieces;
  for (const Segment& raw : t.raw_matcher.split(input)) {
    if (raw.token >= 0) {
      ids.push_back(t.added[size_t(raw.token)].id);
      continue;
    }
    std::string text(input.substr(raw.begin, raw.end - raw.begin));
    if (t.normalizer) t.normalizer->normalize(text);
    for (const Segment& seg : t.normalized_matcher.split(text)) {
      if (seg.token >= 0) {
        ids.push_back(t.added[size_t(seg.token)].id);
        continue;
      }
      pieces.clear();
      pieces.push_back({text.substr(seg.begin, seg.end - seg.begin), raw.begin == 0 && seg.begin == 0});
      if (t.pre_tokenizer) t.pre_tokenizer->split(pieces);
      for (const Piece& p : pieces) t.model.encode_word(p.text, ids);
    }
  }
  if (add_special) ids.insert(ids.end(), t.suffix.begin(), t.suffix.end());
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  const Impl& t = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    auto it = t.added_by_id.find(id);
    if (it != t.added_by_id.end()) {
      const AddedToken& a = t.added[it->second];
      if (!(skip_special && a.special)) tokens.push_back(a.content);
    } else if (const std::string* s = t.model.id_to_token(id)) {
      tokens.push_back(*s);
    }
  }
  std::string out;
  if (!t.decoder) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return utf8_lossy(out);
  }
  for (auto& s : t.decoder->decode_chain(std::move(tokens))) out += s;
  return utf8_is_valid(out) ? out : utf8_lossy(out);
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<int32_t> Tokenizer::token_id(std::string_view token) const {
  auto it = impl_->added_by_content.find(token);
  if (it != impl_->added_by_content.end()) return it->second;
  return impl_->model.token_to_id(token);
}

std::optional<std::string> Tokenizer::id_token(int32_t id) const {
  auto it = impl_->added_by_id.find(id);
  if (it != impl_->added_by_id.end()) return impl_->added[it->second].content;
  if (const std::string* s = impl_->model.id_to_token(id)) return *s;
  return std::nullopt;
}

bool Tokenizer::is_special(int32_t id) const {
  auto it = impl_->added_by_id.find(id);
  return it != impl_->added_by_id.end() && impl_->added[it->second].special;
}

std::optional<int32_t> Tokenizer::bos_id() const { return impl_->bos_id; }
std::optional<int32_t> Tokenizer::eos_id() const { return impl_->eos_id; }
const std::string& Tokenizer::bos_token() const { return impl_->bos_token; }
const std::string& Tokenizer::eos_token() const { return impl_->eos_token; }
const std::vector<int32_t>& Tokenizer::prefix_ids() const { return impl_->prefix; }
const std::vector<int32_t>& Tokenizer::suffix_ids() const { return impl_->suffix; }
const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }

std::string Tokenizer::apply_chat_template(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                           const nlohmann::ordered_json& extra) const {
  if (impl_->chat_template.empty())
    fail("this tokenizer has no chat_template (tokenizer_config.json or chat_template.jinja)");
  nlohmann::ordered_json vars = extra.is_object() ? extra : nlohmann::ordered_json::object();
  if (!vars.contains("bos_token")) vars["bos_token"] = impl_->bos_token;
  if (!vars.contains("eos_token")) vars["eos_token"] = impl_->eos_token;
  return bs::tok::apply_chat_template(impl_->chat_template, messages, add_generation_prompt, vars);
}

StreamDecoder::StreamDecoder(const Tokenizer& tok, bool skip_special) : tok_(&tok), skip_special_(skip_special) {}

static bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

std::string StreamDecoder::push(int32_t id) {
  ids_.push_back(id);
  std::string s = tok_->decode(ids_, skip_special_);
  // A trailing U+FFFD is (almost always) a character whose remaining bytes are still to come.
  if (s.size() <= prefix_.size() || ends_with_replacement(s)) return {};
  size_t common = 0;
  while (common < prefix_.size() && s[common] == prefix_[common]) ++common;
  std::string out = s.substr(common);
  // The ids just printed become the context of the next ones, so decoders that treat the first
  // token specially (Strip, Metaspace) see a continuation, and a character made of several
  // byte-fallback tokens stays whole (ByteFallback turns a broken byte run into all U+FFFD).
  ids_.erase(ids_.begin(), ids_.begin() + long(context_));
  context_ = ids_.size();
  prefix_ = tok_->decode(ids_, skip_special_);
  return out;
}

std::string StreamDecoder::flush() {
  std::string s = tok_->decode(ids_, skip_special_);
  std::string out = s.size() > prefix_.size() ? s.substr(prefix_.size()) : std::string();
  ids_.clear();
  context_ = 0;
  prefix_.clear();
  return out;
}

}  // namespace bs::tok
