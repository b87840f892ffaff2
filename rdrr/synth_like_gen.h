// The stored bytes of one random tensor in one of DOPPLER's layouts, for `synth --like`. A stream is
// a pure function of (key, byte offset): any byte range can be produced on its own, by any thread,
// which lets a writer fill one shard at a time whatever order a manifest's spans come in.
//
// Values are "weights-like": plain types N(mean, spread); block types random codes under finite f16
// block scales chosen so the dequantized values have about `spread` as standard deviation; padding
// (the tail of a row rounded up to whole blocks, or of a flattened tensor) dequantizes to exactly 0.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/base/dtype.h"

namespace bs {

enum class StreamKind : uint8_t {
  normal,     // F32/F16/BF16 values ~ N(mean, spread^2)
  positive,   // F32/F16/BF16 scales in mean * [0.75, 1.25) (W4A16 group scales, int4 row scales)
  q4_k,       // GGML block_q4_K: `rows` rows of `row_len` values, each padded to whole 256-value blocks
  q6_k,       // GGML block_q6_K, likewise
  w4a16,      // compressed-tensors int4: per row, groups of 32 values in 16 bytes, low nibble first,
              // stored offset-binary (value + 8); a row's last group padded with 8s (= 0)
  int4_rows,  // LiteRT int4 per-row table: ceil(row_len / 2) bytes per row, low nibble first, codes in
              // [-7, 7] stored offset-binary (value + 8) or two's complement; an odd row's last nibble 0
  int64,      // fixed little-endian int64 values (a W4A16 tensor's shape companion)
};

struct ByteStream {
  StreamKind kind = StreamKind::normal;
  DType dtype = DType::F16;        // normal, positive: the element type
  uint64_t key = 0;                // the random stream (from the seed and the tensor's name)
  uint64_t rows = 1, row_len = 0;  // values: rows x row_len (plain kinds: rows = 1, row_len = elements)
  float mean = 0.0f;               // normal: mean; positive: centre of the scales
  float spread = 0.0f;             // normal: standard deviation; block kinds: target std of the values
  bool offset_binary = true;       // int4_rows
  std::vector<int64_t> values;     // int64

  uint64_t size() const;  // bytes of the whole stream
  uint32_t unit() const;  // bytes per independently generated unit (an element, a block, a group)
  // Writes bytes [begin, end) of the stream to dst (end <= size()).
  void read(uint64_t begin, uint64_t end, uint8_t* dst) const;

 private:
  void units(uint64_t first, uint64_t count, uint8_t* dst) const;
};

}  // namespace bs
