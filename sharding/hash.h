// SHA-256 through OpenSSL's EVP interface, as lowercase hex (the manifest's form).
#pragma once
#include <cstddef>
#include <span>
#include <string>

namespace bs {

std::string sha256_hex(std::span<const std::byte> data);

}  // namespace bs
