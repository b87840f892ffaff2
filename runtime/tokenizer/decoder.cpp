// Decoders: token strings back to text, as HF tokenizers' decode_chain does.
#include <nlohmann/json.hpp>

#include "runtime/base/error.h"
#include "runtime/tokenizer/pipeline.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok {

using nlohmann::json;

namespace {

constexpr const char* kReplacementChar = "\xEF\xBF\xBD";

// Joins all tokens into one string of bytes through GPT-2's alphabet. A token holding a char
// outside the alphabet (an added token like "<|im_start|>" maps fine; an odd one may not) is
// taken as its raw UTF-8, as HF does.
class ByteLevel : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    const auto& map = byte_level_map();
    std::string bytes;
    for (auto& t : tokens) {
      std::string mapped;
      bool ok = true;
      for (size_t i = 0; i < t.size() && ok;) {
        int b = map.char_to_byte(utf8_next(t, i));
        if (b < 0) ok = false;
        else mapped += char(b);
      }
      bytes += ok ? mapped : t;
    }
    return {utf8_lossy(bytes)};
  }
};

class Replace : public Decoder {
 public:
  Replace(Regex re, std::string content) : re_(std::move(re)), content_(std::move(content)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) t = re_.replace_all(t, content_);
    return tokens;
  }

 private:
  Regex re_;
  std::string content_;
};

// "<0xE2>" tokens become bytes; a run of them that is not valid UTF-8 becomes one U+FFFD per
// byte (HF's all-or-nothing rule).
class ByteFallback : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string run;
    size_t run_len = 0;
    auto flush = [&] {
      if (run_len == 0) return;
      if (utf8_is_valid(run)) {
        out.push_back(run);
      } else {
        for (size_t i = 0; i < run_len; ++i) out.push_back(kReplacementChar);
      }
      run.clear();
      run_len = 0;
    };
    for (auto& t : tokens) {
      int byte = parse_byte_token(t);
      if (byte >= 0) {
        run += char(byte);
        ++run_len;
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    return out;
  }

  static int parse_byte_token(const std::string& t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    int hi = hex(t[3]), lo = hex(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
  }
};

class Fuse : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string all;
    for (auto& t : tokens) all += t;
    return {all};
  }
};

// Removes up to `start` leading and `stop` trailing copies of one char from every token.
class Strip : public Decoder {
 public:
  Strip(char32_t content, size_t start, size_t stop) : content_(content), start_(start), stop_(stop) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) {
      std::vector<size_t> starts;  // byte offset of every code point
      for (size_t i = 0; i < t.size();) {
        starts.push_back(i);
        utf8_next(t, i);
      }
      auto cp_at = [&](size_t k) {
        size_t i = starts[k];
        return utf8_next(t, i);
      };
      size_t n = starts.size(), b = 0, e = n;
      while (b < start_ && b < n && cp_at(b) == content_) ++b;
      while (n - e < stop_ && e > b && cp_at(e - 1) == content_) --e;
      size_t byte_b = b < n ? starts[b] : t.size(), byte_e = e < n ? starts[e] : t.size();
      t = t.substr(byte_b, byte_e - byte_b);
    }
    return tokens;
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

// Metaspace: "▁" back to " "; the first token loses every "▁" when a prefix was prepended.
class Metaspace : public Decoder {
 public:
  Metaspace(std::string rep, bool strip_first) : rep_(std::move(rep)), strip_first_(strip_first) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t k = 0; k < t.size();) {
        if (t.compare(k, rep_.size(), rep_) == 0) {
          if (!(i == 0 && strip_first_)) out += ' ';
          k += rep_.size();
        } else {
          out += t[k++];
        }
      }
      tokens[i] = std::move(out);
    }
    return tokens;
  }

 private:
  std::string rep_;
  bool strip_first_;
};

class Sequence : public Decoder {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Decoder>> s) : stages_(std::move(s)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& s : stages_) tokens = s->decode_chain(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> stages_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& j, const std::string& where) {
  if (j.is_null()) return nullptr;
  std::string type = json_string(j, "type", where);
  if (type == "ByteLevel") return std::make_unique<ByteLevel>();
  if (type == "Replace")
    return std::make_unique<Replace>(json_pattern(json_field(j, "pattern", where), where + ".pattern"),
                                     json_string(j, "content", where));
  if (type == "ByteFallback") return std::make_unique<ByteFallback>();
  if (type == "Fuse") return std::make_unique<Fuse>();
  if (type == "Strip") {
    std::string c = json_string(j, "content", where);
    size_t i = 0;
    if (c.empty() || (utf8_next(c, i), i != c.size())) fail("{}.content: expected one character", where);
    i = 0;
    auto count = [&](const char* key) {
      const json& v = json_field(j, key, where);
      if (!v.is_number_integer() || v.get<int64_t>() < 0) fail("{}.{}: expected a count, got {}", where, key, v.dump());
      return v.get<size_t>();
    };
    return std::make_unique<Strip>(utf8_next(c, i), count("start"), count("stop"));
  }
  if (type == "Metaspace") {
    std::string rep = j.contains("replacement") ? json_string(j, "replacement", where) : "\xE2\x96\x81";
    bool strip_first = json_bool(j, "add_prefix_space", true, where);
    if (j.contains("prepend_scheme")) strip_first = json_string(j, "prepend_scheme", where) != "never";
    return std::make_unique<Metaspace>(rep, strip_first);
  }
  if (type == "Sequence") {
    const json& list = json_field(j, "decoders", where);
    if (!list.is_array()) fail("{}.decoders: expected an array", where);
    std::vector<std::unique_ptr<Decoder>> stages;
    for (size_t i = 0; i < list.size(); ++i) {
      auto d = make_decoder(list[i], fmt::format("{}.decoders[{}]", where, i));
      if (d) stages.push_back(std::move(d));
    }
    return std::make_unique<Sequence>(std::move(stages));
  }
  fail("{}: unsupported decoder type \"{}\" (supported: ByteLevel Replace ByteFallback Fuse Strip "
       "Metaspace Sequence)",
       where, type);
}

}  // namespace bs::tok
