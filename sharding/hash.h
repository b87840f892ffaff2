// Content hashes of shards and tensors, as lowercase hex (the manifest's form). RDRR manifests name
// their algorithm in `hashAlgorithm`: SHA-256 (OpenSSL's EVP interface) or BLAKE3 (sharding/blake3.h,
// written from the specification: no Debian package provides it for C or C++).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sharding/blake3.h"

namespace bs {

enum class HashAlgorithm : uint8_t { sha256, blake3 };

// "sha256" | "blake3" (as the manifest's hashAlgorithm writes them); nullopt for anything else.
std::optional<HashAlgorithm> parse_hash_algorithm(std::string_view name);
std::string_view hash_algorithm_name(HashAlgorithm a);

// Bytes as lowercase hex (two digits a byte): the form of every hash in a manifest.
std::string hex_lower(std::span<const uint8_t> bytes);

std::string sha256_hex(std::span<const std::byte> data);
// BLAKE3's tree lets one large input be hashed on several threads (`threads`; SHA-256 ignores it).
std::string blake3_hex(std::span<const std::byte> data, int threads = 1,
                       Blake3Variant v = Blake3Variant::spec);  // 32-byte default output
std::string hash_hex(HashAlgorithm a, std::span<const std::byte> data, int threads = 1);

// Checks the shard hashes of one manifest, shared by the threads of one load or verify. A "blake3"
// manifest may have been written by DOPPLER, whose "blake3" is its own variant (sharding/blake3.h), so
// a hash matching either is accepted: the one that matched last is tried first, so a DOPPLER bundle
// pays a second hash on its first shard only. `spec_only` is for blueshift's own storedHash.
class ShardHashCheck {
 public:
  explicit ShardHashCheck(HashAlgorithm a) : algo_(a) {}
  // True when `data` hashes to `want`; otherwise `actual` gets the (spec) hash of `data`.
  bool matches(std::span<const std::byte> data, std::string_view want, int threads, std::string& actual,
               bool spec_only = false);
  HashAlgorithm algorithm() const { return algo_; }
  // How many hashes of a "blake3" manifest matched each variant so far.
  uint64_t matched(Blake3Variant v) const { return (v == Blake3Variant::spec ? spec_ : doppler_).load(); }
  uint64_t hashes_computed() const { return computed_.load(); }  // to show a variant is learnt once

 private:
  HashAlgorithm algo_;
  std::atomic<uint64_t> spec_{0}, doppler_{0}, computed_{0};
  std::atomic<bool> doppler_first_{false};
};

// How verify names the variant: "DOPPLER's variant, doppler-gpu <= 0.5.1" | "spec".
std::string_view blake3_variant_description(Blake3Variant v);
std::string_view blake3_variant_name(Blake3Variant v);  // "spec" | "doppler" (verify --json)

}  // namespace bs
