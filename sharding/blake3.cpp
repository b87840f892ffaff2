#include "sharding/blake3.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <stdexcept>
#include <thread>

#include "sharding/blake3_impl.h"

namespace bs {

using namespace blake3_detail;

// Chaining values are kept as host words and handed to the kernels as parent blocks by address.
static_assert(std::endian::native == std::endian::little, "BLAKE3 here assumes a little-endian host");

namespace blake3_detail {

void hash_many_portable(const uint8_t* const* inputs, size_t n, size_t blocks, const uint32_t key[8],
                        uint64_t counter, bool increment, uint8_t flags, uint8_t flags_start,
                        uint8_t flags_end, uint32_t* out, Blake3Variant variant) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t cv[8];
    std::copy(key, key + 8, cv);
    for (size_t b = 0; b < blocks; ++b) {
      uint8_t f = flags | (b == 0 ? flags_start : 0) | (b + 1 == blocks ? flags_end : 0);
      compress(cv, inputs[i] + b * kBlockLen, kBlockLen, counter + (increment ? i : 0), f, cv, variant);
    }
    std::copy(cv, cv + 8, out + 8 * i);
  }
}

}  // namespace blake3_detail

namespace {

struct KernelEntry {
  Blake3Kernel kind;
  HashManyFn fn;
  size_t lanes;
};

std::vector<KernelEntry> available_kernels() {
  std::vector<KernelEntry> k = {{Blake3Kernel::portable, hash_many_portable, 1}};
#ifdef BS_BLAKE3_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.1")) k.push_back({Blake3Kernel::sse41, hash_many_sse41, 4});
  if (__builtin_cpu_supports("avx2")) k.push_back({Blake3Kernel::avx2, hash_many_avx2, 8});
  if (__builtin_cpu_supports("avx512f")) k.push_back({Blake3Kernel::avx512, hash_many_avx512, 16});
#endif
  return k;
}

const std::vector<KernelEntry>& kernels() {
  static const std::vector<KernelEntry> k = available_kernels();
  return k;
}

std::atomic<const KernelEntry*> g_kernel{nullptr};

const KernelEntry& kernel() {
  const KernelEntry* k = g_kernel.load(std::memory_order_relaxed);
  return k ? *k : kernels().back();  // the widest the CPU has
}

void hash_many(const uint8_t* const* inputs, size_t n, size_t blocks, uint64_t counter, bool increment,
               uint8_t flags, uint8_t flags_start, uint8_t flags_end, uint32_t* out, Blake3Variant v) {
  if (n) kernel().fn(inputs, n, blocks, kIv, counter, increment, flags, flags_start, flags_end, out, v);
}

// Chaining value (or, with kRoot in `last_flags`, the root output) of one chunk of 0..1024 bytes.
void chunk_cv(const uint8_t* p, size_t len, uint64_t counter, uint8_t last_flags, uint32_t out[8],
              Blake3Variant v) {
  uint32_t cv[8];
  std::copy(kIv, kIv + 8, cv);
  size_t blocks = std::max<size_t>(1, (len + kBlockLen - 1) / kBlockLen);
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t block[kBlockLen] = {};
    size_t n = std::min(kBlockLen, len - b * kBlockLen);
    if (n) std::memcpy(block, p + b * kBlockLen, n);
    uint8_t f = (b == 0 ? kChunkStart : 0) | (b + 1 == blocks ? kChunkEnd | last_flags : 0);
    compress(cv, block, uint32_t(n), counter, f, cv, v);
  }
  std::copy(cv, cv + 8, out);
}

void parent_cv(const uint32_t left[8], const uint32_t right[8], uint8_t extra, uint32_t out[8],
               Blake3Variant v) {
  uint8_t block[kBlockLen];
  std::memcpy(block, left, 32);
  std::memcpy(block + 32, right, 32);
  compress(kIv, block, kBlockLen, 0, kParent | extra, out, v);
}

// Chaining values of `n` whole chunks starting at `p`, numbered from `counter`.
void whole_chunks(const uint8_t* p, size_t n, uint64_t counter, uint32_t* out, Blake3Variant v) {
  constexpr size_t kBatch = 64;
  const uint8_t* ptrs[kBatch];
  for (size_t i = 0; i < n; i += kBatch) {
    size_t m = std::min(kBatch, n - i);
    for (size_t j = 0; j < m; ++j) ptrs[j] = p + (i + j) * kChunkLen;
    hash_many(ptrs, m, kChunkLen / kBlockLen, counter + i, true, 0, kChunkStart, kChunkEnd, out + 8 * i,
              v);
  }
}

Blake3Digest to_digest(const uint32_t w[8]) {
  Blake3Digest d;
  std::memcpy(d.data(), w, 32);
  return d;
}

}  // namespace

