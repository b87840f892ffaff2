// Python semantics the templates rely on: indexing, slicing, iteration, `in`, and the methods of
// str / dict / list; plus HF's globals.
#include <unicode/uchar.h>

#include <chrono>
#include <ctime>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja_builtins.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok::jinja {

static bool is_py_space(char32_t c) { return is_whitespace(c) || (c >= 0x1C && c <= 0x1F); }

std::vector<Value> iterate(const Value& v) {
  switch (v.type()) {
    case Value::Type::undefined: return {};
    case Value::Type::array: return v.as_array();
    case Value::Type::object: {
      std::vector<Value> keys;
      for (auto& [k, _] : v.as_object().items) keys.emplace_back(k);
      return keys;
    }
    case Value::Type::string: {
      std::vector<Value> chars;
      for (char32_t c : to_u32(v.as_string())) chars.emplace_back(from_u32(std::u32string(1, c)));
      return chars;
    }
    default: fail("'{}' object is not iterable", v.type_name());
  }
}

int64_t length(const Value& v) {
  switch (v.type()) {
    case Value::Type::undefined: return 0;
    case Value::Type::string: return int64_t(to_u32(v.as_string()).size());
    case Value::Type::array: return int64_t(v.as_array().size());
    case Value::Type::object: return int64_t(v.as_object().items.size());
    default: fail("object of type '{}' has no len()", v.type_name());
  }
}

bool contains(const Value& c, const Value& item) {
  if (c.is_string()) {
    if (!item.is_string()) fail("'in <string>' requires string as left operand, not {}", item.type_name());
    return c.as_string().find(item.as_string()) != std::string::npos;
  }
  if (c.is_array()) {
    for (auto& e : c.as_array())
      if (values_equal(e, item)) return true;
    return false;
  }
  if (c.is_object()) return item.is_string() && c.as_object().find(item.as_string()) != nullptr;
  if (c.is_undefined()) return false;
  fail("argument of type '{}' is not iterable", c.type_name());
}

Value index(const Value& obj, const Value& key) {
  if (obj.is_object()) {
    if (!key.is_string()) return Value();
    const Value* v = obj.as_object().find(key.as_string());
    return v ? *v : Value();
  }
  if ((obj.is_array() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t n = length(obj), i = key.is_bool() ? int64_t(key.as_bool()) : key.as_int();
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value();
    if (obj.is_array()) return obj.as_array()[size_t(i)];
    return from_u32(std::u32string(1, to_u32(obj.as_string())[size_t(i)]));
  }
  return Value();
}

Value attribute(const Value& obj, const std::string& name) {
  if (obj.is_object()) return index(obj, Value(name));
  return Value();
}

Value slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
  if (obj.is_undefined()) return Value();
  if (!obj.is_array() && !obj.is_string()) fail("'{}' object is not subscriptable", obj.type_name());
  auto opt = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int()) fail("slice {} must be an integer or None, got {}", what, v.type_name());
    return v.as_int();
  };
  int64_t step = opt(step_v, "step").value_or(1);
  if (step == 0) fail("slice step cannot be zero");
  std::u32string text = obj.is_string() ? to_u32(obj.as_string()) : std::u32string();
  int64_t n = obj.is_string() ? int64_t(text.size()) : int64_t(obj.as_array().size());
  // Python's slice.indices().
  auto clamp = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v;
    if (x < 0) x = x < -n ? -1 : x + n;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  int64_t b = clamp(opt(start_v, "start"), step > 0 ? 0 : n - 1);
  int64_t e = clamp(opt(stop_v, "stop"), step > 0 ? n : -1);
  std::vector<size_t> picks;
  for (int64_t i = b; step > 0 ? i < e : i > e;) {
    picks.push_back(size_t(i));
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  if (obj.is_string()) {
    std::u32string out;
    for (size_t i : picks) out += text[i];
    return from_u32(out);
  }
  Array out;
  for (size_t i : picks) out.push_back(obj.as_array()[i]);
  return Value(std::move(out));
}

std::string python_strip(std::string_view s, const Value& chars, bool left, bool right) {
  std::u32string t = to_u32(s);
  std::u32string set = chars.is_string() ? to_u32(chars.as_string()) : std::u32string();
  bool ws = !chars.is_string();
  auto strip = [&](char32_t c) { return ws ? is_py_space(c) : set.find(c) != std::u32string::npos; };
  size_t b = 0, e = t.size();
  if (left)
    while (b < e && strip(t[b])) ++b;
  if (right)
    while (e > b && strip(t[e - 1])) --e;
  return from_u32(t.substr(b, e - b));
}

static std::string str_arg(const Args& a, size_t i, const char* name, const char* method) {
  Value v = a.get(i, name);
  if (!v.is_string()) fail("str.{}() argument '{}' must be str, not {}", method, name, v.type_name());
  return v.as_string();
}

