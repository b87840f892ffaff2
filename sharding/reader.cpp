#include "sharding/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <future>
#include <thread>

#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/base/parallel.h"
#include "sharding/hash.h"

namespace bs {

namespace fs = std::filesystem;

namespace {

int thread_count(const LoadOptions& o) {
  int n = o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency());
  return std::max(n, 1);
}

// The manifest's hashAlgorithm (parse_manifest admits only the two).
HashAlgorithm shard_hash_algorithm(const Manifest& m) {
  auto a = parse_hash_algorithm(m.hash_algorithm);
  if (!a) fail("manifest hashAlgorithm: expected \"sha256\" or \"blake3\", got \"{}\"", m.hash_algorithm);
  return *a;
}

// The caller's hash check (LoadOptions::hash_check) or `local`, made for the manifest's algorithm.
ShardHashCheck& hash_check(const Manifest& m, const LoadOptions& o, std::optional<ShardHashCheck>& local) {
  const HashAlgorithm a = shard_hash_algorithm(m);
  if (!o.hash_check) return local.emplace(a);
  if (o.hash_check->algorithm() != a)
    fail_kind(ErrorKind::internal, "LoadOptions::hash_check is for {}, the manifest says {}",
              hash_algorithm_name(o.hash_check->algorithm()), m.hash_algorithm);
  return *o.hash_check;
}

// How the shard hash and the workers share the cores: BLAKE3 can hash one shard on several threads,
// which pays when there are fewer shards than threads (a one-shard model, or the last shard).
int hash_threads(const Manifest& m, const LoadOptions& o) {
  return std::max<int>(1, thread_count(o) / int(std::max<size_t>(1, m.shards.size())));
}

// A verification failure: the check that failed, with expected and actual values.
struct CheckFailure {
  std::string check, expected, actual, message;
};

// Shard-sized buffers recycled between shards: a fresh 64 MiB vector costs a page fault and a zeroing
// per page, which measured as much as the hashing.
class BufferPool {
 public:
  // Every buffer gets at least `min_size` bytes (the largest shard, stored or raw), so buffers can
  // swap roles between shards without reallocating.
  explicit BufferPool(uint64_t min_size = 0) : min_size_(min_size) {}
  std::vector<std::byte> take(uint64_t n) {
    std::vector<std::byte> v;
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        v = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (v.size() < n) v = std::vector<std::byte>(std::max(n, min_size_));  // fresh: no copy of old bytes
    return v;
  }
  void give(std::vector<std::byte> v) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(v));
  }

 private:
  uint64_t min_size_;
  std::mutex mu_;
  std::vector<std::vector<std::byte>> free_;
};

uint64_t largest_shard(const Manifest& m) {
  uint64_t n = 0;
  for (auto& s : m.shards) n = std::max({n, s.size, s.file_size()});
  return n;
}

// A verified shard's raw bytes: the first `size` bytes of a pooled buffer.
struct ShardBytes {
  std::vector<std::byte> buf;
  uint64_t size = 0;
  std::span<const std::byte> bytes() const { return {buf.data(), size}; }
};

