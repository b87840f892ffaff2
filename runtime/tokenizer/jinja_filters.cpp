// Jinja's filters and tests, as HF chat templates use them. tojson is HF's: json.dumps with
// ensure_ascii=False (not Jinja's HTML-safe variant).
#include <unicode/uchar.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja_builtins.h"
#include "runtime/tokenizer/unicode.h"

namespace bs::tok::jinja {

namespace {

int64_t int_arg(const Args& a, size_t i, const char* name, int64_t fallback) {
  Value v = a.get(i, name);
  if (v.is_undefined() || v.is_none()) return fallback;
  if (v.is_bool()) return v.as_bool();
  if (!v.is_int()) fail("argument '{}' must be an integer, got {}", name, v.type_name());
  return v.as_int();
}

int64_t to_int(double d) {
  if (!(d > -9.2e18 && d < 9.2e18)) fail("cannot convert {} to an integer", python_float(d));
  return int64_t(d);
}

// Widths for indent/center: beyond this a template is surely broken, not formatting text.
int64_t width_arg(const Args& a, size_t i, const char* name, int64_t fallback) {
  int64_t w = int_arg(a, i, name, fallback);
  if (w > 100000) fail("{} {} is too large", name, w);
  return w;
}

std::string ascii_escape(const std::string& json) {
  std::string out;
  for (size_t i = 0; i < json.size();) {
    if (static_cast<unsigned char>(json[i]) < 0x80) {
      out += json[i++];
      continue;
    }
    char32_t c = utf8_next(json, i);
    auto unit = [&](unsigned u) { out += fmt::format("\\u{:04x}", u); };
    if (c >= 0x10000) {
      c -= 0x10000;
      unit(0xD800 + unsigned(c >> 10));
      unit(0xDC00 + unsigned(c & 0x3FF));
    } else {
      unit(unsigned(c));
    }
  }
  return out;
}

// Title-cases each word: Python's str.title (py_title) or Jinja's title filter, which only
// starts words after whitespace and -({[<.
std::string title_case(const std::string& s, bool python) {
  std::u32string t = to_u32(s);
  bool prev_cased = false;
  for (auto& c : t) {
    bool starts_word = python ? !prev_cased : (prev_cased == false);
    bool letter = u_isalpha(UChar32(c));
    c = starts_word ? char32_t(u_totitle(UChar32(c))) : char32_t(u_tolower(UChar32(c)));
    if (python) {
      prev_cased = letter;
    } else {
      prev_cased = !(is_whitespace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<');
    }
  }
  return from_u32(t);
}

Value items_of(const Value& v) {
  Array out;
  if (v.is_undefined()) return Value(std::move(out));
  if (!v.is_object()) fail("items filter: expected a dict, got {}", v.type_name());
  for (auto& [k, x] : v.as_object().items) out.emplace_back(Array{Value(k), x});
  return Value(std::move(out));
}

// attribute="a.b" or attribute=0 looks up nested items, as Jinja's make_attrgetter.
Value get_attr_path(const Value& v, const Value& path) {
  if (path.is_int()) return index(v, path);
  if (!path.is_string()) fail("attribute must be a string or an integer");
  Value cur = v;
  std::string p = path.as_string();
  size_t start = 0;
  while (true) {
    size_t dot = p.find('.', start);
    std::string part = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool digits = !part.empty() && part.size() < 18 && std::all_of(part.begin(), part.end(), ::isdigit);
    cur = digits && cur.is_array() ? index(cur, Value(int64_t(std::stoll(part)))) : attribute(cur, part);
    if (dot == std::string::npos) return cur;
    start = dot + 1;
  }
}

// The rest of the positional arguments after `skip`, for map/select passing them on.
Args rest_args(const Args& a, size_t skip) {
  Args r;
  for (size_t i = skip; i < a.pos.size(); ++i) r.pos.push_back(a.pos[i]);
  r.kw = a.kw;
  return r;
}

Value select_like(const Value& subject, const Args& a, bool want, bool by_attr) {
  Array out;
  size_t skip = by_attr ? 1 : 0;
  Value attr = by_attr ? a.get(0, "attribute") : Value();
  Value test = a.pos.size() > skip ? a.pos[skip] : Value();
  Args test_args = rest_args(a, skip + 1);
  test_args.kw.clear();
  for (auto& item : iterate(subject)) {
    Value x = by_attr ? get_attr_path(item, attr) : item;
    bool ok = test.is_undefined() ? x.truthy() : apply_test(test.str(), x, test_args);
    if (ok == want) out.push_back(item);
  }
  return Value(std::move(out));
}

Value sorted(const Value& subject, const Args& a) {
  bool reverse = a.get(0, "reverse", Value(false)).truthy();
  bool case_sensitive = a.get(1, "case_sensitive", Value(false)).truthy();
  Value attr = a.get(2, "attribute");
  std::vector<Value> items = iterate(subject);
  auto key = [&](const Value& v) {
    Value k = attr.is_undefined() || attr.is_none() ? v : get_attr_path(v, attr);
    return !case_sensitive && k.is_string() ? Value(unicode_lowercase(k.as_string())) : k;
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    int c = values_compare(key(x), key(y));
    return reverse ? c > 0 : c < 0;
  });
  return Value(std::move(items));
}

}  // namespace

Value apply_filter(const std::string& name, const Value& v, const Args& a) {
  if (name == "length" || name == "count") return Value(length(v));
  if (name == "string") return Value(v.str());
  if (name == "format") {  // Jinja: soft_str(value) % (kwargs or args)
    if (!a.pos.empty() && !a.kw.empty()) fail("format filter: positional and keyword arguments cannot be mixed");
    if (a.kw.empty()) return Value(percent_format(v.str(), a.pos, nullptr));
    auto o = Object::make();
    for (const auto& [k, val] : a.kw) o->set(k, val);
    Value mapping(o);
    return Value(percent_format(v.str(), {mapping}, &mapping));
  }
  if (name == "trim") return Value(python_strip(v.str(), a.get(0, "chars"), true, true));
  if (name == "upper") return Value(unicode_uppercase(v.str()));
  if (name == "lower") return Value(unicode_lowercase(v.str()));
  if (name == "title") return Value(title_case(v.str(), false));
  if (name == "py_title") return Value(title_case(v.str(), true));
  if (name == "capitalize") {
    std::u32string t = to_u32(unicode_lowercase(v.str()));
    if (!t.empty()) t[0] = char32_t(u_totitle(UChar32(t[0])));
    return Value(from_u32(t));
  }
  if (name == "safe" || name == "e" || name == "escape") {
    if (name == "safe") return v;
    std::string out;
    for (char c : v.str()) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&#34;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
      }
    }
    return Value(out);
  }
  if (name == "default" || name == "d") {
    bool boolean = a.get(1, "boolean", Value(false)).truthy();
    if (v.is_undefined() || (boolean && !v.truthy())) return a.get(0, "default_value", Value(""));
    return v;
  }
  if (name == "tojson") {
    Value indent = a.get(1, "indent");  // HF: tojson(x, ensure_ascii=False, indent=None, ...)
    if (!indent.is_undefined() && !indent.is_none() && !indent.is_int()) fail("tojson: indent must be an integer");
    std::string s = v.to_json(indent.is_int() ? int(indent.as_int()) : -1, a.get(3, "sort_keys", Value(false)).truthy());
    return Value(a.get(0, "ensure_ascii", Value(false)).truthy() ? ascii_escape(s) : s);
  }
  if (name == "items") return items_of(v);
  if (name == "list") return Value(iterate(v));
  if (name == "first" || name == "last") {
    std::vector<Value> items = iterate(v);
    if (items.empty()) return Value();
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (v.is_string()) {
      std::u32string t = to_u32(v.as_string());
      std::reverse(t.begin(), t.end());
      return Value(from_u32(t));
    }
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "join") {
    std::string sep = a.get(0, "d", Value("")).str(), out;
    Value attr = a.get(1, "attribute");
    bool first = true;
    for (auto& item : iterate(v)) {
      out += (first ? "" : sep) + (attr.is_undefined() ? item : get_attr_path(item, attr)).str();
      first = false;
    }
    return Value(out);
  }
  if (name == "replace") {
    std::string s = v.str(), from = a.get(0, "old").str(), to = a.get(1, "new").str(), out;
    int64_t count = int_arg(a, 2, "count", -1);
    if (from.empty()) {  // Python inserts `to` between characters
      std::u32string t = to_u32(s);
      int64_t n = 0;
      for (size_t i = 0; i <= t.size(); ++i) {
        if (count < 0 || n++ < count) out += to;
        if (i < t.size()) out += from_u32(std::u32string(1, t[i]));
      }
      return Value(out);
    }
    size_t start = 0;
    for (int64_t n = 0; count < 0 || n < count; ++n) {
      size_t p = s.find(from, start);
      if (p == std::string::npos) break;
      out += s.substr(start, p - start) + to;
      start = p + from.size();
    }
    return Value(out + s.substr(start));
  }
  if (name == "map") {
    Array out;
    Value attr = a.get(99, "attribute");
    for (auto& item : iterate(v)) {
      if (!attr.is_undefined()) {
        Value x = get_attr_path(item, attr);
        out.push_back(x.is_undefined() ? a.get(99, "default") : x);
      } else {
        if (a.pos.empty()) fail("map: expected a filter name or attribute=");
        out.push_back(apply_filter(a.pos[0].str(), item, rest_args(a, 1)));
      }
    }
    return Value(std::move(out));
  }
  if (name == "select") return select_like(v, a, true, false);
  if (name == "reject") return select_like(v, a, false, false);
  if (name == "selectattr") return select_like(v, a, true, true);
  if (name == "rejectattr") return select_like(v, a, false, true);
  if (name == "attr") return attribute(v, a.get(0, "name").str());
  if (name == "int") {
    if (v.is_int()) return v;
    if (v.is_bool()) return Value(int64_t(v.as_bool()));
    if (v.is_real()) return Value(to_int(v.as_real()));
    if (v.is_string()) {
      try {
        size_t used = 0;
        std::string s = python_strip(v.as_string(), Value(), true, true);
        int64_t x = std::stoll(s, &used, int(int_arg(a, 1, "base", 10)));
        if (used == s.size()) return Value(x);
        double d = std::stod(s, &used);
        if (used == s.size()) return Value(to_int(d));
      } catch (const std::exception&) {
      }
    }
    return Value(int_arg(a, 0, "default", 0));
  }
  if (name == "float") {
    if (v.is_number()) return Value(v.as_real());
    if (v.is_string()) {
      try {
        size_t used = 0;
        std::string s = python_strip(v.as_string(), Value(), true, true);
        double d = std::stod(s, &used);
        if (used == s.size()) return Value(d);
      } catch (const std::exception&) {
      }
    }
    Value d = a.get(0, "default", Value(0.0));
    return d;
  }
  if (name == "abs") {
    if (v.is_int()) {
      if (v.as_int() == INT64_MIN) fail("integer overflow in abs");
      return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.is_real()) return Value(std::fabs(v.as_real()));
    fail("bad operand type for abs(): '{}'", v.type_name());
  }
  if (name == "round") {
    if (!v.is_number()) fail("round: expected a number, got {}", v.type_name());
    int64_t prec = int_arg(a, 0, "precision", 0);
    std::string method = a.get(1, "method", Value("common")).str();
    double m = std::pow(10.0, double(prec)), x = v.as_real() * m;
    x = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::round(x);
    return Value(x / m);
  }
  if (name == "sort") return sorted(v, a);
  if (name == "dictsort") {
    Value pairs = items_of(v);
    return sorted(pairs, Args{{a.get(2, "reverse", Value(false)), a.get(0, "case_sensitive", Value(false)),
                               Value(int64_t(a.get(1, "by", Value("key")).str() == "value" ? 1 : 0))},
                              {}});
  }
  if (name == "unique") {
    Array out;
    for (auto& item : iterate(v))
      if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return values_equal(o, item); }))
        out.push_back(item);
    return Value(std::move(out));
  }
  if (name == "sum") {
    Value attr = a.get(0, "attribute"), total = a.get(1, "start", Value(int64_t(0)));
    for (auto& item : iterate(v)) {
      Value x = attr.is_undefined() ? item : get_attr_path(item, attr);
      if (!x.is_number() || !total.is_number()) fail("sum: expected numbers, got {}", x.type_name());
      int64_t sum = 0;
      if (total.is_int() && x.is_int()) {
        if (__builtin_add_overflow(total.as_int(), x.as_int(), &sum)) fail("integer overflow in sum");
        total = Value(sum);
      } else {
        total = Value(total.as_real() + x.as_real());
      }
    }
    return total;
  }
  if (name == "min" || name == "max") {
    Value best;
    for (auto& item : iterate(v))
      if (best.is_undefined() || values_compare(item, best) * (name == "min" ? -1 : 1) > 0) best = item;
    return best;
  }
  if (name == "indent") {
    int64_t width = width_arg(a, 0, "width", 4);
    bool first = a.get(1, "first", Value(false)).truthy(), blank = a.get(2, "blank", Value(false)).truthy();
    std::string pad(size_t(std::max<int64_t>(0, width)), ' '), s = v.str(), out;
    size_t start = 0;
    bool is_first = true;
    while (true) {
      size_t nl = s.find('\n', start);
      std::string line = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      bool indent = is_first ? first : (blank || !line.empty());
      out += (indent ? pad : "") + line;
      if (nl == std::string::npos) break;
      out += '\n';
      start = nl + 1;
      is_first = false;
    }
    return Value(out);
  }
  if (name == "wordcount") return Value(int64_t(call_method(Value(v.str()), "split", Args{})->as_array().size()));
  if (name == "center") {
    std::u32string t = to_u32(v.str());
    int64_t width = width_arg(a, 0, "width", 80), n = int64_t(t.size());
    if (width <= n) return Value(v.str());
    int64_t left = (width - n) / 2 + ((width - n) % 2 & width % 2);
    return Value(std::string(size_t(left), ' ') + v.str() + std::string(size_t(width - n - left), ' '));
  }
  fail("unknown filter '{}'", name);
}

