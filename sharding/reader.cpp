#include "sharding/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <future>
#include <thread>

#include "runtime/base/error.h"
#include "sharding/hash.h"

namespace bs {

namespace fs = std::filesystem;

namespace {

int thread_count(const LoadOptions& o) {
  int n = o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency());
  return std::max(n, 1);
}

// A verification failure: the check that failed, with expected and actual values.
struct CheckFailure {
  std::string check, expected, actual, message;
};

// Reads and verifies one shard; on failure fills `why` and returns false (verify collects these,
// loading throws them).
bool read_shard(const ShardInfo& s, const fs::path& dir, bool decompress, std::vector<std::byte>& raw,
                CheckFailure& why) {
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
  std::vector<std::byte> stored(want);
  uint64_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(fd, stored.data() + got, want - got, off_t(got));
    if (n <= 0) break;
    got += uint64_t(n);
  }
  ::close(fd);
  if (got != want) return bad("size", fmt::format("{} bytes", want), fmt::format("{} bytes readable", got));
  std::string h = sha256_hex(stored);
  if (h != s.file_hash()) return bad(s.compressed ? "storedHash" : "hash", s.file_hash(), h);
  if (!s.compressed) {
    raw = std::move(stored);
    return true;
  }
  if (!decompress) return true;
  unsigned long long frame = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (frame == ZSTD_CONTENTSIZE_ERROR) return bad("zstd", "a zstd frame", "not a zstd frame");
  if (frame != ZSTD_CONTENTSIZE_UNKNOWN && frame != s.size)
    return bad("rawSize", fmt::format("{} bytes", s.size), fmt::format("{} bytes (zstd frame header)", frame));
  raw.resize(s.size);
  size_t n = ZSTD_decompress(raw.data(), raw.size(), stored.data(), stored.size());
  if (ZSTD_isError(n)) return bad("zstd", fmt::format("a frame of {} bytes", s.size), ZSTD_getErrorName(n));
  if (n != s.size) return bad("rawSize", fmt::format("{} bytes", s.size), fmt::format("{} bytes", n));
  h = sha256_hex(raw);
  if (h != s.hash) return bad("hash", s.hash, h);
  return true;
}

}  // namespace

std::vector<std::byte> read_verified_shard(const ShardInfo& s, const fs::path& dir) {
  std::vector<std::byte> raw;
  CheckFailure why;
  if (!read_shard(s, dir, true, raw, why)) throw Error(why.message, ErrorKind::integrity);
  return raw;
}

void load_tensors(const Manifest& m, const fs::path& dir, const LoadOptions& opt,
                  const std::function<void(const TensorEntry&, std::span<const std::byte>)>& sink) {
  // The pieces of tensors in each shard, as (tensor, span index), in offset order within the shard.
  struct Piece { const TensorEntry* t; size_t span; };
  std::vector<std::vector<Piece>> pieces(m.shards.size());
  for (auto& t : m.tensors)
    for (size_t k = 0; k < t.spans.size(); ++k) pieces[t.spans[k].shard].push_back({&t, k});
  for (auto& v : pieces)
    std::stable_sort(v.begin(), v.end(), [](const Piece& a, const Piece& b) {
      return a.t->spans[a.span].offset < b.t->spans[b.span].offset;
    });

  const size_t window = size_t(thread_count(opt));
  std::deque<std::future<std::vector<std::byte>>> in_flight;
  size_t next = 0;
  auto launch = [&] {
    const ShardInfo& s = m.shards[next++];
    in_flight.push_back(std::async(std::launch::async, [&s, &dir] { return read_verified_shard(s, dir); }));
  };
  // Tensors crossing shards are assembled here until their last span arrives (DOPPLER packs tensors
  // back to back, so usually one at a time).
  std::map<const TensorEntry*, std::vector<std::byte>> assembly;
  uint64_t done = 0;
  for (size_t i = 0; i < m.shards.size(); ++i) {
    while (next < m.shards.size() && in_flight.size() < window) launch();
    std::vector<std::byte> raw = in_flight.front().get();  // rethrows the worker's integrity error
    in_flight.pop_front();
    if (next < m.shards.size()) launch();  // keep the pipeline full while we deliver
    for (const Piece& p : pieces[i]) {
      const TensorSpan& sp = p.t->spans[p.span];
      auto part = std::span<const std::byte>(raw).subspan(sp.offset, sp.size);
      if (p.t->spans.size() == 1) {
        sink(*p.t, part);
        continue;
      }
      auto& buf = assembly[p.t];
      if (p.span == 0) buf.reserve(p.t->size);
      buf.insert(buf.end(), part.begin(), part.end());
      if (p.span + 1 == p.t->spans.size()) {
        sink(*p.t, buf);
        assembly.erase(p.t);
      }
    }
    done += m.shards[i].size;
    if (opt.progress) opt.progress(done, m.total_size);
  }
}

std::vector<ShardProblem> verify_shards(const Manifest& m, const fs::path& dir, const LoadOptions& opt,
                                        bool decompress) {
  std::vector<ShardProblem> problems(m.shards.size());
  std::vector<char> bad(m.shards.size(), 0);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::mutex progress_mu;
  auto worker = [&] {
    for (size_t i; (i = next++) < m.shards.size();) {
      const ShardInfo& s = m.shards[i];
      std::vector<std::byte> raw;
      CheckFailure why;
      if (!read_shard(s, dir, decompress, raw, why)) {
        problems[i] = {s.index, s.filename, why.check, why.expected, why.actual, why.message};
        bad[i] = 1;
      }
      uint64_t d = done += s.size;
      if (opt.progress) {
        std::lock_guard lock(progress_mu);
        opt.progress(d, m.total_size);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < thread_count(opt); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  std::vector<ShardProblem> out;
  for (size_t i = 0; i < problems.size(); ++i)
    if (bad[i]) out.push_back(std::move(problems[i]));
  return out;
}

}  // namespace bs
