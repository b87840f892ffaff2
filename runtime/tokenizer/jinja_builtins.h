// The library of the Jinja interpreter: filters, tests, Python methods of str/dict/list, and
// the globals HF provides. Each throws bs::Error on misuse; the evaluator adds line:col.
#pragma once
#include <optional>
#include <string>

#include "runtime/tokenizer/jinja_value.h"

namespace bs::tok::jinja {

Value apply_filter(const std::string& name, const Value& subject, const Args& args);
bool apply_test(const std::string& name, const Value& subject, const Args& args);
// obj.name(args) for the methods of Python's str, dict and list; nullopt when there is none.
std::optional<Value> call_method(const Value& obj, const std::string& name, const Args& args);
// range, namespace, dict, raise_exception, strftime_now.
void add_globals(Object& globals);

// Python helpers the evaluator shares.
bool contains(const Value& container, const Value& item);  // `item in container`
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
Value index(const Value& obj, const Value& key);  // obj[key]; undefined when missing
Value attribute(const Value& obj, const std::string& name);  // obj.name; undefined when missing
std::vector<Value> iterate(const Value& v);  // for x in v
int64_t length(const Value& v);
std::string python_strip(std::string_view s, const Value& chars, bool left, bool right);
// Python's `fmt % args` (printf-style: %s %r %d %i %x %o %e %f %g %c %%, flags, width, precision,
// %(key)s from `mapping`).
std::string percent_format(std::string_view fmt, const std::vector<Value>& args, const Value* mapping);
// `fmt % rhs`: a list is unpacked as a tuple would be when the format has that many conversions.
std::string percent_format(std::string_view fmt, const Value& rhs);

}  // namespace bs::tok::jinja
