#include "rdrr/gguf.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "rdrr/checked.h"
#include "runtime/base/error.h"

namespace bs::gguf {

namespace {

constexpr GgmlTypeTraits kTypes[] = {
    {GgmlType::F32, "F32", 1, 4},        {GgmlType::F16, "F16", 1, 2},       {GgmlType::Q4_0, "Q4_0", 32, 18},
    {GgmlType::Q4_1, "Q4_1", 32, 20},    {GgmlType::Q5_0, "Q5_0", 32, 22},   {GgmlType::Q5_1, "Q5_1", 32, 24},
    {GgmlType::Q8_0, "Q8_0", 32, 34},    {GgmlType::Q8_1, "Q8_1", 32, 36},   {GgmlType::Q2_K, "Q2_K", 256, 84},
    {GgmlType::Q3_K, "Q3_K", 256, 110},  {GgmlType::Q4_K, "Q4_K", 256, 144}, {GgmlType::Q5_K, "Q5_K", 256, 176},
    {GgmlType::Q6_K, "Q6_K", 256, 210},  {GgmlType::Q8_K, "Q8_K", 256, 292}, {GgmlType::I8, "I8", 1, 1},
    {GgmlType::I16, "I16", 1, 2},        {GgmlType::I32, "I32", 1, 4},       {GgmlType::I64, "I64", 1, 8},
    {GgmlType::F64, "F64", 1, 8},        {GgmlType::BF16, "BF16", 1, 2},
    // The importance-matrix, ternary and MXFP4 types: known so that a file holding them parses and the
    // import can name them (block sizes from ggml-common.h's static_asserts).
    {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66}, {GgmlType::IQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98}, {GgmlType::IQ1_S, "IQ1_S", 256, 50},
    {GgmlType::IQ4_NL, "IQ4_NL", 32, 18},    {GgmlType::IQ3_S, "IQ3_S", 256, 110},
    {GgmlType::IQ2_S, "IQ2_S", 256, 82},     {GgmlType::IQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::IQ1_M, "IQ1_M", 256, 56},     {GgmlType::TQ1_0, "TQ1_0", 256, 54},
    {GgmlType::TQ2_0, "TQ2_0", 256, 66},     {GgmlType::MXFP4, "MXFP4", 32, 17},
};

constexpr std::pair<DType, GgmlType> kDTypeMap[] = {
    {DType::F32, GgmlType::F32},   {DType::F16, GgmlType::F16},   {DType::BF16, GgmlType::BF16},
    {DType::Q8_0, GgmlType::Q8_0}, {DType::Q4_K, GgmlType::Q4_K}, {DType::Q6_K, GgmlType::Q6_K},
    {DType::I32, GgmlType::I32},   {DType::MXFP4, GgmlType::MXFP4},  // GGML's block_mxfp4 is blueshift's
};

// Bytes of one element of a scalar value type; 0 for string and array.
uint32_t scalar_size(ValueType t) {
  switch (t) {
    case ValueType::u8: case ValueType::i8: case ValueType::boolean: return 1;
    case ValueType::u16: case ValueType::i16: return 2;
    case ValueType::u32: case ValueType::i32: case ValueType::f32: return 4;
    case ValueType::u64: case ValueType::i64: case ValueType::f64: return 8;
    default: return 0;
  }
}

bool is_signed(ValueType t) {
  return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}
bool is_float(ValueType t) { return t == ValueType::f32 || t == ValueType::f64; }

// Thrown when `bytes` is a prefix of the file that ends inside the header: read_header reads more.
struct NeedMore {};

// Bounds-checked little-endian cursor over the header bytes (a prefix of a file of file_size bytes).
struct Cursor {
  std::span<const std::byte> b;
  uint64_t file_size;
  uint64_t pos = 0;
  const std::string& label;