static Value split(const std::string& s, const Value& sep, int64_t maxsplit, bool from_right) {
  Array out;
  if (sep.is_none() || sep.is_undefined()) {  // runs of whitespace, no empty parts
    if (from_right && maxsplit >= 0) fail("str.rsplit() with maxsplit and no separator is not supported");
    std::u32string t = to_u32(s);
    size_t i = 0, n = t.size();
    while (true) {
      while (i < n && is_py_space(t[i])) ++i;
      if (i >= n) break;
      if (maxsplit >= 0 && int64_t(out.size()) == maxsplit) {  // the rest, right-stripped
        size_t e = n;
        while (e > i && is_py_space(t[e - 1])) --e;
        out.emplace_back(from_u32(t.substr(i, e - i)));
        break;
      }
      size_t j = i;
      while (j < n && !is_py_space(t[j])) ++j;
      out.emplace_back(from_u32(t.substr(i, j - i)));
      i = j;
    }
    return Value(std::move(out));
  }
  if (!sep.is_string() || sep.as_string().empty()) fail("str.split(): empty or non-string separator");
  const std::string& d = sep.as_string();
  std::vector<std::string> parts;
  if (!from_right) {
    size_t start = 0;
    for (size_t p; (maxsplit < 0 || int64_t(parts.size()) < maxsplit) && (p = s.find(d, start)) != std::string::npos;
         start = p + d.size())
      parts.push_back(s.substr(start, p - start));
    parts.push_back(s.substr(start));
  } else {
    size_t end = s.size();
    while (maxsplit < 0 || int64_t(parts.size()) < maxsplit) {
      if (end < d.size()) break;
      size_t p = s.rfind(d, end - d.size());
      if (p == std::string::npos) break;
      parts.insert(parts.begin(), s.substr(p + d.size(), end - p - d.size()));
      end = p;
    }
    parts.insert(parts.begin(), s.substr(0, end));
  }
  for (auto& p : parts) out.emplace_back(std::move(p));
  return Value(std::move(out));
}

static bool all_chars(const std::string& s, bool (*pred)(UChar32)) {
  if (s.empty()) return false;
  for (char32_t c : to_u32(s))
    if (!pred(UChar32(c))) return false;
  return true;
}
static bool py_isdigit(UChar32 c) { return u_isdigit(c); }
static bool py_isalpha(UChar32 c) { return u_isalpha(c); }
static bool py_isalnum(UChar32 c) { return u_isalnum(c); }
static bool py_isspace(UChar32 c) { return is_py_space(char32_t(c)); }

static std::optional<Value> string_method(const std::string& s, const std::string& name, const Args& a) {
  auto affix = [&](bool start) {
    Value p = a.get(0, "prefix");
    auto test = [&](const std::string& x) {
      return start ? s.compare(0, x.size(), x) == 0 && s.size() >= x.size()
                   : s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
    };
    if (p.is_string()) return Value(test(p.as_string()));
    if (p.is_array()) {
      for (auto& e : p.as_array())
        if (e.is_string() && test(e.as_string())) return Value(true);
      return Value(false);
    }
    fail("str.{}() argument must be str or a tuple of str, not {}", start ? "startswith" : "endswith", p.type_name());
  };
  if (name == "startswith") return affix(true);
  if (name == "endswith") return affix(false);
  if (name == "strip") return Value(python_strip(s, a.get(0, "chars"), true, true));
  if (name == "lstrip") return Value(python_strip(s, a.get(0, "chars"), true, false));
  if (name == "rstrip") return Value(python_strip(s, a.get(0, "chars"), false, true));
  if (name == "split" || name == "rsplit") {
    Value m = a.get(1, "maxsplit", Value(int64_t(-1)));
    return split(s, a.get(0, "sep"), m.is_int() ? m.as_int() : -1, name == "rsplit");
  }
  if (name == "splitlines") {
    Array out;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == '\n' || s[i] == '\r') {
        out.emplace_back(s.substr(start, i - start));
        if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
        start = i + 1;
      }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return Value(std::move(out));
  }
  if (name == "upper") return Value(unicode_uppercase(s));
  if (name == "lower") return Value(unicode_lowercase(s));
  if (name == "title" || name == "capitalize") return apply_filter(name == "title" ? "py_title" : "capitalize", Value(s), Args{});
  if (name == "replace") {
    std::string from = str_arg(a, 0, "old", "replace"), to = str_arg(a, 1, "new", "replace");
    return apply_filter("replace", Value(s), Args{{Value(from), Value(to), a.get(2, "count", Value(int64_t(-1)))}, {}});
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    std::string sub = str_arg(a, 0, "sub", name.c_str());
    if (name == "count") {
      if (sub.empty()) return Value(length(Value(s)) + 1);
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value(n);
    }
    size_t p = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (p == std::string::npos) {
      if (name == "index" || name == "rindex") fail("substring not found");
      return Value(int64_t(-1));
    }
    return Value(int64_t(to_u32(s.substr(0, p)).size()));
  }
  if (name == "join") {
    std::string out;
    bool first = true;
    for (auto& v : iterate(a.get(0, "iterable"))) {
      if (!v.is_string()) fail("str.join(): expected str items, got {}", v.type_name());
      out += (first ? "" : s) + v.as_string();
      first = false;
    }
    return Value(out);
  }
  if (name == "removeprefix") {
    std::string p = str_arg(a, 0, "prefix", "removeprefix");
    return Value(s.compare(0, p.size(), p) == 0 && s.size() >= p.size() ? s.substr(p.size()) : s);
  }
  if (name == "removesuffix") {
    std::string p = str_arg(a, 0, "suffix", "removesuffix");
    bool ends = s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
    return Value(ends && !p.empty() ? s.substr(0, s.size() - p.size()) : s);
  }
  if (name == "isdigit") return Value(all_chars(s, py_isdigit));
  if (name == "isalpha") return Value(all_chars(s, py_isalpha));
  if (name == "isalnum") return Value(all_chars(s, py_isalnum));
  if (name == "isspace") return Value(all_chars(s, py_isspace));
  if (name == "isupper") return Value(unicode_uppercase(s) == s && unicode_lowercase(s) != s);
  if (name == "islower") return Value(unicode_lowercase(s) == s && unicode_uppercase(s) != s);
  return std::nullopt;
}

