#include "sharding/writer.h"

#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "runtime/base/error.h"
#include "sharding/hash.h"

namespace bs {

namespace fs = std::filesystem;

namespace {

struct ZstdCtx {
  ZSTD_CCtx* p = ZSTD_createCCtx();
  ~ZstdCtx() { ZSTD_freeCCtx(p); }
};

void write_file(const fs::path& path, std::span<const std::byte> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail("{}: cannot create: {}", path.string(), std::strerror(errno));
  size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  int err = n == bytes.size() ? 0 : errno;
  if (std::fclose(f) != 0 && !err) err = errno;
  if (n != bytes.size() || err)
    fail_kind(ErrorKind::resources, "{}: write failed after {} of {} bytes: {}", path.string(), n, bytes.size(),
              std::strerror(err));
}

// Hashes, compresses and writes one shard; runs on a background thread.
ShardInfo store_shard(const fs::path& dir, ShardInfo info, std::vector<std::byte> raw, uint64_t size,
                      const ShardWriterOptions& opt) {
  std::span<const std::byte> bytes(raw.data(), size);
  info.size = size;
  auto plain = [&](std::string raw_hash) {
    info.filename = fmt::format("shard_{:05d}.bin", info.index);
    info.hash = std::move(raw_hash);
    write_file(dir / info.filename, bytes);
    return info;
  };
  if (!opt.compress) return plain(hash_hex(opt.hash, bytes));
  info.filename = fmt::format("shard_{:05d}.bin.zst", info.index);
  // Hash the raw bytes while zstd's workers compress them.
  auto raw_hash = std::async(std::launch::async, [bytes, &opt] { return hash_hex(opt.hash, bytes); });
  std::vector<std::byte> out(ZSTD_compressBound(size));
  ZstdCtx cctx;
  ZSTD_CCtx_setParameter(cctx.p, ZSTD_c_compressionLevel, opt.zstd_level);
  ZSTD_CCtx_setParameter(cctx.p, ZSTD_c_contentSizeFlag, 1);
  int workers = opt.threads > 0 ? opt.threads : int(std::thread::hardware_concurrency());
  if (workers > 1) ZSTD_CCtx_setParameter(cctx.p, ZSTD_c_nbWorkers, workers);  // ignored without MT support
  size_t n = ZSTD_compress2(cctx.p, out.data(), out.size(), bytes.data(), bytes.size());
  if (ZSTD_isError(n)) throw Error(fmt::format("zstd compression failed: {}", ZSTD_getErrorName(n)), ErrorKind::internal);
  if (double(n) > double(size) * (1.0 - opt.min_saving)) return plain(raw_hash.get());  // not worth a decode
  std::span<const std::byte> stored(out.data(), n);
  info.compressed = true;
  info.stored_size = n;
  info.stored_hash = hash_hex(opt.hash, stored);
  info.hash = raw_hash.get();
  write_file(dir / info.filename, stored);
  return info;
}

}  // namespace

ShardWriter::ShardWriter(fs::path dir, ShardWriterOptions options) : dir_(std::move(dir)), opt_(options) {
  if (opt_.shard_size < 4096) fail("shard size {} is too small (at least 4096 bytes)", opt_.shard_size);
  if (opt_.align == 0 || opt_.shard_size % opt_.align) fail("shard size must be a multiple of {}", opt_.align);
  if (opt_.compress && (opt_.zstd_level < ZSTD_minCLevel() || opt_.zstd_level > ZSTD_maxCLevel()))
    fail("zstd level {} is outside [{}, {}]", opt_.zstd_level, ZSTD_minCLevel(), ZSTD_maxCLevel());
  if (!(opt_.min_saving >= 0 && opt_.min_saving < 1))
    fail("minimum zstd saving {} is outside [0, 1)", opt_.min_saving);
  buf_.resize(opt_.shard_size);
}

ShardWriter::~ShardWriter() {
  if (in_flight_.valid()) in_flight_.wait();
}

std::vector<TensorSpan> ShardWriter::begin_tensor(uint64_t size) {
  if (pending_) throw Error("ShardWriter: previous tensor not complete", ErrorKind::internal);
  const uint64_t cap = opt_.shard_size;
  uint64_t start = (fill_ + opt_.align - 1) / opt_.align * opt_.align;
  bool fits_fresh = size <= cap;
  if (fill_ > 0 && (start >= cap || (fits_fresh && size > cap - start))) {
    flush();
    start = 0;
  }
  std::memset(buf_.data() + fill_, 0, start - fill_);
  fill_ = start;
  std::vector<TensorSpan> spans;
  uint32_t shard = uint32_t(shards_.size() + (in_flight_.valid() ? 1 : 0));
  uint64_t off = fill_, left = size;
  do {
    uint64_t take = std::min(left, cap - off);
    spans.push_back({shard++, off, take});
    left -= take;
    off = 0;
  } while (left > 0);
  pending_ = size;
  return spans;
}

void ShardWriter::write(std::span<const std::byte> bytes) {
  if (bytes.size() > pending_)
    throw Error(fmt::format("ShardWriter: {} bytes written, {} expected", bytes.size(), pending_), ErrorKind::internal);
  while (!bytes.empty()) {
    if (fill_ == opt_.shard_size) flush();
    size_t take = std::min<uint64_t>(bytes.size(), opt_.shard_size - fill_);
    std::memcpy(buf_.data() + fill_, bytes.data(), take);
    fill_ += take;
    pending_ -= take;
    bytes = bytes.subspan(take);
  }
}

void ShardWriter::collect() {
  if (in_flight_.valid()) shards_.push_back(in_flight_.get());
}

void ShardWriter::flush() {
  if (fill_ == 0) return;
  collect();
  ShardInfo info;
  info.index = uint32_t(shards_.size());
  info.offset = offset_;
  offset_ += fill_;
  std::vector<std::byte> full(opt_.shard_size);
  full.swap(buf_);
  in_flight_ = std::async(std::launch::async, store_shard, dir_, info, std::move(full), fill_, opt_);
  fill_ = 0;
}

std::vector<ShardInfo> ShardWriter::finish() {
  if (pending_) throw Error(fmt::format("ShardWriter: last tensor is {} bytes short", pending_), ErrorKind::internal);
  flush();
  collect();
  return std::move(shards_);
}

}  // namespace bs
