// Pre-tokenizers: how text is cut into words before BPE sees it.
#include <nlohmann/json.hpp>

#include "runtime/base/error.h"
#include "runtime/tokenizer/pipeline.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

using nlohmann::json;

namespace {

enum class Behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

Behavior parse_behavior(const json& j, const std::string& where, Behavior fallback) {
  auto it = j.find("behavior");
  if (it == j.end() || it->is_null()) return fallback;
  std::string b = it->is_string() ? it->get<std::string>() : "";
  if (b == "Removed") return Behavior::removed;
  if (b == "Isolated") return Behavior::isolated;
  if (b == "MergedWithPrevious") return Behavior::merged_with_previous;
  if (b == "MergedWithNext") return Behavior::merged_with_next;
  if (b == "Contiguous") return Behavior::contiguous;
  fail("{}.behavior: expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous, got {}",
       where, it->dump());
}

struct Span {
  size_t begin, end;
  bool is_match;
};

// HF's SplitDelimiterBehavior applied to a cover of the text by matched / unmatched spans.
std::vector<Span> apply_behavior(const std::vector<Span>& spans, Behavior behavior) {
  std::vector<Span> out;
  bool prev_match = false;
  switch (behavior) {
    case Behavior::isolated:
      return spans;
    case Behavior::removed:
      for (auto& s : spans)
        if (!s.is_match) out.push_back(s);
      return out;
    case Behavior::merged_with_previous:
      for (auto& s : spans) {
        if (s.is_match && !prev_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        prev_match = s.is_match;
      }
      return out;
    case Behavior::merged_with_next:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !prev_match && !out.empty()) out.back().begin = it->begin;
        else out.push_back(*it);
        prev_match = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      return out;
    case Behavior::contiguous:
      for (auto& s : spans) {
        if (s.is_match == prev_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        prev_match = s.is_match;
      }
      return out;
  }
  return out;
}

// Splits every piece at the matches of `re`; only the first split of a `first` piece stays first.
void split_pieces(std::vector<Piece>& pieces, const Regex& re, Behavior behavior, bool invert) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  for (auto& p : pieces) {
    std::vector<Span> spans;
    size_t prev = 0;
    for (auto [b, e] : re.find_all(p.text)) {
      if (b > prev) spans.push_back({prev, b, invert});
      spans.push_back({b, e, !invert});
      prev = e;
    }
    if (prev < p.text.size()) spans.push_back({prev, p.text.size(), invert});
    bool first = p.first;
    for (auto& s : apply_behavior(spans, behavior)) {
      if (s.end <= s.begin) continue;
      out.push_back({p.text.substr(s.begin, s.end - s.begin), first});
      first = false;
    }
  }
  pieces = std::move(out);
}

// GPT-2's word pattern, used by ByteLevel when use_regex is set.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Split : public PreTokenizer {
 public:
  Split(Regex re, Behavior b, bool invert) : re_(std::move(re)), behavior_(b), invert_(invert) {}
  void split(std::vector<Piece>& pieces) const override { split_pieces(pieces, re_, behavior_, invert_); }

 private:
  Regex re_;
  Behavior behavior_;
  bool invert_;
};

// Maps bytes to GPT-2's printable alphabet after an optional regex split.
class ByteLevel : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        re_(use_regex ? std::make_unique<Regex>(kGpt2Pattern, "ByteLevel") : nullptr) {}
  void split(std::vector<Piece>& pieces) const override {
    // HF adds the space to every piece that lacks one, not only to the start of the input.
    if (add_prefix_space_)
      for (auto& p : pieces)
        if (p.text.empty() || p.text[0] != ' ') p.text.insert(0, " ");
    if (re_) split_pieces(pieces, *re_, Behavior::isolated, false);
    const auto& map = byte_level_map();
    for (auto& p : pieces) {
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      for (unsigned char c : p.text) mapped += map.byte_to_utf8[c];
      p.text = std::move(mapped);
    }
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> re_;
};

enum class PrependScheme { always, never, first };