  uint64_t left_in_file() const { return file_size - pos; }
  void need(uint64_t n, const char* what) {
    if (n <= b.size() - pos) return;
    if (b.size() < file_size) throw NeedMore{};
    fail("{}: truncated at byte {}: {} needs {} bytes, {} remain", label, pos, what, n, b.size() - pos);
  }
  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string string(const char* what) {
    uint64_t n = read<uint64_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(b.data() + pos), n);
    pos += n;
    return s;
  }
  // Reads one scalar (not string/array) of type t into the variant slot its kind uses.
  void scalar(ValueType t, uint64_t& u, int64_t& i, double& f, const char* what) {
    switch (t) {
      case ValueType::u8: u = read<uint8_t>(what); break;
      case ValueType::boolean: u = read<uint8_t>(what); break;
      case ValueType::i8: i = read<int8_t>(what); break;
      case ValueType::u16: u = read<uint16_t>(what); break;
      case ValueType::i16: i = read<int16_t>(what); break;
      case ValueType::u32: u = read<uint32_t>(what); break;
      case ValueType::i32: i = read<int32_t>(what); break;
      case ValueType::f32: f = read<float>(what); break;
      case ValueType::u64: u = read<uint64_t>(what); break;
      case ValueType::i64: i = read<int64_t>(what); break;
      case ValueType::f64: f = read<double>(what); break;
      default: break;
    }
  }
};

bool known_value_type(uint32_t t) { return t <= uint32_t(ValueType::f64); }

Value read_value(Cursor& c, const std::string& key) {
  Value v;
  uint32_t t = c.read<uint32_t>("metadata value type");
  if (!known_value_type(t)) fail("{}: metadata '{}': value type {} is not a GGUF type (0..12)", c.label, key, t);
  v.type = ValueType(t);
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  if (v.type == ValueType::string) {
    v.v = c.string("metadata string");
  } else if (v.type != ValueType::array) {
    c.scalar(v.type, u, i, f, "metadata value");
    if (is_float(v.type)) v.v = f; else if (is_signed(v.type)) v.v = i; else v.v = u;
  } else {
    uint32_t e = c.read<uint32_t>("array element type");
    if (!known_value_type(e) || ValueType(e) == ValueType::array)
      fail("{}: metadata '{}': array element type {} is not supported (scalars and strings only)", c.label, key, e);
    v.elem = ValueType(e);
    uint64_t n = c.read<uint64_t>("array length");
    // Each element takes at least one byte (a string eight): a count the file can't hold is rejected
    // before anything is reserved for it.
    uint64_t min_bytes = v.elem == ValueType::string ? 8 : scalar_size(v.elem);
    if (n > c.left_in_file() / min_bytes)
      fail("{}: metadata '{}': array of {} elements does not fit in the {} bytes left", c.label, key, n, c.left_in_file());
    if (v.elem == ValueType::string) {
      std::vector<std::string> a(n);
      for (auto& s : a) s = c.string("array string");
      v.v = std::move(a);
    } else if (is_float(v.elem)) {
      std::vector<double> a(n);
      for (auto& x : a) c.scalar(v.elem, u, i, x, "array element");
      v.v = std::move(a);
    } else if (is_signed(v.elem)) {
      std::vector<int64_t> a(n);
      for (auto& x : a) c.scalar(v.elem, u, x, f, "array element");
      v.v = std::move(a);
    } else {
      std::vector<uint64_t> a(n);
      for (auto& x : a) c.scalar(v.elem, x, i, f, "array element");
      v.v = std::move(a);
    }
  }
  return v;
}

}  // namespace

std::optional<GgmlTypeTraits> ggml_traits(GgmlType t) {
  for (const auto& tr : kTypes)
    if (tr.type == t) return tr;
  return std::nullopt;
}

std::optional<GgmlType> ggml_type_of(DType t) {
  for (auto [d, g] : kDTypeMap)
    if (d == t) return g;
  return std::nullopt;
}

std::optional<DType> dtype_of(GgmlType t) {
  for (auto [d, g] : kDTypeMap)
    if (g == t) return d;
  return std::nullopt;
}

