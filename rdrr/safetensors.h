// Reading Hugging Face safetensors checkpoints: one model.safetensors, or several files listed by
// model.safetensors.index.json. Files are mmapped; the header is untrusted input and every field is
// checked (length, JSON, dtype, shape, offsets, overflow, overlap) before any tensor byte is touched.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/base/dtype.h"

namespace bs {

// One tensor of a checkpoint. `data` points into an mmapped file owned by the Checkpoint.
struct SafeTensor {
  std::string name;
  DType dtype;                  // F32, F16 or BF16
  std::vector<int64_t> shape;   // as stored (row-major, [out, in] for linear weights)
  std::span<const std::byte> data;
  std::string file;             // file name, for messages
  uint64_t elements() const;
};

// A parsed header: tensors in file order of their data offsets. Offsets are relative to the data
// section, which starts at 8 + header length.
struct SafetensorsHeader {
  uint64_t data_start = 0;
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;
  };
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
};

// Parses and validates the header of a safetensors file held in `file` (the whole file, so data
// offsets can be checked against its length). `label` names the file in error messages.
// Throws bs::Error(input) on anything malformed.
SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file, const std::string& label);

// A read-only mmap of a whole file.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(addr_), size_}; }

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

// Tells the kernel the mapped pages of `bytes` are no longer needed (whole pages inside the range), so a
// streaming reader's resident memory stays bounded; the data can still be read again from the file.
void release_pages(std::span<const std::byte> bytes);

// All tensors of a checkpoint directory (or of one .safetensors file).
class Checkpoint {
 public:
  // `path` is a directory holding model.safetensors or model.safetensors.index.json, or a file.
  explicit Checkpoint(const std::filesystem::path& path);
  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  const SafeTensor* find(const std::string& name) const;  // nullptr when absent

 private:
  void add_file(const std::filesystem::path& file);
  std::vector<std::unique_ptr<MappedFile>> files_;
  std::vector<SafeTensor> tensors_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace bs
