// Content hashes of shards and tensors, as lowercase hex (the manifest's form). RDRR manifests name
// their algorithm in `hashAlgorithm`: SHA-256 (OpenSSL's EVP interface) or BLAKE3 (sharding/blake3.h,
// written from the specification: no Debian package provides it for C or C++).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bs {

enum class HashAlgorithm : uint8_t { sha256, blake3 };

// "sha256" | "blake3" (as the manifest's hashAlgorithm writes them); nullopt for anything else.
std::optional<HashAlgorithm> parse_hash_algorithm(std::string_view name);
std::string_view hash_algorithm_name(HashAlgorithm a);

std::string sha256_hex(std::span<const std::byte> data);
// BLAKE3's tree lets one large input be hashed on several threads (`threads`; SHA-256 ignores it).
std::string blake3_hex(std::span<const std::byte> data, int threads = 1);  // 32-byte default output
std::string hash_hex(HashAlgorithm a, std::span<const std::byte> data, int threads = 1);

}  // namespace bs