std::optional<uint64_t> tensor_bytes(GgmlType t, std::span<const uint64_t> ne) {
  auto tr = ggml_traits(t);
  if (!tr || ne.empty() || ne[0] % tr->block_elems) return std::nullopt;
  std::optional<uint64_t> n = ne[0] / tr->block_elems * tr->block_bytes;
  for (size_t i = 1; i < ne.size() && n; ++i) n = checked_mul(*n, ne[i]);
  return n;
}

std::optional<uint64_t> Value::as_uint() const {
  if (auto* u = std::get_if<uint64_t>(&v)) return *u;
  if (auto* i = std::get_if<int64_t>(&v); i && *i >= 0) return uint64_t(*i);
  return std::nullopt;
}

std::optional<int64_t> Value::as_int() const {
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  if (auto* u = std::get_if<uint64_t>(&v); u && *u <= uint64_t(INT64_MAX)) return int64_t(*u);
  return std::nullopt;
}

std::optional<double> Value::as_float() const {
  if (auto* f = std::get_if<double>(&v)) return *f;
  return std::nullopt;
}

const std::string* Value::as_string() const { return std::get_if<std::string>(&v); }

const Value* Header::find(std::string_view key) const {
  for (const auto& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

const TensorInfo* Header::tensor(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

Header parse(std::span<const std::byte> bytes, uint64_t file_size, const std::string& label) {
  if (bytes.size() > file_size) fail("{}: {} header bytes but the file has {}", label, bytes.size(), file_size);
  Cursor c{bytes, file_size, 0, label};
  Header h;
  c.need(4, "magic");
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) fail("{}: not a GGUF file (magic is not \"GGUF\")", label);
  c.pos = 4;
  h.version = c.read<uint32_t>("version");
  if (h.version != 2 && h.version != 3) fail("{}: GGUF version {} is not supported (expected 2 or 3)", label, h.version);
  uint64_t n_tensors = c.read<uint64_t>("tensor count");
  uint64_t n_kv = c.read<uint64_t>("metadata count");
  // A metadata entry takes at least 12 bytes (key length, type), a tensor info at least 28.
  if (n_kv > c.left_in_file() / 12) fail("{}: metadata count {} does not fit in the file", label, n_kv);
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = c.string("metadata key");
    for (const auto& kv : h.metadata)
      if (kv.key == key) fail("{}: metadata key '{}' appears twice", label, key);
    Value v = read_value(c, key);
    h.metadata.push_back({std::move(key), std::move(v)});
  }
  if (const Value* a = h.find(kKeyAlignment)) {
    auto al = a->as_uint();
    if (a->type != ValueType::u32 || !al || *al == 0 || (*al & (*al - 1)))
      fail("{}: {} must be a u32 power of two, got {}", label, kKeyAlignment, al ? std::to_string(*al) : "another type");
    h.alignment = uint32_t(*al);
  }
  if (n_tensors > c.left_in_file() / 28) fail("{}: tensor count {} does not fit in the file", label, n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    TensorInfo t;
    t.name = c.string("tensor name");
    uint32_t nd = c.read<uint32_t>("tensor n_dims");
    if (nd == 0 || nd > kMaxDims) fail("{}: tensor '{}': n_dims {} (expected 1..{})", label, t.name, nd, kMaxDims);
    for (uint32_t d = 0; d < nd; ++d) t.ne.push_back(c.read<uint64_t>("tensor dim"));
    uint32_t type = c.read<uint32_t>("tensor type");
    t.type = GgmlType(type);
    auto tr = ggml_traits(t.type);
    if (!tr) fail("{}: tensor '{}': ggml type {} is unknown", label, t.name, type);
    auto size = tensor_bytes(t.type, t.ne);
    if (!size)
      fail("{}: tensor '{}': {} ne[0] = {} is not a whole number of {}-element blocks, or the size overflows", label,
           t.name, tr->name, t.ne[0], tr->block_elems);
    t.size = *size;
    t.offset = c.read<uint64_t>("tensor offset");
    if (t.offset % h.alignment)
      fail("{}: tensor '{}': offset {} is not a multiple of the alignment {}", label, t.name, t.offset, h.alignment);
    if (h.tensor(t.name)) fail("{}: tensor '{}' appears twice", label, t.name);
    h.tensors.push_back(std::move(t));
  }
  h.data_offset = (c.pos + h.alignment - 1) / h.alignment * h.alignment;
  for (const auto& t : h.tensors) {
    auto end = checked_add(h.data_offset, t.offset);
    if (end) end = checked_add(*end, t.size);
    if (!end || *end > file_size)
      fail("{}: tensor '{}': data [{} + {}, {} bytes) ends past the end of the file ({} bytes)", label, t.name,
           h.data_offset, t.offset, t.size, file_size);
  }
  return h;
}

}  // namespace

