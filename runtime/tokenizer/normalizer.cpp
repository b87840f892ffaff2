// Normalizers, and the JSON helpers every pipeline stage uses.
#include <nlohmann/json.hpp>

#include "runtime/base/error.h"
#include "runtime/tokenizer/pipeline.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

using nlohmann::json;

const json& json_field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object()) fail("{}: expected an object, got {}", where, j.type_name());
  auto it = j.find(key);
  if (it == j.end()) fail("{}: missing field \"{}\"", where, key);
  return *it;
}

std::string json_string(const json& j, const char* key, const std::string& where) {
  const json& v = json_field(j, key, where);
  if (!v.is_string()) fail("{}.{}: expected a string, got {}", where, key, v.type_name());
  return v.get<std::string>();
}

bool json_bool(const json& j, const char* key, bool fallback, const std::string& where) {
  if (!j.is_object()) fail("{}: expected an object, got {}", where, j.type_name());
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail("{}.{}: expected a boolean, got {}", where, key, it->type_name());
  return it->get<bool>();
}

Regex json_pattern(const json& j, const std::string& where) {
  if (j.is_object() && j.contains("String") && j["String"].is_string())
    return Regex::literal(j["String"].get<std::string>(), where);
  if (j.is_object() && j.contains("Regex") && j["Regex"].is_string())
    return Regex(j["Regex"].get<std::string>(), where);
  fail("{}: expected {{\"String\": ...}} or {{\"Regex\": ...}}, got {}", where, j.dump());
}

namespace {

class UnicodeNorm : public Normalizer {
 public:
  explicit UnicodeNorm(NormForm f) : form_(f) {}
  void normalize(std::string& s) const override { s = unicode_normalize(s, form_); }

 private:
  NormForm form_;
};

class Lowercase : public Normalizer {
 public:
  void normalize(std::string& s) const override { s = unicode_lowercase(s); }
};

class StripAccents : public Normalizer {
 public:
  void normalize(std::string& s) const override { s = strip_accents(s); }
};

// HF prepends only to non-empty text, so an empty segment stays empty.
class Prepend : public Normalizer {
 public:
  explicit Prepend(std::string p) : prepend_(std::move(p)) {}
  void normalize(std::string& s) const override {
    if (!s.empty()) s.insert(0, prepend_);
  }

 private:
  std::string prepend_;
};

class Replace : public Normalizer {
 public:
  Replace(Regex re, std::string content) : re_(std::move(re)), content_(std::move(content)) {}
  void normalize(std::string& s) const override { s = re_.replace_all(s, content_); }

 private:
  Regex re_;
  std::string content_;
};

// Strips Unicode whitespace from either end.
class Strip : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& s) const override {
    size_t b = 0, e = s.size();
    if (left_) {
      while (b < e) {
        size_t i = b;
        if (!is_whitespace(utf8_next(s, i))) break;
        b = i;
      }
    }
    if (right_) {
      while (e > b) {
        size_t start = e - 1;
        while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
        size_t i = start;
        if (!is_whitespace(utf8_next(s, i))) break;
        e = start;
      }
    }
    s = s.substr(b, e - b);
  }

 private:
  bool left_, right_;
};

class Sequence : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> n) : stages_(std::move(n)) {}
  void normalize(std::string& s) const override {
    for (auto& n : stages_) n->normalize(s);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> stages_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const json& j, const std::string& where) {
  if (j.is_null()) return nullptr;
  std::string type = json_string(j, "type", where);
  if (type == "NFC") return std::make_unique<UnicodeNorm>(NormForm::nfc);
  if (type == "NFD") return std::make_unique<UnicodeNorm>(NormForm::nfd);
  if (type == "NFKC") return std::make_unique<UnicodeNorm>(NormForm::nfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNorm>(NormForm::nfkd);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Prepend") return std::make_unique<Prepend>(json_string(j, "prepend", where));
  if (type == "Replace")
    return std::make_unique<Replace>(json_pattern(json_field(j, "pattern", where), where + ".pattern"),
                                     json_string(j, "content", where));
  if (type == "Strip")
    return std::make_unique<Strip>(json_bool(j, "strip_left", true, where),
                                   json_bool(j, "strip_right", true, where));
  if (type == "Sequence") {
    const json& list = json_field(j, "normalizers", where);
    if (!list.is_array()) fail("{}.normalizers: expected an array", where);
    std::vector<std::unique_ptr<Normalizer>> stages;
    for (size_t i = 0; i < list.size(); ++i) {
      auto n = make_normalizer(list[i], fmt::format("{}.normalizers[{}]", where, i));
      if (n) stages.push_back(std::move(n));
    }
    return std::make_unique<Sequence>(std::move(stages));
  }
  if (type == "Precompiled") {
    // SentencePiece's compiled charsmap; only the empty map (an identity) is supported.
    auto it = j.find("precompiled_charsmap");
    if (it == j.end() || it->is_null() || (it->is_string() && it->get<std::string>().empty())) return nullptr;
    fail("{}: normalizer \"Precompiled\" with a non-empty charsmap is not supported", where);
  }
  fail("{}: unsupported normalizer type \"{}\" (supported: NFC NFD NFKC NFKD Lowercase StripAccents "
       "Prepend Replace Strip Sequence)",
       where, type);
}

}  // namespace bs::tok
