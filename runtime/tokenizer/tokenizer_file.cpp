#include "runtime/tokenizer/tokenizer_file.h"

#include "runtime/base/error.h"

namespace bs::tok {

using nlohmann::json;

namespace {

class Reader : public nlohmann::json_sax<json> {
 public:
  Reader(TokenizerFile& out, const std::string& name) : out_(out), name_(name), where_(name + ": model") {}

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
  bool binary(binary_t&) override { fail("{}: unexpected binary value", name_); }

  bool string(string_t& s) override {
    switch (mode_) {
      case Mode::merges:
        out_.parts.merges.emplace_back();
        split_merge(s, out_.parts.merges.size() - 1, where_, out_.parts.merges.back());
        return true;
      case Mode::merge_pair:
        if (pair_n_ >= 2) bad_merge();
        (pair_n_++ == 0 ? pair_.first : pair_.second) = std::move(s);
        return true;
      case Mode::vocab: fail("{}.vocab[\"{}\"]: expected an integer id, got a string", where_, key_);
      case Mode::dom: add(json(std::move(s))); return true;
    }
    return true;
  }

  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }

  bool start_object(std::size_t) override {
    if (mode_ == Mode::dom && in_model() && key_ == "vocab") {
      if (out_.has_vocab) fail("{}: \"vocab\" appears twice", where_);
      out_.has_vocab = true;
      mode_ = Mode::vocab;
      return true;
    }
    if (mode_ != Mode::dom) fail("{}: vocab ids and merges must be strings or integers, not objects", where_);
    push(add(json::object()));
    return true;
  }
  bool end_object() override {
    if (mode_ == Mode::vocab) {
      mode_ = Mode::dom;
      return true;
    }
    pop();
    return true;
  }

  bool start_array(std::size_t) override {
    if (mode_ == Mode::dom && in_model() && key_ == "merges") {
      if (out_.has_merges) fail("{}: \"merges\" appears twice", where_);
      out_.has_merges = true;
      mode_ = Mode::merges;
      return true;
    }
    if (mode_ == Mode::merges) {
      mode_ = Mode::merge_pair;
      pair_n_ = 0;
      return true;
    }
    if (mode_ != Mode::dom) fail("{}: unexpected array inside vocab or a merge", where_);
    push(add(json::array()));
    return true;
  }
  bool end_array() override {
    if (mode_ == Mode::merge_pair) {
      if (pair_n_ != 2) bad_merge();
      out_.parts.merges.push_back(std::move(pair_));
      pair_ = {};
      mode_ = Mode::merges;
      return true;
    }
    if (mode_ == Mode::merges) {
      mode_ = Mode::dom;
      return true;
    }
    pop();
    return true;
  }

  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) override {
    fail("{}: not valid JSON (byte {}): {}", name_, pos, e.what());
  }

 private:
  enum class Mode { dom, vocab, merges, merge_pair };

  // Directly inside the top-level "model" object.
  bool in_model() const { return stack_.size() == 2 && names_[1] == "model" && stack_.back()->is_object(); }

  [[noreturn]] void bad_merge() const {
    fail("{}.merges[{}]: expected \"left right\" or [left, right]", where_, out_.parts.merges.size());
  }

  bool value(json&& v) {
    switch (mode_) {
      case Mode::dom: add(std::move(v)); return true;
      case Mode::vocab:
        if (!v.is_number_integer()) fail("{}.vocab[\"{}\"]: expected an integer id, got {}", where_, key_, v.dump());
        out_.parts.vocab.emplace_back(std::move(key_), v.get<int64_t>());
        key_.clear();
        return true;
      default: bad_merge();
    }
  }

  json* add(json&& v) {
    if (stack_.empty()) {
      out_.rest = std::move(v);
      return &out_.rest;
    }
    json& top = *stack_.back();
    if (top.is_object()) {
      json& slot = top[key_];
      slot = std::move(v);
      return &slot;
    }
    top.push_back(std::move(v));
    return &top.back();
  }
  void push(json* j) {
    if (stack_.size() > 512) fail("{}: JSON nested too deeply", name_);
    stack_.push_back(j);
    names_.push_back(key_);
  }
  void pop() {
    stack_.pop_back();
    names_.pop_back();
  }

  TokenizerFile& out_;
  const std::string& name_;
  std::string where_;
  Mode mode_ = Mode::dom;
  std::vector<json*> stack_;
  std::vector<std::string> names_;  // the key each open container sits under
  std::string key_;
  std::pair<std::string, std::string> pair_;
  int pair_n_ = 0;
};

}  // namespace

TokenizerFile read_tokenizer_file(std::string_view text, const std::string& name) {
  TokenizerFile out;
  Reader reader(out, name);
  try {
    json::sax_parse(text, &reader);
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    fail("{}: not valid JSON: {}", name, e.what());
  }
  return out;
}

}  // namespace bs::tok
