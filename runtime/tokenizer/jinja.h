// Chat templates: a faithful subset of Jinja2 as Hugging Face runs it (ImmutableSandbox-
// Environment with trim_blocks, lstrip_blocks and loop controls; tojson as json.dumps with
// ensure_ascii=False; globals raise_exception, strftime_now, namespace, range, dict).
//
// Supported: {{ }}, {% if/elif/else %}, {% for x in xs if cond %} with else and loop.* (index,
// index0, revindex, first, last, length, previtem, nextitem, cycle), break/continue, {% set %}
// (names, tuples, namespace attributes, blocks), {% macro %}, {% filter %}, {% raw %},
// {% generation %}, comments, {%- -%} / {%+ +%} whitespace control; expressions with Python
// semantics: literals, lists, dicts, tuples, attribute/subscript/slice, calls with keywords,
// filters, tests ("is [not] defined"), in / not in, comparisons, and/or/not, + - * / // % ** ~,
// "a if c else b", Python's printf-style `str % args` (and the format filter), and the str/dict
// methods templates use (startswith, strip, split, items, get...). Tuples are lists here, so they
// print as [a, b] where Python prints (a, b).
// Not supported (an error names them): extends/include/import/block, call blocks, recursive loops.
//
// Errors: a syntax error throws bs::Error "NAME:LINE:COL: message"; a runtime error (unknown
// filter, raise_exception, a type error) carries the line:col of the expression.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace bs::tok {

namespace jinja {
struct Program;

// Bounds on one render, so a hostile template cannot hang or exhaust memory.
struct Limits {
  int64_t max_steps = 2'000'000;  // statements, expressions and loop iterations evaluated
  size_t max_output = 64 << 20;    // bytes of output (and of any one string built)
};

class Template {
 public:
  explicit Template(std::string_view source, std::string name = "chat_template");
  // `context` is an object of the template's variables (messages, add_generation_prompt, ...).
  std::string render(const nlohmann::ordered_json& context, const Limits& limits = {}) const;

 private:
  std::shared_ptr<const Program> program_;
};
}  // namespace jinja

// Renders a chat template as transformers' apply_chat_template does: variables `messages`,
// `add_generation_prompt`, and everything in `extra` (bos_token, eos_token, tools, ...).
std::string apply_chat_template(const std::string& tmpl, const nlohmann::ordered_json& messages,
                                bool add_generation_prompt,
                                const nlohmann::ordered_json& extra = nlohmann::ordered_json::object());
// The same for plain nlohmann::json input (whose objects iterate in sorted key order).
std::string apply_chat_template(const std::string& tmpl, const nlohmann::json& messages, bool add_generation_prompt,
                                const nlohmann::json& extra);

}  // namespace bs::tok