// Reads and verifies one shard; on failure fills `why` and returns false (verify collects these,
// loading throws them).
bool read_shard(const ShardInfo& s, ShardHashCheck& check, int threads, const fs::path& dir, bool decompress,
                BufferPool& pool, ShardBytes& raw, CheckFailure& why) {
  const fs::path path = dir / s.filename;
  auto bad = [&](std::string check, std::string expected, std::string actual) {
    why.message = fmt::format("{}: {} mismatch: expected {}, got {}", path.string(), check, expected, actual);
    why.check = std::move(check);
    why.expected = std::move(expected);
    why.actual = std::move(actual);
    return false;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = {"missing", "a file", std::strerror(errno), fmt::format("{}: shard missing: {}", path.string(), std::strerror(errno))};
    return false;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return bad("file type", "a regular file", "something else");
  }
  const uint64_t want = s.file_size();
  if (uint64_t(st.st_size) != want) {
    ::close(fd);
    return bad("size", fmt::format("{} bytes", want), fmt::format("{} bytes", st.st_size));
  }
  std::vector<std::byte> stored = pool.take(want);
  uint64_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(fd, stored.data() + got, want - got, off_t(got));
    if (n <= 0) break;
    got += uint64_t(n);
  }
  ::close(fd);
  if (got != want) return bad("size", fmt::format("{} bytes", want), fmt::format("{} bytes readable", got));
  // storedHash is blueshift's own (always spec BLAKE3); a plain shard's hash may be DOPPLER's.
  std::string h;
  if (!check.matches({stored.data(), want}, s.file_hash(), threads, h, /*spec_only=*/s.compressed))
    return bad(s.compressed ? "storedHash" : "hash", s.file_hash(), h);
  if (!s.compressed) {
    raw.buf = std::move(stored);
    raw.size = want;
    return true;
  }
  if (!decompress) {
    pool.give(std::move(stored));
    return true;
  }
  unsigned long long frame = ZSTD_getFrameContentSize(stored.data(), want);
  if (frame == ZSTD_CONTENTSIZE_ERROR) return bad("zstd", "a zstd frame", "not a zstd frame");
  if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != s.size)
    return bad("rawSize", fmt::format("{} bytes", s.size), fmt::format("{} bytes (zstd frame header)", frame));
  raw.buf = pool.take(s.size);
  raw.size = s.size;
  // The destination is exactly `size` bytes: a frame that decodes to more fails here, to fewer below.
  size_t n = ZSTD_decompress(raw.buf.data(), s.size, stored.data(), want);
  pool.give(std::move(stored));
  if (ZSTD_isError(n)) return bad("zstd", fmt::format("a frame of {} bytes", s.size), ZSTD_getErrorName(n));
  if (n != s.size) return bad("rawSize", fmt::format("{} bytes", s.size), fmt::format("{} bytes", n));
  if (!check.matches(raw.bytes(), s.hash, threads, h)) return bad("hash", s.hash, h);
  return true;
}

}  // namespace

std::vector<std::byte> read_verified_shard(const Manifest& m, const ShardInfo& s, const fs::path& dir) {
  BufferPool pool;
  ShardBytes raw;
  CheckFailure why;
  ShardHashCheck check(shard_hash_algorithm(m));
  if (!read_shard(s, check, thread_count({}), dir, true, pool, raw, why)) throw Error(why.message, ErrorKind::integrity);
  raw.buf.resize(raw.size);
  return std::move(raw.buf);
}