std::optional<Value> call_method(const Value& obj, const std::string& name, const Args& a) {
  if (obj.is_string()) return string_method(obj.as_string(), name, a);
  if (obj.is_object() && !obj.as_object().is_namespace) {
    const Object& o = obj.as_object();
    if (name == "items") return apply_filter("items", obj, Args{});
    if (name == "keys") return Value(iterate(obj));
    if (name == "values") {
      Array out;
      for (auto& [_, v] : o.items) out.push_back(v);
      return Value(std::move(out));
    }
    if (name == "get") {
      Value k = a.get(0, "key");
      const Value* v = k.is_string() ? o.find(k.as_string()) : nullptr;
      return v ? *v : a.get(1, "default", Value(nullptr));
    }
  }
  if (obj.is_array()) {
    const Array& arr = obj.as_array();
    if (name == "index" || name == "count") {
      Value x = a.get(0, "value");
      int64_t n = 0;
      for (size_t i = 0; i < arr.size(); ++i)
        if (values_equal(arr[i], x)) {
          if (name == "index") return Value(int64_t(i));
          ++n;
        }
      if (name == "index") fail("{} is not in list", x.repr());
      return Value(n);
    }
  }
  return std::nullopt;
}

void add_globals(Object& g) {
  g.set("range", Value::function([](Args& a) {
    std::vector<int64_t> n;
    for (auto& v : a.pos) {
      if (!v.is_int()) fail("range() arguments must be integers, got {}", v.type_name());
      n.push_back(v.as_int());
    }
    if (n.empty() || n.size() > 3) fail("range expected 1 to 3 arguments, got {}", n.size());
    int64_t start = n.size() > 1 ? n[0] : 0, stop = n.size() > 1 ? n[1] : n[0], step = n.size() > 2 ? n[2] : 1;
    if (step == 0) fail("range() arg 3 must not be zero");
    Array out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      if (out.size() >= 1000000) fail("range() too long for a template (over 1,000,000 items)");
      out.emplace_back(i);
      if (__builtin_add_overflow(i, step, &i)) break;
    }
    return Value(std::move(out));
  }));
  auto make_object = [](Args& a, bool ns) {
    auto o = Object::make();
    o->is_namespace = ns;
    for (auto& p : a.pos) {
      if (!p.is_object()) fail("{}() positional argument must be a dict", ns ? "namespace" : "dict");
      for (auto& [k, v] : p.as_object().items) o->set(k, v);
    }
    for (auto& [k, v] : a.kw) o->set(k, v);
    return Value(o);
  };
  g.set("namespace", Value::function([make_object](Args& a) { return make_object(a, true); }));
  g.set("dict", Value::function([make_object](Args& a) { return make_object(a, false); }));
  g.set("raise_exception", Value::function([](Args& a) -> Value {
    fail("chat template raised an exception: {}", a.get(0, "message").str());
  }));
  g.set("strftime_now", Value::function([](Args& a) {
    Value f = a.get(0, "format");
    if (!f.is_string()) fail("strftime_now() expects a format string");
    std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[256];
    size_t n = std::strftime(buf, sizeof buf, f.as_string().c_str(), &tm);
    return Value(std::string(buf, n));
  }));
}

}  // namespace bs::tok::jinja