Header parse_header(std::span<const std::byte> bytes, uint64_t file_size, const std::string& label) {
  try {
    return parse(bytes, file_size, label);
  } catch (const NeedMore&) {
    fail("{}: the header runs past the {} bytes given (the file has {})", label, bytes.size(), file_size);
  }
}

Header read_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path);
  uint64_t file_size = std::filesystem::file_size(path);
  // Headers are small next to the data (a 128k-token vocabulary is ~2 MiB): read a prefix, and
  // more only when the header is longer.
  std::vector<std::byte> buf;
  for (uint64_t want = std::min<uint64_t>(file_size, 8u << 20);; want = std::min(file_size, want * 4)) {
    buf.resize(want);
    in.seekg(0);
    in.read(reinterpret_cast<char*>(buf.data()), std::streamsize(want));
    if (uint64_t(in.gcount()) != want) fail("{}: read {} of {} bytes", path, in.gcount(), want);
    try {
      return parse(buf, file_size, path);
    } catch (const NeedMore&) {
    }
  }
}

Writer::Writer(std::string path, uint32_t alignment) : path_(std::move(path)), alignment_(alignment) {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1))) fail("{}: alignment {} is not a power of two", path_, alignment_);
  if (alignment_ != kDefaultAlignment) add(std::string(kKeyAlignment), Value::u32(alignment_));
}

void Writer::add(std::string key, Value v) { metadata_.push_back({std::move(key), std::move(v)}); }

size_t Writer::add_tensor(std::string name, std::vector<uint64_t> ne, GgmlType type) {
  auto size = tensor_bytes(type, ne);
  if (!size || ne.size() > kMaxDims)
    fail("{}: tensor '{}': dims do not fit type {}", path_, name, ggml_traits(type) ? ggml_traits(type)->name : "?");
  TensorInfo t{std::move(name), std::move(ne), type, data_size_, *size};
  data_size_ += (t.size + alignment_ - 1) / alignment_ * alignment_;
  tensors_.push_back(std::move(t));
  return tensors_.size() - 1;
}

namespace {

template <class T>
void put(std::ofstream& o, uint64_t& pos, T v) {
  o.write(reinterpret_cast<const char*>(&v), sizeof(T));
  pos += sizeof(T);
}

void put_string(std::ofstream& o, uint64_t& pos, std::string_view s) {
  put<uint64_t>(o, pos, s.size());
  o.write(s.data(), std::streamsize(s.size()));
  pos += s.size();
}

void put_scalar(std::ofstream& o, uint64_t& pos, ValueType t, uint64_t u, int64_t i, double f) {
  switch (t) {
    case ValueType::u8: case ValueType::boolean: put<uint8_t>(o, pos, uint8_t(u)); break;
    case ValueType::i8: put<int8_t>(o, pos, int8_t(i)); break;
    case ValueType::u16: put<uint16_t>(o, pos, uint16_t(u)); break;
    case ValueType::i16: put<int16_t>(o, pos, int16_t(i)); break;
    case ValueType::u32: put<uint32_t>(o, pos, uint32_t(u)); break;
    case ValueType::i32: put<int32_t>(o, pos, int32_t(i)); break;
    case ValueType::f32: put<float>(o, pos, float(f)); break;
    case ValueType::u64: put<uint64_t>(o, pos, u); break;
    case ValueType::i64: put<int64_t>(o, pos, i); break;
    case ValueType::f64: put<double>(o, pos, f); break;
    default: break;
  }
}

}  // namespace

