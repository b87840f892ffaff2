// Builds safetensors files in memory for tests: tensors are given with their raw bytes, the header
// may be replaced or patched to produce malformed files.
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bs::testing {

struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

inline std::string st_file_from_header(const std::string& header, const std::vector<uint8_t>& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

inline std::string st_file(const std::vector<StTensor>& ts, nlohmann::json* header_out = nullptr) {
  nlohmann::json h = nlohmann::json::object();
  std::vector<uint8_t> data;
  for (auto& t : ts) {
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  }
  h["__metadata__"] = {{"format", "pt"}};
  if (header_out) *header_out = h;
  return st_file_from_header(h.dump(), data);
}

inline void write_file(const std::filesystem::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f.write(s.data(), std::streamsize(s.size()));
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace bs::testing
