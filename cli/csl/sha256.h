// SHA-256 of bytes and files (OpenSSL EVP), as lowercase hex.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace bs::csl {

std::string sha256_hex(std::string_view bytes);
std::string sha256_hex(const void* data, size_t size);
// Streams the file; throws bs::Error naming the path when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace bs::csl
