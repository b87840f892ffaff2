#include "sharding/hash.h"

#include <openssl/evp.h>

#include "runtime/base/error.h"
#include "sharding/blake3.h"

namespace bs {

std::string hex_lower(std::span<const uint8_t> bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string s(2 * bytes.size(), '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    s[2 * i] = kHex[bytes[i] >> 4];
    s[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return s;
}

std::optional<HashAlgorithm> parse_hash_algorithm(std::string_view name) {
  if (name == "sha256") return HashAlgorithm::sha256;
  if (name == "blake3") return HashAlgorithm::blake3;
  return std::nullopt;
}

std::string_view hash_algorithm_name(HashAlgorithm a) { return a == HashAlgorithm::blake3 ? "blake3" : "sha256"; }

std::string sha256_hex(std::span<const std::byte> data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw Error("OpenSSL EVP_Digest(sha256) failed", ErrorKind::internal);
  return hex_lower({md, 32});
}

std::string blake3_hex(std::span<const std::byte> data, int threads, Blake3Variant v) {
  Blake3Digest d = blake3(data, threads, v);
  return hex_lower({d.data(), d.size()});
}

std::string hash_hex(HashAlgorithm a, std::span<const std::byte> data, int threads) {
  return a == HashAlgorithm::blake3 ? blake3_hex(data, threads) : sha256_hex(data);
}

bool ShardHashCheck::matches(std::span<const std::byte> data, std::string_view want, int threads,
                             std::string& actual, bool spec_only) {
  ++computed_;
  if (algo_ != HashAlgorithm::blake3) {
    actual = sha256_hex(data);
    return actual == want;
  }
  if (spec_only) {  // not counted: it says nothing about who wrote the manifest's own hashes
    actual = blake3_hex(data, threads);
    return actual == want;
  }
  const bool doppler_first = doppler_first_.load(std::memory_order_relaxed);
  const Blake3Variant first = doppler_first ? Blake3Variant::doppler : Blake3Variant::spec;
  const Blake3Variant second = doppler_first ? Blake3Variant::spec : Blake3Variant::doppler;
  std::string h = blake3_hex(data, threads, first);
  Blake3Variant matched = first;
  if (h != want) {
    ++computed_;
    std::string h2 = blake3_hex(data, threads, second);
    if (h2 != want) {
      actual = doppler_first ? std::move(h2) : std::move(h);  // a mismatch is reported against the spec
      return false;
    }
    matched = second;
    doppler_first_.store(matched == Blake3Variant::doppler, std::memory_order_relaxed);
  }
  ++(matched == Blake3Variant::spec ? spec_ : doppler_);
  return true;
}

std::string_view blake3_variant_description(Blake3Variant v) {
  return v == Blake3Variant::doppler ? "DOPPLER's variant, doppler-gpu <= 0.5.1" : "spec";
}

std::string_view blake3_variant_name(Blake3Variant v) { return v == Blake3Variant::doppler ? "doppler" : "spec"; }

}  // namespace bs