bool apply_test(const std::string& name, const Value& v, const Args& a) {
  using T = Value::Type;
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_real();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_object();
  if (name == "iterable") return v.type() == T::array || v.type() == T::object || v.type() == T::string;
  if (name == "sequence") return v.type() == T::array || v.type() == T::object || v.type() == T::string;
  if (name == "callable") return v.is_function();
  if (name == "lower") return v.is_string() && unicode_lowercase(v.as_string()) == v.as_string();
  if (name == "upper") return v.is_string() && unicode_uppercase(v.as_string()) == v.as_string();
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!v.is_int()) fail("test '{}' expects an integer, got {}", name, v.type_name());
    if (name == "divisibleby") {
      int64_t d = int_arg(a, 0, "num", 0);
      if (d == 0) fail("divisibleby(0)");
      return v.as_int() % d == 0;
    }
    return (((v.as_int() % 2) + 2) % 2 == 1) == (name == "odd");
  }
  Value other = a.get(0, "other");
  if (name == "eq" || name == "equalto" || name == "==") return values_equal(v, other);
  if (name == "ne" || name == "!=") return !values_equal(v, other);
  if (name == "lt" || name == "lessthan" || name == "<") return values_compare(v, other) < 0;
  if (name == "le" || name == "<=") return values_compare(v, other) <= 0;
  if (name == "gt" || name == "greaterthan" || name == ">") return values_compare(v, other) > 0;
  if (name == "ge" || name == ">=") return values_compare(v, other) >= 0;
  if (name == "in") return contains(a.get(0, "seq"), v);
  if (name == "sameas") {
    if (v.identity() || other.identity()) return v.identity() == other.identity();
    return v.type() == other.type() && values_equal(v, other);
  }
  fail("unknown test '{}'", name);
}

}  // namespace bs::tok::jinja
