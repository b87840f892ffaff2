#include "rdrr/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rdrr/checked.h"
#include "runtime/base/error.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::json;

// A header longer than this is not a checkpoint header (the largest real ones are a few MB).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

uint64_t SafeTensor::elements() const { return checked_elements(shape).value_or(0); }

static DType parse_st_dtype(const std::string& s, const std::string& label, const std::string& name) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  if (s == "U8") return DType::U8;  // GPT-OSS's MXFP4 experts (*_blocks, *_scales): rdrr/moe_tensors.cpp reads them
  fail("{}: tensor '{}': dtype {} is not supported (expected F32, F16 or BF16)", label, name, s);
}

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> file, const std::string& label) {
  if (file.size() < 8) fail("{}: file is {} bytes, too short for a safetensors header", label, file.size());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | uint64_t(file[size_t(i)]);
  if (n > kMaxHeaderBytes) fail("{}: header length {} exceeds the limit of {} bytes", label, n, kMaxHeaderBytes);
  if (n > file.size() - 8) fail("{}: header length {} exceeds the file size {}", label, n, file.size());
  SafetensorsHeader h;
  h.data_start = 8 + n;
  const uint64_t data_size = file.size() - h.data_start;

  json j;
  try {
    const char* p = reinterpret_cast<const char*>(file.data() + 8);
    j = json::parse(p, p + n);
  } catch (const json::exception& e) {
    fail("{}: header is not valid JSON: {}", label, e.what());
  }
  if (!j.is_object()) fail("{}: header must be a JSON object, got {}", label, j.type_name());

  for (auto& [name, v] : j.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) fail("{}: __metadata__ must be an object", label);
      for (auto& [k, mv] : v.items()) {
        if (!mv.is_string()) fail("{}: __metadata__.{} must be a string", label, k);
        h.metadata[k] = mv.get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) fail("{}: tensor '{}' must be an object", label, name);
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) fail("{}: tensor '{}': missing or non-string 'dtype'", label, name);
    if (sh == v.end() || !sh->is_array()) fail("{}: tensor '{}': missing or non-array 'shape'", label, name);
    if (off == v.end() || !off->is_array() || off->size() != 2)
      fail("{}: tensor '{}': 'data_offsets' must be [begin, end]", label, name);
    SafetensorsHeader::Entry e;
    e.name = name;
    e.dtype = parse_st_dtype(dt->get<std::string>(), label, name);
    if (sh->size() > 8) fail("{}: tensor '{}': {} dims (at most 8 supported)", label, name, sh->size());
    for (auto& d : *sh) {
      if (!d.is_number_unsigned()) fail("{}: tensor '{}': shape entries must be non-negative integers", label, name);
      uint64_t x = d.get<uint64_t>();
      if (x > uint64_t(INT64_MAX)) fail("{}: tensor '{}': dimension {} too large", label, name, x);
      e.shape.push_back(int64_t(x));
    }
    for (auto& o : *off)
      if (!o.is_number_unsigned()) fail("{}: tensor '{}': data_offsets must be non-negative integers", label, name);
    e.begin = (*off)[0].get<uint64_t>();
    e.end = (*off)[1].get<uint64_t>();
    if (e.begin > e.end) fail("{}: tensor '{}': data_offsets begin {} > end {}", label, name, e.begin, e.end);
    if (e.end > data_size)
      fail("{}: tensor '{}': data_offsets end {} is past the data section ({} bytes)", label, name, e.end, data_size);
    auto elems = checked_elements(e.shape);
    auto bytes = elems ? checked_mul(*elems, traits(e.dtype).block_bytes) : std::nullopt;
    if (!bytes) fail("{}: tensor '{}': shape size overflows", label, name);
    if (*bytes != e.end - e.begin)
      fail("{}: tensor '{}': {} {} needs {} bytes, data_offsets span {}", label, name, dtype_name(e.dtype),
           json(e.shape).dump(), *bytes, e.end - e.begin);
    h.entries.push_back(std::move(e));
  }
  std::sort(h.entries.begin(), h.entries.end(), [](auto& a, auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  // Sorted by begin, so a tensor overlaps an earlier one exactly when it starts before the furthest end
  // seen so far. Zero-size tensors may sit anywhere.
  const SafetensorsHeader::Entry* furthest = nullptr;
  for (auto& e : h.entries) {
    if (e.begin == e.end) continue;
    if (furthest && e.begin < furthest->end)
      fail("{}: tensors '{}' [{}, {}) and '{}' [{}, {}) overlap", label, furthest->name, furthest->begin,
           furthest->end, e.name, e.begin, e.end);
    if (!furthest || e.end > furthest->end) furthest = &e;
  }
  return h;
}

MappedFile::MappedFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path.string(), std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path.string());
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    addr_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr_ == MAP_FAILED) {
      addr_ = nullptr;
      ::close(fd);
      fail("{}: mmap failed: {}", path.string(), std::strerror(errno));
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (addr_) ::munmap(addr_, size_);
}

void release_pages(std::span<const std::byte> bytes) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (uintptr_t(bytes.data()) + page - 1) / page * page;
  uintptr_t end = (uintptr_t(bytes.data()) + bytes.size()) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Checkpoint::Checkpoint(const fs::path& path) {
  if (!fs::is_directory(path)) {
    add_file(path);
    return;
  }
  fs::path index = path / "model.safetensors.index.json";
  if (!fs::exists(index)) {
    if (!fs::exists(path / "model.safetensors"))
      fail("{}: no model.safetensors or model.safetensors.index.json", path.string());
    add_file(path / "model.safetensors");
    return;
  }
  json j;
  try {
    std::ifstream f(index);
    j = json::parse(f);
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", index.string(), e.what());
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    fail("{}: missing object 'weight_map'", index.string());
  std::map<std::string, std::string> weight_map;
  std::vector<std::string> files;
  for (auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) fail("{}: weight_map.{} must be a file name", index.string(), name);
    std::string f = file.get<std::string>();
    if (!is_plain_filename(f))
      fail("{}: weight_map.{}: '{}' is not a plain file name in the checkpoint directory", index.string(), name, f);
    weight_map[name] = f;
    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  }
  std::sort(files.begin(), files.end());
  for (auto& f : files) add_file(path / f);
  for (auto& [name, file] : weight_map) {
    const SafeTensor* t = find(name);
    if (!t) fail("{}: weight_map lists '{}' in {}, which has no such tensor", index.string(), name, file);
    if (t->file != file)
      fail("{}: weight_map puts '{}' in {}, but it is in {}", index.string(), name, file, t->file);
  }
}

void Checkpoint::add_file(const fs::path& file) {
  files_.push_back(std::make_unique<MappedFile>(file));
  auto bytes = files_.back()->bytes();
  std::string label = file.filename().string();
  SafetensorsHeader h = parse_safetensors_header(bytes, file.string());
  for (auto& e : h.entries) {
    if (by_name_.count(e.name)) fail("{}: tensor '{}' also appears in {}", file.string(), e.name, tensors_[by_name_[e.name]].file);
    SafeTensor t{e.name, e.dtype, e.shape, bytes.subspan(h.data_start + e.begin, e.end - e.begin), label};
    by_name_[e.name] = tensors_.size();
    tensors_.push_back(std::move(t));
  }
}

const SafeTensor* Checkpoint::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace bs