class Metaspace : public PreTokenizer {
 public:
  Metaspace(std::string replacement, PrependScheme scheme, bool split)
      : rep_(std::move(replacement)), scheme_(scheme), split_(split), re_(Regex::literal(rep_, "Metaspace")) {}
  void split(std::vector<Piece>& pieces) const override {
    for (auto& p : pieces) {
      std::string s;
      for (char c : p.text) {
        if (c == ' ') s += rep_;
        else s += c;
      }
      bool starts = s.compare(0, rep_.size(), rep_) == 0;
      if (!starts && (scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && p.first)))
        s.insert(0, rep_);
      p.text = std::move(s);
    }
    if (split_) split_pieces(pieces, re_, Behavior::merged_with_next, false);
  }

 private:
  std::string rep_;
  PrependScheme scheme_;
  bool split_;
  Regex re_;
};

class Sequence : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> s) : stages_(std::move(s)) {}
  void split(std::vector<Piece>& pieces) const override {
    for (auto& s : stages_) s->split(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> stages_;
};

std::unique_ptr<PreTokenizer> make_split(const std::string& pattern, Behavior b, bool invert,
                                         const std::string& where) {
  return std::make_unique<Split>(Regex(pattern, where), b, invert);
}

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const std::string& where) {
  if (j.is_null()) return nullptr;
  std::string type = json_string(j, "type", where);
  if (type == "Split") {
    return std::make_unique<Split>(json_pattern(json_field(j, "pattern", where), where + ".pattern"),
                                   parse_behavior(j, where, Behavior::isolated),
                                   json_bool(j, "invert", false, where));
  }
  if (type == "ByteLevel")
    return std::make_unique<ByteLevel>(json_bool(j, "add_prefix_space", true, where),
                                       json_bool(j, "use_regex", true, where));
  if (type == "Metaspace") {
    std::string rep = j.contains("replacement") ? json_string(j, "replacement", where) : "\xE2\x96\x81";
    PrependScheme scheme = PrependScheme::always;
    if (j.contains("prepend_scheme")) {
      std::string s = json_string(j, "prepend_scheme", where);
      if (s == "always") scheme = PrependScheme::always;
      else if (s == "never") scheme = PrependScheme::never;
      else if (s == "first") scheme = PrependScheme::first;
      else fail("{}.prepend_scheme: expected always, never or first, got \"{}\"", where, s);
    } else if (!json_bool(j, "add_prefix_space", true, where)) {
      scheme = PrependScheme::never;  // the pre-0.15 form of the same setting
    }
    return std::make_unique<Metaspace>(rep, scheme, json_bool(j, "split", true, where));
  }
  if (type == "Digits") {
    bool individual = json_bool(j, "individual_digits", false, where);
    return make_split(R"(\p{N})", individual ? Behavior::isolated : Behavior::contiguous, false, where);
  }
  // HF: \w+|[^\w\s]+ kept, everything else (whitespace) removed.
  if (type == "Whitespace") return make_split(R"(\w+|[^\w\s]+)", Behavior::removed, true, where);
  if (type == "WhitespaceSplit") return make_split(R"(\s+)", Behavior::removed, false, where);
  if (type == "Punctuation")
    return make_split(R"([\p{P}!-/:-@\[-`{-~])", parse_behavior(j, where, Behavior::isolated), false, where);
  if (type == "CharDelimiterSplit") {
    std::string d = json_string(j, "delimiter", where);
    return std::make_unique<Split>(Regex::literal(d, where), Behavior::removed, false);
  }
  if (type == "Sequence") {
    const json& list = json_field(j, "pretokenizers", where);
    if (!list.is_array()) fail("{}.pretokenizers: expected an array", where);
    std::vector<std::unique_ptr<PreTokenizer>> stages;
    for (size_t i = 0; i < list.size(); ++i) {
      auto p = make_pre_tokenizer(list[i], fmt::format("{}.pretokenizers[{}]", where, i));
      if (p) stages.push_back(std::move(p));
    }
    return std::make_unique<Sequence>(std::move(stages));
  }
  fail("{}: unsupported pre_tokenizer type \"{}\" (supported: Split ByteLevel Metaspace Digits Whitespace "
       "WhitespaceSplit Punctuation CharDelimiterSplit Sequence)",
       where, type);
}

}  // namespace bs::tok
