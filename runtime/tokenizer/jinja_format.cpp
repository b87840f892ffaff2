// Python's printf-style string formatting, `fmt % args`, for the `%` operator on a string and the
// `format` filter (Jinja's format filter is exactly `fmt % args`). Templates use it for things like
// 'Image %d: ' % i or "%.2f"|format(x).
#include <cmath>
#include <cstdio>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja_builtins.h"

namespace bs::tok::jinja {

namespace {

constexpr size_t kMaxFormatted = 64u << 20;  // Limits::max_output's default

struct Spec {
  std::string flags;
  int width = -1, precision = -1;
  char conv = 's';
};

// C's snprintf for one numeric conversion with the spec's flags, width and precision.
template <class T>
std::string c_format(const Spec& s, char conv, const char* length, T v) {
  std::string f = "%" + s.flags;
  if (s.width >= 0) f += std::to_string(s.width);
  if (s.precision >= 0) f += "." + std::to_string(s.precision);
  f += length;
  f += conv;
  int n = std::snprintf(nullptr, 0, f.c_str(), v);
  if (n < 0) fail("bad format '{}'", f);
  std::string out(size_t(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), f.c_str(), v);
  out.resize(size_t(n));
  return out;
}

std::string pad(std::string s, const Spec& spec) {
  size_t len = to_u32(s).size();
  if (spec.width < 0 || size_t(spec.width) <= len) return s;
  std::string fill(size_t(spec.width) - len, ' ');
  return spec.flags.find('-') != std::string::npos ? s + fill : fill + s;
}

std::string convert(const Spec& spec, const Value& v) {
  switch (spec.conv) {
    case 's':
    case 'r':
    case 'a': {
      std::string s = spec.conv == 's' ? v.str() : v.repr();
      if (spec.precision >= 0) {
        std::u32string u = to_u32(s);
        if (u.size() > size_t(spec.precision)) s = from_u32(u.substr(0, size_t(spec.precision)));
      }
      return pad(s, spec);
    }
    case 'c': {
      if (v.is_string() && to_u32(v.as_string()).size() == 1) return pad(v.as_string(), spec);
      if (v.is_int() && v.as_int() >= 0 && v.as_int() <= 0x10FFFF)
        return pad(from_u32(std::u32string(1, char32_t(v.as_int()))), spec);
      fail("%c requires an int or a single character, not {}", v.type_name());
    }
    case 'd':
    case 'i':
    case 'u':
    case 'o':
    case 'x':
    case 'X': {
      int64_t n;
      if (v.is_bool())
        n = v.as_bool();
      else if (v.is_int())
        n = v.as_int();
      else if (v.is_real() && (spec.conv == 'd' || spec.conv == 'i' || spec.conv == 'u') &&
               std::isfinite(v.as_real()))
        n = int64_t(std::trunc(v.as_real()));
      else
        fail("%{} format: {} is required, not {}", spec.conv,
             spec.conv == 'd' || spec.conv == 'i' || spec.conv == 'u' ? "a real number" : "an integer",
             v.type_name());
      Spec s = spec;
      s.precision = -1;
      const char conv = spec.conv == 'i' || spec.conv == 'u' ? 'd' : spec.conv;
      if (conv == 'd') return c_format(s, conv, "ll", static_cast<long long>(n));
      // Python prints the sign of a negative octal/hex ("-0x1f"); C would print the two's complement.
      const bool alt = s.flags.find('#') != std::string::npos;
      const unsigned long long magnitude = n < 0 ? uint64_t(-(n + 1)) + 1ull : uint64_t(n);
      std::string body = c_format(Spec{"", -1, -1, conv}, conv, "ll", magnitude);
      if (alt) body = (conv == 'o' ? "0o" : conv == 'x' ? "0x" : "0X") + body;
      if (n < 0)
        body = "-" + body;
      else if (s.flags.find('+') != std::string::npos)
        body = "+" + body;
      else if (s.flags.find(' ') != std::string::npos)
        body = " " + body;
      if (s.flags.find('0') != std::string::npos && s.flags.find('-') == std::string::npos && s.width > 0 &&
          body.size() < size_t(s.width)) {
        size_t at = (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0;
        if (body.compare(at, 2, "0x") == 0 || body.compare(at, 2, "0X") == 0 ||
            body.compare(at, 2, "0o") == 0)
          at += 2;
        body.insert(at, size_t(s.width) - body.size(), '0');
      }
      return pad(body, s);
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      if (!v.is_number() && !v.is_bool()) fail("must be real number, not {}", v.type_name());
      double d = v.is_bool() ? double(v.as_bool()) : v.as_real();
      return c_format(spec, spec.conv, "", d);
    }
    default:
      fail("unsupported format character '{}'", spec.conv);
  }
}

}  // namespace

std::string percent_format(std::string_view fmt, const std::vector<Value>& args, const Value* mapping) {
  std::string out;
  size_t next = 0;
  bool used_mapping = false;
  auto take = [&]() -> const Value& {
    if (next >= args.size()) fail("not enough arguments for format string");
    return args[next++];
  };
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) fail("incomplete format");
    if (fmt[i] == '%') {
      out += '%';
      continue;
    }
    Spec s;
    const Value* keyed = nullptr;
    if (fmt[i] == '(') {
      size_t close = fmt.find(')', i);
      if (close == std::string_view::npos) fail("incomplete format key");
      if (!mapping || !mapping->is_object()) fail("format requires a mapping");
      std::string key(fmt.substr(i + 1, close - i - 1));
      keyed = mapping->as_object().find(key);
      if (!keyed) fail("format key '{}' is missing", key);
      used_mapping = true;
      i = close + 1;
    }
    while (i < fmt.size() && std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos)
      s.flags += fmt[i++];
    auto number = [&](int& field) {
      if (i < fmt.size() && fmt[i] == '*') {
        const Value& w = take();
        if (!w.is_int()) fail("* wants int");
        field = int(std::clamp<int64_t>(w.as_int(), -1, 4096));
        ++i;
        return;
      }
      if (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') field = 0;
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9')
        field = std::min(field * 10 + (fmt[i++] - '0'), 4096);
    };
    number(s.width);
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      s.precision = 0;
      number(s.precision);
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) fail("incomplete format");
    s.conv = fmt[i];
    if (std::string_view("sradiuoxXeEfFgGc").find(s.conv) == std::string_view::npos)
      fail("unsupported format character '{}' at index {}", s.conv, i);
    out += convert(s, keyed ? *keyed : take());
    // Each conversion is at most 4096 wide, but a long format of them must not outgrow memory
    // before the evaluator's output limit sees the result.
    if (out.size() > kMaxFormatted) fail("formatted string longer than {} bytes", kMaxFormatted);
  }
  if (!used_mapping && next < args.size()) fail("not all arguments converted during string formatting");
  return out;
}

std::string percent_format(std::string_view fmt, const Value& rhs) {
  // Python unpacks a tuple; templates have no tuples apart from literals, which are lists here. A
  // list is unpacked when the format has as many conversions as it has items, else it is one value.
  size_t convs = 0;  // arguments the format consumes: one per conversion, one per '*'
  for (size_t i = 0; i + 1 < fmt.size(); ++i) {
    if (fmt[i] != '%') continue;
    if (fmt[++i] == '%') continue;
    ++convs;
    if (fmt[i] == '(') i = std::min(fmt.find(')', i), fmt.size() - 1) + 1;
    for (; i < fmt.size() && std::string_view("-+ #0123456789.*hlL").find(fmt[i]) != std::string_view::npos;
         ++i)
      convs += fmt[i] == '*';
  }
  if (rhs.is_array() && (rhs.as_array().size() == convs && convs != 1))
    return percent_format(fmt, rhs.as_array(), nullptr);
  if (rhs.is_object())
    return percent_format(
        fmt,
        convs && fmt.find("%(") != std::string_view::npos ? std::vector<Value>{} : std::vector<Value>{rhs},
        &rhs);
  return percent_format(fmt, std::vector<Value>{rhs}, nullptr);
}

}  // namespace bs::tok::jinja
