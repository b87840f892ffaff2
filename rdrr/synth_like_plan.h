// synth --like's plan of a manifest (internal to rdrr/synth_like*.cpp): every tensor resolved to the
// byte stream of its dtype and layout (rdrr/synth_like_gen.h), and every shard to the pieces of those
// streams it holds. Built from the raw manifest JSON, checked as untrusted input: a tensor it cannot
// write, a size that disagrees with its dtype and shape, a span outside its shard or overlapping another
// fails naming the manifest and the tensor.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "rdrr/synth_like_gen.h"
#include "sharding/hash.h"
#include "sharding/merkle.h"

namespace bs::synth_like_detail {

using Digest = MerkleDigest;

// Bytes [at, at + size) of an item's stream lie at `offset` in a shard.
struct Piece {
  uint32_t item;
  uint64_t at, offset, size;
};

// A tensor, or a byte range a tensor refers to outside the tensor map (an int4 table's row scales).
struct Item {
  std::string name;
  ByteStream stream;
  bool merkle = false;         // its blockMerkle root is recomputed
  std::vector<Digest> leaves;  // SHA-256 of each block of its bytes
  std::vector<uint8_t> have;   // leaves[k] was hashed during the shard pass
};

struct ShardPlan {
  std::string filename;
  uint64_t size = 0;
  std::vector<Piece> pieces;
  std::string hash;
};

struct Plan {
  nlohmann::ordered_json manifest;
  HashAlgorithm alg = HashAlgorithm::sha256;
  std::vector<Item> items;
  std::vector<ShardPlan> shards;
  uint64_t block_size = 0;  // blockMerkle block size; 0 when the manifest has none
  uint64_t tensors = 0, total = 0;
};

// Reads and checks the manifest at `path`; streams are keyed by (seed, tensor name).
Plan make_plan(const std::filesystem::path& path, uint64_t seed);
// The same from the manifest's text (`label` names it in messages); the fuzz target's entry.
Plan make_plan_text(std::string_view text, const std::string& label, uint64_t seed);

}  // namespace bs::synth_like_detail
