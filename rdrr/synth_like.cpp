#include "rdrr/synth_like.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "rdrr/synth_like_plan.h"
#include "rdrr/partial_dir.h"
#include "runtime/base/error.h"
#include "sharding/hash.h"

namespace bs {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using namespace synth_like_detail;

namespace {

// One Merkle leaf: the SHA-256 of a block (sharding/merkle.h, where the tree is folded too).
Digest leaf(const uint8_t* data, uint64_t n) { return merkle_leaf({reinterpret_cast<const std::byte*>(data), n}); }

// Hashes the blocks of an item's bytes that lie whole in this piece of a shard; a block that straddles
// two pieces is regenerated from the stream afterwards.
void leaves_from_piece(Item& it, const Piece& pc, const uint8_t* shard, uint64_t block) {
  const uint64_t total = it.stream.size(), end = pc.at + pc.size;
  for (uint64_t k = (pc.at + block - 1) / block; k * block < end; ++k) {
    uint64_t lo = k * block, hi = std::min(lo + block, total);
    if (hi > end) break;
    it.leaves[k] = leaf(shard + pc.offset + (lo - pc.at), hi - lo);
    it.have[k] = 1;
  }
}

// Runs fn(job, worker) for job in [0, n) on `threads` workers; rethrows the first failure.
void parallel(size_t n, int threads, const std::function<void(size_t, int)>& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto worker = [&](int w) {
    for (size_t j; !failed && (j = next++) < n;) try {
        fn(j, w);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) pool.emplace_back(worker, w);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

void write_bytes(const fs::path& path, const uint8_t* data, uint64_t n) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_kind(ErrorKind::resources, "{}: cannot create: {}", path.string(), std::strerror(errno));
  uint64_t put = 0;
  while (put < n) {
    ssize_t r = ::write(fd, data + put, std::min<uint64_t>(n - put, 1u << 30));
    if (r <= 0) {
      int e = errno;
      ::close(fd);
      fail_kind(ErrorKind::resources, "{}: write failed: {}", path.string(), std::strerror(e));
    }
    put += uint64_t(r);
  }
  if (::close(fd) != 0) fail_kind(ErrorKind::resources, "{}: close failed: {}", path.string(), std::strerror(errno));
}

}  // namespace

SynthLikeResult synth_like(const fs::path& manifest_arg, const fs::path& out_arg, const SynthLikeOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  const fs::path manifest = fs::is_directory(manifest_arg) ? manifest_arg / "manifest.json" : manifest_arg;
  fs::path out_dir = out_arg;
  if (out_dir.filename().empty()) out_dir = out_dir.parent_path();  // "out/" names "out"
  std::error_code same_ec;
  if (fs::exists(out_dir) && fs::equivalent(out_dir, manifest.parent_path().empty() ? "." : manifest.parent_path(), same_ec))
    fail_kind(ErrorKind::usage, "{}: is the manifest's own directory; synth --like writes a new bundle beside it",
              out_dir.string());
  if (fs::exists(out_dir) && !o.force)
    fail_kind(ErrorKind::usage, "{}: already exists (use --force to replace it)", out_dir.string());
  Plan p = make_plan(manifest, o.seed);
  SynthLikeResult r;
  r.shards = p.shards.size();
  r.tensors = p.tensors;
  r.bytes = p.total;
  r.hash_algorithm = std::string(hash_algorithm_name(p.alg));
  for (auto& it : p.items) r.merkle_roots += it.merkle;
  if (o.dry_run) return r;
  try {
    hash_hex(p.alg, {});  // a missing hash implementation fails here, before anything is written
  } catch (const Error& e) {
    fail_kind(e.kind(), "{}: hashAlgorithm {}: {}", manifest.string(), hash_algorithm_name(p.alg), e.what());
  }
  fs::path parent = out_dir.parent_path().empty() ? fs::path(".") : out_dir.parent_path();
  std::error_code ec;
  auto space = fs::space(parent, ec);
  if (!ec && space.available < p.total)
    fail_kind(ErrorKind::resources, "{}: needs {:.2f} GB for the shards, {:.2f} GB free", parent.string(),
              double(p.total) / 1e9, double(space.available) / 1e9);

  SignalGuard signals;  // before the temporary directory, so that it is removed first
  PartialDir tmp(out_dir, o.keep_partial);
  // Memory is one shard per thread: DOPPLER's 64 MiB shards fit any thread count, but a manifest of
  // larger shards gets fewer threads (at most 4 GiB of shard buffers, and always one).
  uint64_t largest = 1;
  for (auto& sh : p.shards) largest = std::max(largest, sh.size);
  int threads = o.threads > 0 ? o.threads : std::max(1, int(std::thread::hardware_concurrency()));
  threads = int(std::clamp<uint64_t>((uint64_t(4) << 30) / largest, 1, uint64_t(threads)));
  std::vector<std::vector<uint8_t>> bufs(static_cast<size_t>(threads));
  std::atomic<uint64_t> done{0};
  std::mutex progress_mu;
  if (o.progress) o.progress(0, p.total);
  parallel(p.shards.size(), threads, [&](size_t s, int w) {
    signals.check();
    ShardPlan& sh = p.shards[s];
    std::vector<uint8_t>& buf = bufs[size_t(w)];
    try {
      buf.resize(sh.size);
    } catch (const std::bad_alloc&) {
      fail_kind(ErrorKind::resources, "{}: {} bytes do not fit in memory", sh.filename, sh.size);
    }
    std::memset(buf.data(), 0, sh.size);  // bytes no tensor covers are zero
    for (const Piece& pc : sh.pieces) {
      Item& it = p.items[pc.item];
      it.stream.read(pc.at, pc.at + pc.size, buf.data() + pc.offset);
      if (it.merkle) leaves_from_piece(it, pc, buf.data(), p.block_size);
    }
    sh.hash = hash_hex(p.alg, {reinterpret_cast<const std::byte*>(buf.data()), sh.size});
    write_bytes(tmp.path() / sh.filename, buf.data(), sh.size);
    uint64_t d = done += sh.size;
    if (o.progress) {
      std::lock_guard lock(progress_mu);
      o.progress(d, p.total);
    }
  });
  bufs.clear();

  // Merkle leaves that straddle two pieces (a span boundary), regenerated from the streams.
  std::vector<std::pair<uint32_t, uint64_t>> missing;
  for (uint32_t i = 0; i < p.items.size(); ++i)
    for (uint64_t k = 0; k < p.items[i].have.size(); ++k)
      if (!p.items[i].have[k]) missing.emplace_back(i, k);
  parallel(missing.size(), threads, [&](size_t j, int) {
    Item& it = p.items[missing[j].first];
    uint64_t lo = missing[j].second * p.block_size, hi = std::min(lo + p.block_size, it.stream.size());
    std::vector<uint8_t> block(hi - lo);
    it.stream.read(lo, hi, block.data());
    it.leaves[missing[j].second] = leaf(block.data(), block.size());
  });

  ordered_json& m = p.manifest;
  for (size_t i = 0; i < p.shards.size(); ++i) {
    m["shards"][i]["hash"] = p.shards[i].hash;
    if (m["shards"][i].contains("blake3")) m["shards"][i]["blake3"] = p.shards[i].hash;  // older manifests' duplicate
  }
  for (auto& it : p.items)
    if (it.merkle) m["integrityExtensions"]["blockMerkle"]["roots"][it.name] = merkle_root_of_leaves(it.leaves);
  // The bundle says what it is: random weights at the shape of another model, whose identity fields
  // (artifactIdentity, weightsRef) are kept as they were and no longer describe these shards.
  if (!m.contains("metadata") || !m["metadata"].is_object()) m["metadata"] = ordered_json::object();
  std::string like = m.contains("modelId") && m["modelId"].is_string() ? m["modelId"].get<std::string>()
                                                                        : manifest_arg.filename().string();
  m["metadata"]["x-blueshift-synth"] = {{"like", like}, {"seed", o.seed},
                                        {"weights", "random; identity fields are the source's"}};
  std::string text = m.dump(2) + "\n";
  write_bytes(tmp.path() / "manifest.json", reinterpret_cast<const uint8_t*>(text.data()), text.size());

  // The tokenizer DOPPLER bundles beside its manifest, when the manifest's directory has it.
  std::vector<std::string> tok_files = {"tokenizer.json"};
  if (m.contains("tokenizer") && m["tokenizer"].is_object() && m["tokenizer"].contains("file") &&
      m["tokenizer"]["file"].is_string()) {
    std::string f = m["tokenizer"]["file"];
    if (!f.empty() && f.find('/') == std::string::npos && f != "." && f != ".." && f != "manifest.json") tok_files.push_back(f);
  }
  for (auto& f : tok_files) {
    fs::path src = manifest.parent_path() / f;
    if (fs::is_regular_file(src) && !fs::exists(tmp.path() / f)) {
      fs::copy_file(src, tmp.path() / f);
      r.tokenizer = true;
    }
  }

  signals.check();
  tmp.commit();  // an existing OUT_DIR (the caller checked --force) is replaced

  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace bs
