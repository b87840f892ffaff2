// GGUF v3 (ggml's single-file model format): its constants and type tables, a streaming writer and a
// checked header reader. blueshift's quantized blocks are GGML's bytes, so a tensor moves between an
// RDRR shard and a GGUF file unchanged; only names, dims order and metadata differ.
//
// Layout: "GGUF", u32 version, u64 tensor count, u64 metadata count; each metadata entry is a string
// key, a u32 value type and the value (an array: u32 element type, u64 count, elements); each tensor
// info is a string name, u32 n_dims, u64 ne[n_dims] (ne[0] = the row length, fastest-varying: the
// reverse of a PyTorch shape), u32 ggml type and a u64 offset into the data section; then padding
// to the alignment (general.alignment, default 32) and the data section, each tensor at an aligned
// offset. Strings are a u64 length and bytes, no terminator. Everything little-endian.
#pragma once
#include <cstdint>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/base/dtype.h"

namespace bs::gguf {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr std::string_view kKeyAlignment = "general.alignment";
inline constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

enum class ValueType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12,
};

// ggml's tensor types (the enum values are the file's).
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9, Q2_K = 10, Q3_K = 11,
  Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20,
  IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;
  uint32_t block_elems;  // weights per block (1 for plain types)
  uint32_t block_bytes;
};
// The traits of a type this table knows; nullopt for other values (a newer ggml's types).
std::optional<GgmlTypeTraits> ggml_traits(GgmlType t);
std::optional<GgmlType> ggml_type_of(DType t);   // F32 F16 BF16 Q8_0 Q4_K Q6_K I32
std::optional<DType> dtype_of(GgmlType t);
// Bytes of a tensor of dims `ne` (ne[0] = row length); nullopt when ne[0] is not whole blocks or on overflow.
std::optional<uint64_t> tensor_bytes(GgmlType t, std::span<const uint64_t> ne);

// A metadata value. Unsigned integers and bools are held as uint64_t, signed as int64_t, floats as
// double; `type` (and `elem` for arrays) says how they are stored in the file.
struct Value {
  ValueType type = ValueType::u32;
  ValueType elem = ValueType::u32;  // arrays only; never `array` (nested arrays are not supported)
  std::variant<uint64_t, int64_t, double, std::string, std::vector<uint64_t>, std::vector<int64_t>,
               std::vector<double>, std::vector<std::string>>
      v;

  static Value u32(uint32_t x) { return {ValueType::u32, ValueType::u32, uint64_t(x)}; }
  static Value u64(uint64_t x) { return {ValueType::u64, ValueType::u32, x}; }
  static Value i32(int32_t x) { return {ValueType::i32, ValueType::u32, int64_t(x)}; }
  static Value f32(float x) { return {ValueType::f32, ValueType::u32, double(x)}; }
  static Value boolean(bool x) { return {ValueType::boolean, ValueType::u32, uint64_t(x)}; }
  static Value str(std::string s) { return {ValueType::string, ValueType::u32, std::move(s)}; }
  static Value i32_array(std::vector<int64_t> a) { return {ValueType::array, ValueType::i32, std::move(a)}; }
  static Value f32_array(std::vector<double> a) { return {ValueType::array, ValueType::f32, std::move(a)}; }
  static Value str_array(std::vector<std::string> a) { return {ValueType::array, ValueType::string, std::move(a)}; }

  // Typed reads; nullopt when the value is of another kind.
  std::optional<uint64_t> as_uint() const;
  std::optional<int64_t> as_int() const;      // any integer type that fits
  std::optional<double> as_float() const;
  const std::string* as_string() const;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> ne;  // ne[0] = row length
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;       // within the data section (aligned)
  uint64_t size = 0;         // bytes
};

struct KeyValue {
  std::string key;
  Value value;
};

// A parsed header: metadata, tensor infos, and where the data section starts in the file.
struct Header {
  uint32_t version = kVersion;
  uint32_t alignment = kDefaultAlignment;
  std::vector<KeyValue> metadata;
  std::vector<TensorInfo> tensors;
  uint64_t data_offset = 0;  // file offset of the data section

  const Value* find(std::string_view key) const;
  const TensorInfo* tensor(std::string_view name) const;
};

// Parses the header of a GGUF file (`bytes` holds at least the header; `file_size` is the whole
// file's, so every tensor's data is checked to lie inside it). Untrusted input: every count, length,
// type, dim and offset is checked; a violation throws bs::Error(input) naming `label`, the field and
// expected vs actual.
Header parse_header(std::span<const std::byte> bytes, uint64_t file_size, const std::string& label);
// Reads and parses the header of the file at `path` (reading only as much of it as the header needs).
Header read_header(const std::string& path);

// Writes a GGUF file in one pass: metadata and tensor infos first (add / add_tensor), then
// write_header(), then every tensor's bytes in the order they were added.
class Writer {
 public:
  explicit Writer(std::string path, uint32_t alignment = kDefaultAlignment);
  void add(std::string key, Value v);
  // Adds a tensor of dims `ne` (ne[0] = row length) and returns its index; throws for a shape the
  // type's blocks do not divide.
  size_t add_tensor(std::string name, std::vector<uint64_t> ne, GgmlType type);
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  void write_header();
  // The next tensor's data (in add order); its size must be the tensor's.
  void write_tensor(std::span<const std::byte> data);
  // Checks that every tensor was written and closes the file; returns the file's size.
  uint64_t finish();

 private:
  void pad_to_alignment();
  std::string path_;
  uint32_t alignment_;
  std::vector<KeyValue> metadata_;
  std::vector<TensorInfo> tensors_;
  uint64_t data_size_ = 0;
  size_t next_ = 0;
  uint64_t pos_ = 0;
  std::ofstream out_;
};

}  // namespace bs::gguf
