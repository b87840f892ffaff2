// DOPPLER's per-tensor block Merkle roots (manifest `integrityExtensions.blockMerkle`, written by its
// src/formats/rdrr/integrity.js; the tree is src/formats/rdrr/merkle.js). As DOPPLER computes them:
//   - the tensor's raw bytes (spans concatenated across shards) are cut into blocks of blockSize bytes,
//     the last one shorter; an empty tensor is one empty block;
//   - leaf = SHA-256(block); parent = SHA-256(left || right) over the 32-byte digests, with no domain
//     separation between leaves and nodes; a level of odd length pairs its last node with itself;
//   - the root is written "sha256:<64 lowercase hex>" (a single-block tensor's root is its leaf).
// These roots are always SHA-256, whatever the manifest's hashAlgorithm says for shards.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bs {

// A leaf or node digest (SHA-256, raw bytes).
using MerkleDigest = std::array<uint8_t, 32>;

// SHA-256 of one block: a leaf.
MerkleDigest merkle_leaf(std::span<const std::byte> block);
// The root over leaves computed elsewhere (in any order, e.g. on several threads), as block_merkle_root
// writes it ("sha256:<hex>"). `leaves` must not be empty (an empty tensor has one leaf, of no bytes).
std::string merkle_root_of_leaves(std::vector<MerkleDigest> leaves);

// The root of `tensor_bytes` as DOPPLER writes it ("sha256:<hex>"). block_size must be > 0.
std::string block_merkle_root(std::span<const std::byte> tensor_bytes, uint64_t block_size);

// Builds the same root from blocks fed in order, for tensors that arrive in pieces (a tensor crossing
// shards): add() any number of byte pieces, root() once.
class BlockMerkleBuilder {
 public:
  explicit BlockMerkleBuilder(uint64_t block_size);
  ~BlockMerkleBuilder();
  void add(std::span<const std::byte> bytes);
  std::string root();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// `integrityExtensions.blockMerkle` of a manifest, checked as untrusted input.
struct BlockMerkle {
  uint64_t block_size = 0;
  std::map<std::string, std::string> roots;  // tensor name -> "sha256:<hex>"
};

// nullopt when the manifest has no integrityExtensions.blockMerkle; throws bs::Error(input) naming
// `label` and the field for a bad blockSize, a root that is not "sha256:" + 64 hex digits, or a root for
// a tensor the manifest does not list (`has_tensor`).
std::optional<BlockMerkle> parse_block_merkle(const nlohmann::json& manifest, const std::string& label,
                                              const std::function<bool(const std::string&)>& has_tensor);

}  // namespace bs
