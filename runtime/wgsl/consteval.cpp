// Constant evaluation: the arithmetic of const- and override-expressions, with WGSL's rules
// (integer overflow, division by zero and oversized shifts are errors here, not wraps).
#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "runtime/base/half.h"
#include "runtime/wgsl/resolver.h"

namespace bs::wgsl {

namespace {

bool is_float_kind(const Type* t) { return is_float_scalar(t); }

Value scalar(const Type* t, int64_t i, double f = 0) {
  Value v;
  v.type = t;
  v.i = i;
  v.f = f;
  return v;
}
Value fscalar(const Type* t, double f) { return scalar(t, 0, f); }

[[noreturn]] void cfail(std::string msg) { throw ConstError{std::move(msg)}; }

// The type of one component of `t` (column vector for a matrix).
const Type* component_type(TypeTable& T, const Type* t) {
  if (t->kind == TypeKind::mat) return T.vec(t->rows, t->elem);
  return t->elem;
}

double round_to(const Type* t, double x) {
  if (t->kind == TypeKind::f32) return double(float(x));
  if (t->kind == TypeKind::f16) return double(bs::round_half(float(x)));
  return x;
}

Value convert_scalar(const Value& v, const Type* to) {
  const Type* from = v.type;
  if (to->kind == TypeKind::bool_) return scalar(to, is_float_kind(from) ? v.f != 0 : v.i != 0);
  if (is_float_kind(to)) {
    double x = is_float_kind(from) ? v.f : double(v.i);
    Value out = fscalar(to, round_to(to, x));
    check_representable(out);
    return out;
  }
  // Integer targets.
  int64_t lo = 0, hi = 0;
  if (to->kind == TypeKind::i32) lo = INT32_MIN, hi = INT32_MAX;
  if (to->kind == TypeKind::u32) lo = 0, hi = UINT32_MAX;
  if (to->kind == TypeKind::abstract_int) lo = INT64_MIN, hi = INT64_MAX;
  if (is_float_kind(from)) {
    // Round toward zero, then saturate (the same rule as at run time).
    double t = std::trunc(v.f);
    if (t <= double(lo)) return scalar(to, lo);
    if (t >= double(hi)) return scalar(to, hi);
    return scalar(to, int64_t(t));
  }
  if (from->kind == TypeKind::abstract_int) {
    if (v.i < lo || v.i > hi) cfail(fmt::format("value {} does not fit in {}", v.i, type_name(to)));
    return scalar(to, v.i);
  }
  // i32 <-> u32 keep the bit pattern; bool gives 0/1.
  uint32_t bits = uint32_t(uint64_t(v.i));
  if (to->kind == TypeKind::i32) return scalar(to, int64_t(int32_t(bits)));
  if (to->kind == TypeKind::u32) return scalar(to, int64_t(bits));
  return scalar(to, v.i);
}

template <class F>
Value map1(TypeTable& T, const Value& a, const Type* result, F f) {
  if (is_scalar(result)) return f(a, result);
  Value out;
  out.type = result;
  const Type* ct = component_type(T, result);
  for (size_t i = 0; i < a.elems.size(); ++i) out.elems.push_back(map1(T, a.elems[i], ct, f));
  return out;
}

// Component-wise over two operands, broadcasting a scalar against a vector.
template <class F>
Value map2(TypeTable& T, const Value& a, const Value& b, const Type* result, F f) {
  if (is_scalar(result)) return f(a, b, result);
  Value out;
  out.type = result;
  const Type* ct = component_type(T, result);
  size_t n = std::max(a.elems.size(), b.elems.size());
  for (size_t i = 0; i < n; ++i) {
    const Value& x = a.elems.empty() ? a : a.elems[i];
    const Value& y = b.elems.empty() ? b : b.elems[i];
    out.elems.push_back(map2(T, x, y, ct, f));
  }
  return out;
}

int64_t int_result(const Type* t, __int128 r, const char* op) {
  __int128 lo = INT64_MIN, hi = INT64_MAX;
  if (t->kind == TypeKind::i32) lo = INT32_MIN, hi = INT32_MAX;
  if (t->kind == TypeKind::u32) lo = 0, hi = UINT32_MAX;
  if (r < lo || r > hi) cfail(fmt::format("'{}' overflows {} in a constant expression", op, type_name(t)));
  return int64_t(r);
}

double float_result(const Type* t, double x, const char* op) {
  double r = round_to(t, x);
  double max = t->kind == TypeKind::f16 ? 65504.0 : t->kind == TypeKind::f32 ? double(FLT_MAX) : DBL_MAX;
  if (!std::isfinite(r) || std::fabs(r) > max)
    cfail(fmt::format("'{}' is not finite in {} in a constant expression", op, type_name(t)));
  return r;
}

uint32_t bit_width(const Type* t) { return t->kind == TypeKind::abstract_int ? 64 : 32; }

}  // namespace

Value splat(TypeTable& T, const Value& s, const Type* vec) {
  (void)T;
  Value out;
  out.type = vec;
  out.elems.assign(vec->n, s);
  return out;
}

Value zero_value(TypeTable& T, const Type* t) {
  if (is_scalar(t)) return scalar(t, 0, 0);
  Value out;
  out.type = t;
  if (t->kind == TypeKind::vec || t->kind == TypeKind::mat || t->kind == TypeKind::array) {
    if (t->n > 65536) cfail("constant arrays are limited to 65536 elements");
    out.elems.assign(t->n, zero_value(T, component_type(T, t)));
  } else if (t->kind == TypeKind::struct_) {
    for (const auto& m : t->decl->members) out.elems.push_back(zero_value(T, m.type));
  } else if (t->kind == TypeKind::atomic) {
    return scalar(t->elem, 0);
  }
  return out;
}

Value convert_value(TypeTable& T, const Value& v, const Type* to) {
  if (v.type == to) return v;
  if (is_scalar(to)) {
    if (!is_scalar(v.type)) cfail(fmt::format("cannot convert {} to {}", type_name(v.type), type_name(to)));
    return convert_scalar(v, to);
  }
  Value out;
  out.type = to;
  if (to->kind == TypeKind::struct_) {
    out.elems = v.elems;
    return out;
  }
  const Type* ct = component_type(T, to);
  for (const Value& e : v.elems) out.elems.push_back(convert_value(T, e, ct));
  return out;
}

void check_representable(const Value& v) {
  const Type* t = v.type;
  if (!t) return;
  if (is_float_kind(t)) {
    double max = t->kind == TypeKind::f16 ? 65504.0 : t->kind == TypeKind::f32 ? double(FLT_MAX) : DBL_MAX;
    if (!std::isfinite(v.f) || std::fabs(v.f) > max)
      cfail(fmt::format("value {} is not representable in {}", v.f, type_name(t)));
  } else if (t->kind == TypeKind::i32 && (v.i < INT32_MIN || v.i > INT32_MAX)) {
    cfail(fmt::format("value {} is not representable in i32", v.i));
  } else if (t->kind == TypeKind::u32 && (v.i < 0 || v.i > int64_t(UINT32_MAX))) {
    cfail(fmt::format("value {} is not representable in u32", v.i));
  }
  for (const Value& e : v.elems) check_representable(e);
}

Value eval_unary(TypeTable& T, const std::string& op, const Value& v, const Type* result) {
  return map1(T, v, result, [&](const Value& a, const Type* t) {
    if (op == "!") return scalar(t, !a.i);
    if (op == "~") {
      if (t->kind == TypeKind::u32) return scalar(t, int64_t(~uint32_t(a.i)));
      return scalar(t, ~a.i);
    }
    // Negation.
    if (is_float_kind(t)) return fscalar(t, -a.f);
    return scalar(t, int_result(t, -__int128(a.i), "-"));
  });
}

Value eval_binary(TypeTable& T, const std::string& op, const Value& l, const Value& r, const Type* result) {
  if (l.type && (l.type->kind == TypeKind::mat || r.type->kind == TypeKind::mat) && op == "*")
    throw ConstError{"matrix products are not evaluated at shader-creation time", true};
  return map2(T, l, r, result, [&](const Value& a, const Value& b, const Type* t) -> Value {
    const Type* in = a.type;
    bool flt = is_float_kind(in);
    if (op == "==") return scalar(t, flt ? a.f == b.f : a.i == b.i);
    if (op == "!=") return scalar(t, flt ? a.f != b.f : a.i != b.i);
    if (op == "<") return scalar(t, flt ? a.f < b.f : a.i < b.i);
    if (op == "<=") return scalar(t, flt ? a.f <= b.f : a.i <= b.i);
    if (op == ">") return scalar(t, flt ? a.f > b.f : a.i > b.i);
    if (op == ">=") return scalar(t, flt ? a.f >= b.f : a.i >= b.i);
    if (op == "&&") return scalar(t, a.i && b.i);
    if (op == "||") return scalar(t, a.i || b.i);
    if (t->kind == TypeKind::bool_) {
      if (op == "&") return scalar(t, a.i & b.i);
      if (op == "|") return scalar(t, a.i | b.i);
      if (op == "^") return scalar(t, a.i ^ b.i);
    }
    if (flt) {
      double x = 0;
      if (op == "+") x = a.f + b.f;
      else if (op == "-") x = a.f - b.f;
      else if (op == "*") x = a.f * b.f;
      else if (op == "/") {
        if (b.f == 0) cfail("division by zero in a constant expression");
        x = a.f / b.f;
      } else if (op == "%") {
        if (b.f == 0) cfail("remainder by zero in a constant expression");
        x = a.f - b.f * std::trunc(a.f / b.f);
      } else {
        cfail(fmt::format("operator '{}' does not apply to floats", op));
      }
      return fscalar(t, float_result(t, x, op.c_str()));
    }
    __int128 x = a.i, y = b.i;
    if (op == "+") return scalar(t, int_result(t, x + y, "+"));
    if (op == "-") return scalar(t, int_result(t, x - y, "-"));
    if (op == "*") return scalar(t, int_result(t, x * y, "*"));
    if (op == "/" || op == "%") {
      if (y == 0) cfail(fmt::format("integer {} by zero in a constant expression", op == "/" ? "division" : "remainder"));
      return scalar(t, int_result(t, op == "/" ? x / y : x % y, op.c_str()));
    }
    uint32_t w = bit_width(t);
    uint64_t mask = w == 64 ? ~0ull : 0xffffffffull;
    if (op == "&") return scalar(t, int64_t(uint64_t(a.i) & uint64_t(b.i)));
    if (op == "|") return scalar(t, int64_t(uint64_t(a.i) | uint64_t(b.i)));
    if (op == "^") {
      uint64_t bits = (uint64_t(a.i) ^ uint64_t(b.i)) & mask;
      return scalar(t, t->kind == TypeKind::i32 ? int64_t(int32_t(uint32_t(bits))) : int64_t(bits));
    }
    if (op == "<<" || op == ">>") {
      if (b.i < 0 || uint64_t(b.i) >= w)
        cfail(fmt::format("shift by {} is not less than the bit width {} in a constant expression", b.i, w));
      if (op == ">>") return scalar(t, a.i >> b.i);  // arithmetic for signed, values of u32 are >= 0
      __int128 shifted = x << b.i;
      if (t->kind == TypeKind::u32) {
        if (shifted > __int128(UINT32_MAX)) cfail("'<<' shifts set bits out of a u32 constant");
        return scalar(t, int64_t(shifted));
      }
      return scalar(t, int_result(t, shifted, "<<"));
    }
    cfail(fmt::format("operator '{}' is not supported in a constant expression", op));
  });
}

bool values_equal(const Value& a, const Value& b) {
  if (a.i != b.i || a.f != b.f || a.elems.size() != b.elems.size()) return false;
  for (size_t i = 0; i < a.elems.size(); ++i)
    if (!values_equal(a.elems[i], b.elems[i])) return false;
  return true;
}

std::string value_text(const Value& v) {
  if (!v.elems.empty()) {
    std::string s = type_name(v.type) + "(";
    for (size_t i = 0; i < v.elems.size(); ++i) s += (i ? ", " : "") + value_text(v.elems[i]);
    return s + ")";
  }
  if (v.type && v.type->kind == TypeKind::bool_) return v.i ? "true" : "false";
  if (v.type && is_float_kind(v.type)) return fmt::format("{}", v.f);
  return fmt::format("{}", v.i);
}

bool eval_builtin(TypeTable& T, BuiltinFn fn, const std::vector<Value>& args, const Type* result, Value* out) {
  using B = BuiltinFn;
  auto unary_f = [&](double (*f)(double)) {
    *out = map1(T, args[0], result, [&](const Value& a, const Type* t) { return fscalar(t, float_result(t, f(a.f), "builtin")); });
    return true;
  };
  switch (fn) {
    case B::sqrt: return unary_f([](double x) { return std::sqrt(x); });
    case B::inverseSqrt: return unary_f([](double x) { return 1.0 / std::sqrt(x); });
    case B::exp: return unary_f([](double x) { return std::exp(x); });
    case B::exp2: return unary_f([](double x) { return std::exp2(x); });
    case B::log: return unary_f([](double x) { return std::log(x); });
    case B::log2: return unary_f([](double x) { return std::log2(x); });
    case B::sin: return unary_f([](double x) { return std::sin(x); });
    case B::cos: return unary_f([](double x) { return std::cos(x); });
    case B::tan: return unary_f([](double x) { return std::tan(x); });
    case B::tanh: return unary_f([](double x) { return std::tanh(x); });
    case B::floor: return unary_f([](double x) { return std::floor(x); });
    case B::ceil: return unary_f([](double x) { return std::ceil(x); });
    case B::trunc: return unary_f([](double x) { return std::trunc(x); });
    case B::round: return unary_f([](double x) { return std::nearbyint(x); });  // ties to even
    case B::fract: return unary_f([](double x) { return x - std::floor(x); });
    case B::saturate: return unary_f([](double x) { return std::fmin(std::fmax(x, 0.0), 1.0); });
    case B::degrees: return unary_f([](double x) { return x * 57.29577951308232; });
    case B::radians: return unary_f([](double x) { return x * 0.017453292519943295; });
    case B::abs:
    case B::sign:
      *out = map1(T, args[0], result, [&](const Value& a, const Type* t) {
        if (is_float_kind(t)) return fscalar(t, fn == B::abs ? std::fabs(a.f) : double((a.f > 0) - (a.f < 0)));
        if (fn == B::sign) return scalar(t, (a.i > 0) - (a.i < 0));
        if (t->kind == TypeKind::i32 && a.i == INT32_MIN) return scalar(t, a.i);  // wraps, as at run time
        return scalar(t, a.i < 0 ? int_result(t, -__int128(a.i), "abs") : a.i);
      });
      return true;
    case B::min:
    case B::max:
    case B::pow:
    case B::atan2:
    case B::step:
      *out = map2(T, args[0], args[1], result, [&](const Value& a, const Value& b, const Type* t) {
        if (fn == B::pow) return fscalar(t, float_result(t, std::pow(a.f, b.f), "pow"));
        if (fn == B::atan2) return fscalar(t, float_result(t, std::atan2(a.f, b.f), "atan2"));
        if (fn == B::step) return fscalar(t, b.f >= a.f ? 1.0 : 0.0);
        bool take_a = is_float_kind(t) ? (fn == B::min ? a.f <= b.f : a.f >= b.f) : (fn == B::min ? a.i <= b.i : a.i >= b.i);
        return take_a ? a : b;
      });
      return true;
    case B::clamp: {
      Value lo;
      eval_builtin(T, B::max, {args[0], args[1]}, result, &lo);
      return eval_builtin(T, B::min, {lo, args[2]}, result, out);
    }
    case B::select: {
      const Value& f = args[0];
      const Value& t = args[1];
      const Value& c = args[2];
      if (c.elems.empty()) {
        *out = c.i ? t : f;
      } else {
        *out = f;
        for (size_t i = 0; i < c.elems.size(); ++i)
          if (c.elems[i].i) out->elems[i] = t.elems[i];
      }
      out->type = result;
      return true;
    }
    case B::dot: {
      Value acc = zero_value(T, result);
      for (size_t i = 0; i < args[0].elems.size(); ++i) {
        Value p = eval_binary(T, "*", args[0].elems[i], args[1].elems[i], result);
        acc = eval_binary(T, "+", acc, p, result);
      }
      *out = acc;
      return true;
    }
    case B::all:
    case B::any: {
      if (args[0].elems.empty()) {
        *out = scalar(result, args[0].i);
        return true;
      }
      bool r = fn == B::all;
      for (const Value& e : args[0].elems) r = fn == B::all ? (r && e.i) : (r || e.i);
      *out = scalar(result, r);
      return true;
    }
    case B::countOneBits:
    case B::reverseBits:
      *out = map1(T, args[0], result, [&](const Value& a, const Type* t) {
        uint32_t x = uint32_t(uint64_t(a.i));
        uint32_t r = 0;
        if (fn == B::countOneBits) {
          r = uint32_t(__builtin_popcount(x));
        } else {
          for (int b = 0; b < 32; ++b) r |= ((x >> b) & 1u) << (31 - b);
        }
        return scalar(t, t->kind == TypeKind::i32 ? int64_t(int32_t(r)) : int64_t(r));
      });
      return true;
    default:
      return false;
  }
}

}  // namespace bs::wgsl