void Writer::write_header() {
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) fail("{}: cannot create", path_);
  out_.write(kMagic, 4);
  pos_ = 4;
  put<uint32_t>(out_, pos_, kVersion);
  put<uint64_t>(out_, pos_, tensors_.size());
  put<uint64_t>(out_, pos_, metadata_.size());
  for (const auto& [key, v] : metadata_) {
    put_string(out_, pos_, key);
    put<uint32_t>(out_, pos_, uint32_t(v.type));
    auto u = v.as_uint().value_or(0);
    auto i = v.as_int().value_or(0);
    auto f = v.as_float().value_or(0);
    if (v.type == ValueType::string) {
      put_string(out_, pos_, *v.as_string());
    } else if (v.type != ValueType::array) {
      put_scalar(out_, pos_, v.type, u, i, f);
    } else {
      put<uint32_t>(out_, pos_, uint32_t(v.elem));
      std::visit([&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, std::vector<std::string>>) {
          put<uint64_t>(out_, pos_, a.size());
          for (const auto& s : a) put_string(out_, pos_, s);
        } else if constexpr (std::is_same_v<A, std::vector<uint64_t>>) {
          put<uint64_t>(out_, pos_, a.size());
          for (auto x : a) put_scalar(out_, pos_, v.elem, x, int64_t(x), double(x));
        } else if constexpr (std::is_same_v<A, std::vector<int64_t>>) {
          put<uint64_t>(out_, pos_, a.size());
          for (auto x : a) put_scalar(out_, pos_, v.elem, uint64_t(x), x, double(x));
        } else if constexpr (std::is_same_v<A, std::vector<double>>) {
          put<uint64_t>(out_, pos_, a.size());
          for (auto x : a) put_scalar(out_, pos_, v.elem, uint64_t(x), int64_t(x), x);
        } else {
          fail("{}: metadata '{}': an array value holds a scalar", path_, key);
        }
      }, v.v);
    }
  }
  for (const auto& t : tensors_) {
    put_string(out_, pos_, t.name);
    put<uint32_t>(out_, pos_, uint32_t(t.ne.size()));
    for (auto d : t.ne) put<uint64_t>(out_, pos_, d);
    put<uint32_t>(out_, pos_, uint32_t(t.type));
    put<uint64_t>(out_, pos_, t.offset);
  }
  pad_to_alignment();
}

void Writer::pad_to_alignment() {
  static const char kZeros[256] = {};
  uint64_t pad = (alignment_ - pos_ % alignment_) % alignment_;
  out_.write(kZeros, std::streamsize(pad));
  pos_ += pad;
}

void Writer::write_tensor(std::span<const std::byte> data) {
  if (next_ >= tensors_.size()) fail("{}: more tensor data than the {} tensors added", path_, tensors_.size());
  const auto& t = tensors_[next_];
  if (data.size() != t.size) fail("{}: tensor '{}': expected {} bytes, got {}", path_, t.name, t.size, data.size());
  ++next_;
  out_.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  pos_ += data.size();
  pad_to_alignment();
  if (!out_) fail("{}: write failed (disk full?)", path_);
}

uint64_t Writer::finish() {
  if (next_ != tensors_.size()) fail("{}: {} of {} tensors were written", path_, next_, tensors_.size());
  out_.close();
  if (!out_) fail("{}: write failed", path_);
  return pos_;
}

}  // namespace bs::gguf