Blake3Digest blake3(std::span<const std::byte> data, int threads, Blake3Variant v) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  uint32_t root[8];
  if (len <= kChunkLen) {
    chunk_cv(p, len, 0, kRoot, root, v);
    return to_digest(root);
  }
  // Every chunk but the last is whole; the last has 1..1024 bytes.
  const size_t chunks = (len + kChunkLen - 1) / kChunkLen;
  const size_t whole = chunks - 1;
  std::vector<uint32_t> cv(8 * chunks);
  // Threads only pay for themselves on inputs of a few MiB (a thread start costs ~50 us).
  const size_t workers = std::clamp<size_t>(std::min<size_t>(threads, len >> 21), 1, 64);
  // Ranges of whole chunks: the calling thread takes the first, one new thread each of the others.
  const size_t per = (whole + workers - 1) / workers;
  auto range = [&cv, p, per, whole, v](size_t t) {
    size_t begin = t * per, end = std::min(whole, begin + per);
    if (begin < end) whole_chunks(p + begin * kChunkLen, end - begin, begin, cv.data() + 8 * begin, v);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(range, t);
  range(0);
  for (auto& t : pool) t.join();
  chunk_cv(p + whole * kChunkLen, len - whole * kChunkLen, whole, 0, cv.data() + 8 * whole, v);
  // The tree: pair neighbours level by level, an odd last node rising unchanged. This builds the
  // specification's tree, whose left subtree always holds the largest power of two of chunks.
  size_t n = chunks;
  std::vector<const uint8_t*> ptrs;
  while (n > 2) {
    const size_t pairs = n / 2;
    ptrs.resize(pairs);
    for (size_t i = 0; i < pairs; ++i) ptrs[i] = reinterpret_cast<const uint8_t*>(cv.data() + 16 * i);
    std::vector<uint32_t> next(8 * (pairs + n % 2));
    hash_many(ptrs.data(), pairs, 1, 0, false, kParent, 0, 0, next.data(), v);
    if (n % 2) std::copy_n(cv.data() + 8 * (n - 1), 8, next.data() + 8 * pairs);
    cv = std::move(next);
    n = pairs + n % 2;
  }
  parent_cv(cv.data(), cv.data() + 8, kRoot, root, v);
  return to_digest(root);
}

Blake3Digest blake3_doppler(std::span<const std::byte> data, int threads) {
  return blake3(data, threads, Blake3Variant::doppler);
}

Blake3Hasher::Blake3Hasher(Blake3Variant v) : variant_(v) { std::copy(kIv, kIv + 8, chunk_cv_.begin()); }

void Blake3Hasher::push_chunk_cv(const uint32_t cv_in[8]) {
  // Merge completed subtrees: after chunk k (counting from 1), as many merges as k has trailing zero bits.
  std::array<uint32_t, 8> cv;
  std::copy(cv_in, cv_in + 8, cv.begin());
  for (uint64_t total = chunk_counter_ + 1; (total & 1) == 0; total >>= 1) {
    parent_cv(stack_.back().data(), cv.data(), 0, cv.data(), variant_);
    stack_.pop_back();
  }
  stack_.push_back(cv);
  ++chunk_counter_;
}

void Blake3Hasher::update(std::span<const std::byte> data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  while (n) {
    if (block_len_ == kBlockLen) {
      // A full block is held back until more input shows it is not the message's last.
      const bool chunk_done = blocks_done_ + 1 == kChunkLen / kBlockLen;
      uint8_t f = (blocks_done_ == 0 ? kChunkStart : 0) | (chunk_done ? kChunkEnd : 0);
      compress(chunk_cv_.data(), block_.data(), kBlockLen, chunk_counter_, f, chunk_cv_.data(), variant_);
      block_len_ = 0;
      if (chunk_done) {
        push_chunk_cv(chunk_cv_.data());
        std::copy(kIv, kIv + 8, chunk_cv_.begin());
        blocks_done_ = 0;
      } else {
        ++blocks_done_;
      }
    }
    if (blocks_done_ == 0 && block_len_ == 0 && n > kChunkLen) {
      // At a chunk boundary with whole chunks to spare (and at least one byte after them): SIMD.
      constexpr size_t kBatch = 64;
      size_t m = std::min(kBatch, (n - 1) / kChunkLen);
      uint32_t cvs[8 * kBatch];
      whole_chunks(p, m, chunk_counter_, cvs, variant_);
      for (size_t i = 0; i < m; ++i) push_chunk_cv(cvs + 8 * i);
      p += m * kChunkLen;
      n -= m * kChunkLen;
      continue;
    }
    size_t take = std::min<size_t>(kBlockLen - block_len_, n);
    std::memcpy(block_.data() + block_len_, p, take);
    block_len_ += uint32_t(take);
    p += take;
    n -= take;
  }
}

Blake3Digest Blake3Hasher::finalize() const {
  // The unfinished chunk ends with the buffered block (zero-padded; empty for an empty message).
  std::array<uint8_t, kBlockLen> last{};
  std::copy_n(block_.begin(), block_len_, last.begin());
  uint8_t f = (blocks_done_ == 0 ? kChunkStart : 0) | kChunkEnd;
  uint32_t out[8];
  if (stack_.empty()) {
    compress(chunk_cv_.data(), last.data(), block_len_, chunk_counter_, f | kRoot, out, variant_);
    return to_digest(out);
  }
  compress(chunk_cv_.data(), last.data(), block_len_, chunk_counter_, f, out, variant_);
  for (size_t i = stack_.size(); i-- > 0;)
    parent_cv(stack_[i].data(), out, i == 0 ? kRoot : 0, out, variant_);
  return to_digest(out);
}

std::vector<Blake3Kernel> blake3_kernels_available() {
  std::vector<Blake3Kernel> v;
  for (auto& k : kernels()) v.push_back(k.kind);
  return v;
}

Blake3Kernel blake3_kernel() { return kernel().kind; }

void blake3_force_kernel(Blake3Kernel kind) {
  for (auto& k : kernels())
    if (k.kind == kind) {
      g_kernel.store(&k);
      return;
    }
  throw std::invalid_argument("blake3_force_kernel: kernel not available on this CPU");
}

void blake3_reset_kernel() { g_kernel.store(nullptr); }

std::string_view blake3_kernel_name(Blake3Kernel k) {
  switch (k) {
    case Blake3Kernel::portable:
      return "portable";
    case Blake3Kernel::sse41:
      return "sse4.1";
    case Blake3Kernel::avx2:
      return "avx2";
    case Blake3Kernel::avx512:
      return "avx512";
  }
  return "?";
}

}  // namespace bs
