#include "sharding/merkle.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <vector>

#include "runtime/base/error.h"
#include "sharding/hash.h"

namespace bs {

namespace {

using Digest = MerkleDigest;

void check(int ok, const char* call) {
  if (ok != 1) throw Error(fmt::format("OpenSSL {} (sha256) failed", call), ErrorKind::internal);
}

Digest sha256(const void* data, size_t n) {
  Digest d;
  unsigned int len = 0;
  check(EVP_Digest(data, n, d.data(), &len, EVP_sha256(), nullptr), "EVP_Digest");
  return d;
}

std::string prefixed_hex(const Digest& d) { return "sha256:" + hex_lower(d); }

// Folds the leaves level by level; an odd level's last node is paired with itself (DOPPLER's rule).
Digest fold(std::vector<Digest> level) {
  while (level.size() > 1) {
    std::vector<Digest> next((level.size() + 1) / 2);
    for (size_t i = 0; i < next.size(); ++i) {
      std::array<uint8_t, 64> pair;
      const Digest& l = level[2 * i];
      const Digest& r = 2 * i + 1 < level.size() ? level[2 * i + 1] : l;
      std::copy(l.begin(), l.end(), pair.begin());
      std::copy(r.begin(), r.end(), pair.begin() + 32);
      next[i] = sha256(pair.data(), pair.size());
    }
    level = std::move(next);
  }
  return level[0];
}

bool is_root_string(const std::string& s) {
  return s.size() == 7 + 64 && s.compare(0, 7, "sha256:") == 0 &&
         std::all_of(s.begin() + 7, s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

MerkleDigest merkle_leaf(std::span<const std::byte> block) { return sha256(block.data(), block.size()); }

std::string merkle_root_of_leaves(std::vector<MerkleDigest> leaves) {
  if (leaves.empty()) throw Error("block Merkle tree: no leaves (an empty tensor has one)", ErrorKind::internal);
  return prefixed_hex(fold(std::move(leaves)));
}

// The current block is hashed incrementally, so pieces are never copied into a block buffer.
struct BlockMerkleBuilder::State {
  uint64_t block_size;
  uint64_t fill = 0;  // bytes of the current block so far
  bool any = false;   // any bytes at all (an empty tensor is one empty block)
  EVP_MD_CTX* ctx = nullptr;
  std::vector<Digest> leaves;

  void start() { check(EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr), "EVP_DigestInit_ex"); }
  void finish_block() {
    Digest d;
    unsigned int len = 0;
    check(EVP_DigestFinal_ex(ctx, d.data(), &len), "EVP_DigestFinal_ex");
    leaves.push_back(d);
    fill = 0;
    start();
  }
};

BlockMerkleBuilder::BlockMerkleBuilder(uint64_t block_size) : s_(std::make_unique<State>()) {
  if (block_size == 0) throw Error("block Merkle tree: blockSize must be positive", ErrorKind::internal);
  s_->block_size = block_size;
  s_->ctx = EVP_MD_CTX_new();
  if (!s_->ctx) throw Error("OpenSSL EVP_MD_CTX_new failed", ErrorKind::resources);
  s_->start();
}

BlockMerkleBuilder::~BlockMerkleBuilder() { EVP_MD_CTX_free(s_->ctx); }

void BlockMerkleBuilder::add(std::span<const std::byte> bytes) {
  State& s = *s_;
  while (!bytes.empty()) {
    uint64_t take = std::min<uint64_t>(s.block_size - s.fill, bytes.size());
    check(EVP_DigestUpdate(s.ctx, bytes.data(), take), "EVP_DigestUpdate");
    s.fill += take;
    s.any = true;
    bytes = bytes.subspan(take);
    if (s.fill == s.block_size) s.finish_block();
  }
}

std::string BlockMerkleBuilder::root() {
  State& s = *s_;
  if (s.fill > 0 || !s.any) s.finish_block();  // the short last block, or the one empty block
  Digest r = fold(std::move(s.leaves));
  s.leaves.clear();
  s.any = false;
  return prefixed_hex(r);
}

std::string block_merkle_root(std::span<const std::byte> tensor_bytes, uint64_t block_size) {
  if (block_size == 0) throw Error("block Merkle tree: blockSize must be positive", ErrorKind::internal);
  // One-shot: hash whole blocks straight from the span (no incremental context needed).
  std::vector<Digest> leaves;
  leaves.reserve(tensor_bytes.size() / block_size + 1);
  uint64_t off = 0;
  do {
    uint64_t n = std::min<uint64_t>(block_size, tensor_bytes.size() - off);
    leaves.push_back(sha256(tensor_bytes.data() + off, n));
    off += n;
  } while (off < tensor_bytes.size());
  return prefixed_hex(fold(std::move(leaves)));
}

std::optional<BlockMerkle> parse_block_merkle(const nlohmann::json& j, const std::string& label,
                                              const std::function<bool(const std::string&)>& has_tensor) {
  auto ie = j.find("integrityExtensions");
  if (ie == j.end() || ie->is_null()) return std::nullopt;
  if (!ie->is_object()) fail("{}: integrityExtensions: expected an object, got {}", label, ie->dump());
  auto bm = ie->find("blockMerkle");
  if (bm == ie->end() || bm->is_null()) return std::nullopt;
  if (!bm->is_object())
    fail("{}: integrityExtensions.blockMerkle: expected an object, got {}", label, bm->dump());
  BlockMerkle out;
  auto bs = bm->find("blockSize");
  if (bs == bm->end()) fail("{}: integrityExtensions.blockMerkle: missing field 'blockSize'", label);
  // DOPPLER's reader accepts any positive integer; 1 TiB bounds it well above its 1 MiB default.
  if (!bs->is_number_integer() || bs->get<int64_t>() <= 0 || bs->get<int64_t>() > (int64_t(1) << 40))
    fail("{}: integrityExtensions.blockMerkle.blockSize: expected a positive integer of at most 2^40, got {}",
         label, bs->dump());
  out.block_size = bs->get<uint64_t>();
  auto roots = bm->find("roots");
  if (roots == bm->end()) fail("{}: integrityExtensions.blockMerkle: missing field 'roots'", label);
  if (!roots->is_object())
    fail("{}: integrityExtensions.blockMerkle.roots: expected an object, got {}", label, roots->type_name());
  for (auto& [name, v] : roots->items()) {
    std::string where = fmt::format("integrityExtensions.blockMerkle.roots['{}']", name);
    if (!v.is_string()) fail("{}: {}: expected a string, got {}", label, where, v.dump());
    std::string r = v.get<std::string>();
    if (!is_root_string(r))
      fail("{}: {}: expected \"sha256:\" followed by 64 lowercase hex digits, got '{}'", label, where, r);
    if (!has_tensor(name)) fail("{}: {}: the manifest has no tensor '{}'", label, where, name);
    out.roots.emplace(name, std::move(r));
  }
  return out;
}

}  // namespace bs
