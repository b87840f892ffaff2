#include "runtime/tokenizer/jinja_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/base/error.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok::jinja {

Value Value::from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value(nullptr);
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      auto u = j.get<uint64_t>();
      return u > uint64_t(INT64_MAX) ? Value(double(u)) : Value(int64_t(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      Array a;
      a.reserve(j.size());
      for (auto& e : j) a.push_back(from_json(e));
      return Value(std::move(a));
    }
    case nlohmann::ordered_json::value_t::object: {
      auto o = Object::make();
      for (auto& [k, v] : j.items()) o->items.emplace_back(k, from_json(v));
      return Value(o);
    }
    default: return Value();
  }
}

const void* Value::identity() const {
  if (is_array()) return std::get<std::shared_ptr<Array>>(v_).get();
  if (is_object()) return std::get<std::shared_ptr<Object>>(v_).get();
  if (is_function()) return std::get<std::shared_ptr<Function>>(v_).get();
  return nullptr;
}

bool Value::truthy() const {
  switch (type()) {
    case Type::undefined:
    case Type::none: return false;
    case Type::boolean: return as_bool();
    case Type::integer: return as_int() != 0;
    case Type::real: return as_real() != 0.0;
    case Type::string: return !as_string().empty();
    case Type::array: return !as_array().empty();
    case Type::object: return as_object().is_namespace || !as_object().items.empty();
    case Type::function: return true;
  }
  return false;
}

const char* Value::type_name() const {
  static const char* names[] = {"undefined", "NoneType", "bool", "int", "float", "str", "list", "dict", "function"};
  return names[int(type())];
}

std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest precision that round-trips, as Python's repr.
  char buf[40];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  bool neg = s[0] == '-';
  if (neg) s.erase(0, 1);
  size_t epos = s.find('e');
  int exp = std::atoi(s.c_str() + epos + 1);
  std::string digits;
  for (size_t i = 0; i < epos; ++i)
    if (s[i] != '.') digits += s[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {  // where Python switches to exponent notation
    if (exp >= 0) {
      std::string ip = digits.substr(0, std::min(digits.size(), size_t(exp + 1)));
      ip.append(size_t(exp + 1) - ip.size(), '0');
      std::string fp = digits.size() > size_t(exp + 1) ? digits.substr(size_t(exp + 1)) : "0";
      out = ip + "." + fp;
    } else {
      out = "0." + std::string(size_t(-exp - 1), '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += e;
  }
  return neg ? "-" + out : out;
}

std::string python_string_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == q || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + q;
}

std::string Value::repr() const { return is_string() ? python_string_repr(as_string()) : str(); }

std::string Value::str() const {
  switch (type()) {
    case Type::undefined: return "";
    case Type::none: return "None";
    case Type::boolean: return as_bool() ? "True" : "False";
    case Type::integer: return std::to_string(as_int());
    case Type::real: return python_float(as_real());
    case Type::string: return as_string();
    case Type::array: {
      std::string out = "[";
      for (size_t i = 0; i < as_array().size(); ++i) out += (i ? ", " : "") + as_array()[i].repr();
      return out + "]";
    }
    case Type::object: {
      std::string out = as_object().is_namespace ? "<Namespace {" : "{";
      size_t i = 0;
      for (auto& [k, v] : as_object().items) out += (i++ ? ", " : "") + python_string_repr(k) + ": " + v.repr();
      return out + (as_object().is_namespace ? "}>" : "}");
    }
    case Type::function: return "<function>";
  }
  return "";
}

static void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

static void to_json_rec(const Value& v, std::string& out, int indent, bool sort_keys, int depth) {
  auto newline = [&](int d) {
    if (indent >= 0) out += "\n" + std::string(size_t(indent * d), ' ');
  };
  const char* item_sep = indent >= 0 ? "," : ", ";
  switch (v.type()) {
    case Value::Type::none: out += "null"; return;
    case Value::Type::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Value::Type::integer: out += std::to_string(v.as_int()); return;
    case Value::Type::real: {
      double d = v.as_real();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : python_float(d);
      return;
    }
    case Value::Type::string: json_string(out, v.as_string()); return;
    case Value::Type::array: {
      const Array& a = v.as_array();
      if (a.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += item_sep;
        newline(depth + 1);
        to_json_rec(a[i], out, indent, sort_keys, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Value::Type::object: {
      std::vector<const std::pair<std::string, Value>*> items;
      for (auto& kv : v.as_object().items) items.push_back(&kv);
      if (sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      if (items.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        newline(depth + 1);
        json_string(out, items[i]->first);
        out += ": ";
        to_json_rec(items[i]->second, out, indent, sort_keys, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    default: fail("Object of type {} is not JSON serializable", v.type_name());
  }
}

std::string Value::to_json(int indent, bool sort_keys) const {
  std::string out;
  to_json_rec(*this, out, indent, sort_keys, 0);
  return out;
}

const Value* Object::find(std::string_view key) const {
  for (auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(const std::string& key, Value v) {
  for (auto& [k, old] : items)
    if (k == key) {
      old = std::move(v);
      return;
    }
  items.emplace_back(key, std::move(v));
}

Value Args::get(size_t index, std::string_view name, Value fallback) const {
  if (index < pos.size()) return pos[index];
  for (auto& [k, v] : kw)
    if (k == name) return v;
  return fallback;
}

// Python treats bool as an int (True == 1).
static bool numeric(const Value& v) { return v.is_number() || v.is_bool(); }
static double num(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_real(); }

bool values_equal(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return num(a) == num(b);
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Value::Type::undefined:
    case Value::Type::none: return true;
    case Value::Type::string: return a.as_string() == b.as_string();
    case Value::Type::array: {
      const Array &x = a.as_array(), &y = b.as_array();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!values_equal(x[i], y[i])) return false;
      return true;
    }
    case Value::Type::object: {
      const Object &x = a.as_object(), &y = b.as_object();
      if (x.items.size() != y.items.size()) return false;
      for (auto& [k, v] : x.items) {
        const Value* w = y.find(k);
        if (!w || !values_equal(v, *w)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

int values_compare(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) {
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    double x = num(a), y = num(b);
    return x < y ? -1 : x > y;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : c > 0;
  }
  if (a.is_array() && b.is_array()) {
    const Array &x = a.as_array(), &y = b.as_array();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (int c = values_compare(x[i], y[i])) return c;
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  fail("'<' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name());
}

std::u32string to_u32(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out += utf8_next(s, i);
  return out;
}

std::string from_u32(std::u32string_view s) {
  std::string out;
  for (char32_t c : s) utf8_append(out, c);
  return out;
}

}  // namespace bs::tok::jinja
