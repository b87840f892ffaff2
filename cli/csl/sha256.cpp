#include "cli/csl/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "runtime/base/error.h"

namespace bs::csl {

namespace {

struct Hasher {
  Hasher() : ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
      throw Error("sha256: OpenSSL could not start a digest", ErrorKind::internal);
  }
  void update(const void* p, size_t n) {
    if (n && EVP_DigestUpdate(ctx.get(), p, n) != 1) throw Error("sha256: digest update failed", ErrorKind::internal);
  }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) throw Error("sha256: digest final failed", ErrorKind::internal);
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(size_t(len) * 2, '0');
    for (unsigned i = 0; i < len; ++i) {
      out[2 * i] = kDigits[md[i] >> 4];
      out[2 * i + 1] = kDigits[md[i] & 15];
    }
    return out;
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx;
};

}  // namespace

std::string sha256_hex(const void* data, size_t size) {
  Hasher h;
  h.update(data, size);
  return h.hex();
}

std::string sha256_hex(std::string_view bytes) { return sha256_hex(bytes.data(), bytes.size()); }

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("{}: cannot open for hashing", path.string());
  Hasher h;
  std::vector<char> buf(1 << 16);
  while (f) {
    f.read(buf.data(), std::streamsize(buf.size()));
    h.update(buf.data(), size_t(f.gcount()));
  }
  if (f.bad()) fail("{}: read error while hashing", path.string());
  return h.hex();
}

}  // namespace bs::csl
