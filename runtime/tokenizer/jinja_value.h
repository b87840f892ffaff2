// Values of the Jinja interpreter: Python's types as templates see them. Lists and dicts are
// shared (reference semantics, like Python); the sandbox is immutable, so only namespace()
// objects are ever changed after creation. Dicts keep insertion order, as Python's do.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace bs::tok::jinja {

class Value;
using Array = std::vector<Value>;
struct Object;
struct Args;
using Function = std::function<Value(Args&)>;

struct Undefined {};

class Value {
 public:
  enum class Type { undefined, none, boolean, integer, real, string, array, object, function };

  Value() : v_(Undefined{}) {}
  Value(std::nullptr_t) : v_(nullptr) {}
  Value(bool b) : v_(b) {}
  Value(int v) : v_(int64_t(v)) {}
  Value(int64_t v) : v_(v) {}
  Value(double v) : v_(v) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(Array a) : v_(std::make_shared<Array>(std::move(a))) {}
  Value(std::shared_ptr<Object> o) : v_(std::move(o)) {}
  static Value function(Function f) { return Value(std::make_shared<Function>(std::move(f))); }
  static Value from_json(const nlohmann::ordered_json& j);

  Type type() const { return Type(v_.index()); }
  bool is_undefined() const { return type() == Type::undefined; }
  bool is_none() const { return type() == Type::none; }
  bool is_bool() const { return type() == Type::boolean; }
  bool is_int() const { return type() == Type::integer; }
  bool is_real() const { return type() == Type::real; }
  bool is_number() const { return is_int() || is_real(); }  // bool is not a number here
  bool is_string() const { return type() == Type::string; }
  bool is_array() const { return type() == Type::array; }
  bool is_object() const { return type() == Type::object; }
  bool is_function() const { return type() == Type::function; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_real() const { return is_int() ? double(as_int()) : std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return *std::get<std::shared_ptr<Array>>(v_); }
  Object& as_object() const { return *std::get<std::shared_ptr<Object>>(v_); }
  const Function& as_function() const { return *std::get<std::shared_ptr<Function>>(v_); }
  const void* identity() const;  // for "is sameas" on lists/dicts

  bool truthy() const;
  // Python's str(): what {{ value }} prints ("None", "True", "['a', 1]"; undefined prints "").
  std::string str() const;
  // Python's repr() (strings quoted), as str() shows list and dict items.
  std::string repr() const;
  // json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys); indent < 0 = none.
  std::string to_json(int indent = -1, bool sort_keys = false) const;
  const char* type_name() const;

 private:
  explicit Value(std::shared_ptr<Function> f) : v_(std::move(f)) {}
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>, std::shared_ptr<Function>>
      v_;
};

struct Object {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value v);
  static std::shared_ptr<Object> make() { return std::make_shared<Object>(); }
};

// Arguments of a call: positional, then keyword.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // The argument at `index` or named `name`, else `fallback`.
  Value get(size_t index, std::string_view name, Value fallback = Value()) const;
};

// Python semantics for the operators.
bool values_equal(const Value& a, const Value& b);
// <0, 0, >0; throws bs::Error for incomparable types.
int values_compare(const Value& a, const Value& b);

// Python float repr (shortest round-trip: 1.0, 0.1, 1e-05, 1e+16).
std::string python_float(double d);
// Python's repr of a string: single quotes unless it holds ' and no ".
std::string python_string_repr(std::string_view s);
// Code points of a UTF-8 string, and back; for len(), slicing and indexing.
std::u32string to_u32(std::string_view s);
std::string from_u32(std::u32string_view s);

}  // namespace bs::tok::jinja
