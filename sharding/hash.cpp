#include "sharding/hash.h"

#include <openssl/evp.h>

#include "runtime/base/error.h"

namespace bs {

std::string sha256_hex(std::span<const std::byte> data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    throw Error("OpenSSL EVP_Digest(sha256) failed", ErrorKind::internal);
  static const char kHex[] = "0123456789abcdef";
  std::string s(64, '0');
  for (unsigned i = 0; i < 32; ++i) {
    s[2 * i] = kHex[md[i] >> 4];
    s[2 * i + 1] = kHex[md[i] & 15];
  }
  return s;
}

}  // namespace bs
