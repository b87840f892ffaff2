// NumPy .npy (version 1.0) for 2-D float32 arrays: what `blueshift logits` writes and tests read.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/base/error.h"

namespace bs {

inline void write_npy_f32(const std::filesystem::path& path, const float* data, uint64_t rows, uint64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open for writing", path.string());
  uint16_t hlen = uint16_t(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.write(reinterpret_cast<const char*>(&hlen), 2);
  f.write(header.data(), header.size());
  f.write(reinterpret_cast<const char*>(data), std::streamsize(rows * cols * 4));
  if (!f) fail("{}: write failed", path.string());
}

struct NpyF32 {
  std::vector<uint64_t> shape;
  std::vector<float> data;
};

// Reads a little-endian float32 C-order .npy (1-D or 2-D); rejects anything else by name.
inline NpyF32 read_npy_f32(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open", path.string());
  char magic[8];
  uint16_t hlen = 0;
  f.read(magic, 8);
  f.read(reinterpret_cast<char*>(&hlen), 2);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) fail("{}: not a .npy file", path.string());
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos)
    fail("{}: expected little-endian float32 in C order, header {}", path.string(), header);
  NpyF32 out;
  auto a = header.find('('), b = header.find(')');
  if (a == std::string::npos || b == std::string::npos) fail("{}: no shape in header", path.string());
  std::string dims = header.substr(a + 1, b - a - 1);
  uint64_t count = 1;
  for (size_t p = 0; p < dims.size();) {
    while (p < dims.size() && (dims[p] == ' ' || dims[p] == ',')) ++p;
    if (p >= dims.size()) break;
    uint64_t d = std::stoull(dims.substr(p));
    out.shape.push_back(d);
    count *= d;
    while (p < dims.size() && dims[p] != ',') ++p;
  }
  out.data.resize(count);
  f.read(reinterpret_cast<char*>(out.data.data()), std::streamsize(count * 4));
  if (!f) fail("{}: truncated data (expected {} floats)", path.string(), count);
  return out;
}

}  // namespace bs