void load_tensors(const Manifest& m, const fs::path& dir, const LoadOptions& opt,
                  const std::function<void(const TensorEntry&, std::span<const std::byte>)>& sink) {
  // The pieces of tensors in each shard, as (tensor, span index, the span's first byte in the tensor),
  // in offset order within the shard.
  struct Piece { const TensorEntry* t; size_t span; uint64_t at; };
  std::vector<std::vector<Piece>> pieces(m.shards.size());
  for (auto& t : m.tensors)
    for (uint64_t k = 0, at = 0; k < t.spans.size(); at += t.spans[k++].size) pieces[t.spans[k].shard].push_back({&t, k, at});
  for (auto& v : pieces)
    std::stable_sort(v.begin(), v.end(), [](const Piece& a, const Piece& b) {
      return a.t->spans[a.span].offset < b.t->spans[b.span].offset;
    });

  const size_t window = size_t(thread_count(opt));
  BufferPool pool(largest_shard(m));
  std::optional<ShardHashCheck> local_check;
  ShardHashCheck& check = hash_check(m, opt, local_check);
  const int hash_thr = hash_threads(m, opt);
  std::deque<std::future<ShardBytes>> in_flight;
  size_t next = 0;
  auto launch = [&] {
    const ShardInfo& s = m.shards[next++];
    in_flight.push_back(std::async(std::launch::async, [&s, &dir, &pool, &check, hash_thr] {
      ShardBytes raw;
      CheckFailure why;
      if (!read_shard(s, check, hash_thr, dir, true, pool, raw, why)) throw Error(why.message, ErrorKind::integrity);
      return raw;
    }));
  };
  // Tensors in several spans are assembled here until their last span arrives. Spans may come in any
  // shard order (DOPPLER's may return to an earlier shard, and put many spans in one), so each is copied
  // to its place in the tensor (Piece::at); a tensor's buffer lives from its first arriving span to its
  // last, so memory stays the shards in flight plus the tensors partly read.
  // Their buffers are reused (the smallest spare one that fits): a fresh buffer per tensor cost its pages' faults
  // and zeroing on every load (8B f16, 64 MB shards, every FFN matrix in 2-3 of them: 13 s of a 13.8 s load was
  // in the sink, 2.6 s of it writing staging memory; session 16's S7).
  struct Assembly {
    std::vector<std::byte> buf;
    size_t spans = 0;  // received
    bool in_parts = false;  // its spans go to opt.part_sink (no buf)
  };
  std::map<const TensorEntry*, Assembly> assembly;
  std::multimap<uint64_t, std::vector<std::byte>> spare;  // by size
  uint64_t done = 0;
  // Where the calling thread's time went (LoadStats; on stderr at the end with BLUESHIFT_LOAD_STATS=1).
  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); };
  const auto t_start = Clock::now();
  double waited = 0, in_sink = 0;
  for (size_t i = 0; i < m.shards.size(); ++i) {
    while (next < m.shards.size() && in_flight.size() < window) launch();
    const auto t_wait = Clock::now();
    ShardBytes shard = in_flight.front().get();  // rethrows the worker's integrity error
    waited += secs(t_wait);
    const auto t_sink = Clock::now();
    std::span<const std::byte> raw = shard.bytes();
    in_flight.pop_front();
    if (next < m.shards.size()) launch();  // keep the pipeline full while we deliver
    for (const Piece& p : pieces[i]) {
      const TensorSpan& sp = p.t->spans[p.span];
      auto part = raw.subspan(sp.offset, sp.size);
      if (p.t->spans.size() == 1) {
        sink(*p.t, part);
        continue;
      }
      Assembly& a = assembly[p.t];
      if (a.spans == 0) a.in_parts = opt.in_parts && opt.part_sink && opt.in_parts(*p.t);
      if (a.in_parts) {
        opt.part_sink(*p.t, p.at, part);
        if (++a.spans == p.t->spans.size()) assembly.erase(p.t);
        continue;
      }
      if (a.spans == 0) {
        if (auto fit = spare.lower_bound(p.t->size); fit != spare.end()) {
          a.buf = std::move(fit->second);
          spare.erase(fit);
        } else {
          a.buf.resize(p.t->size);
        }
      }
      parallel_pieces(part.size(), 1, [&](uint64_t at, uint64_t n) {
        std::memcpy(a.buf.data() + p.at + at, part.data() + at, n);
      });
      if (++a.spans == p.t->spans.size()) {  // spans do not overlap (parse_manifest): every byte is written
        sink(*p.t, std::span<const std::byte>(a.buf).first(p.t->size));
        const uint64_t cap = a.buf.size();
        spare.emplace(cap, std::move(a.buf));
        assembly.erase(p.t);
      }
    }
    pool.give(std::move(shard.buf));
    in_sink += secs(t_sink);
    done += m.shards[i].size;
    if (opt.progress) opt.progress(done, m.total_size);
  }
  const LoadStats st{m.shards.size(), m.total_size, secs(t_start), waited, in_sink};
  if (opt.stats) *opt.stats = st;
  if (env_switch("BLUESHIFT_LOAD_STATS"))
    std::fprintf(stderr,
                 "load-stats: %zu shards, %.2f GB raw in %.2f s: waiting for shards %.2f s (reading, hash checks, zstd; "
                 "%zu in flight), in the sink %.2f s (the upload)\n",
                 st.shards, double(st.raw_bytes) / 1e9, st.seconds, st.shard_wait_s, window, st.sink_s);
}

std::vector<ShardProblem> verify_shards(const Manifest& m, const fs::path& dir, const LoadOptions& opt,
                                        bool decompress) {
  std::vector<ShardProblem> problems(m.shards.size());
  std::vector<char> bad(m.shards.size(), 0);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::mutex progress_mu;
  BufferPool pool(largest_shard(m));
  std::optional<ShardHashCheck> local_check;
  ShardHashCheck& check = hash_check(m, opt, local_check);
  const int hash_thr = hash_threads(m, opt);
  auto worker = [&] {
    for (size_t i; (i = next++) < m.shards.size();) {
      const ShardInfo& s = m.shards[i];
      ShardBytes raw;
      CheckFailure why;
      if (!read_shard(s, check, hash_thr, dir, decompress, pool, raw, why)) {
        problems[i] = {s.index, s.filename, why.check, why.expected, why.actual, why.message};
        bad[i] = 1;
      }
      if (!raw.buf.empty()) pool.give(std::move(raw.buf));
      uint64_t d = done += s.size;
      if (opt.progress) {
        std::lock_guard lock(progress_mu);
        opt.progress(d, m.total_size);
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < thread_count(opt); ++t) workers.emplace_back(worker);
  for (auto& t : workers) t.join();
  std::vector<ShardProblem> out;
  for (size_t i = 0; i < problems.size(); ++i)
    if (bad[i]) out.push_back(std::move(problems[i]));
  return out;
}

}  // namespace bs
