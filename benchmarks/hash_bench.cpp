// bs_hash_bench: single-thread throughput of the shard hashes over one buffer (default 64 MiB, random):
// SHA-256 (OpenSSL), BLAKE3 with each kernel this CPU has (spec, and DOPPLER's variant of it, which
// DOPPLER's "blake3" manifests use), BLAKE3 on --threads threads, and the
// block Merkle root (SHA-256 leaves) that `verify --deep` computes. Prints MB/s, best of --reps.
// Usage: bs_hash_bench [--mib 64] [--reps 5] [--threads 2]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "sharding/blake3.h"
#include "sharding/hash.h"
#include "sharding/merkle.h"

using namespace bs;

static double best_mb_s(size_t bytes, int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) {  // one warm-up
    auto t0 = std::chrono::steady_clock::now();
    f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r) best = std::min(best, s);
  }
  return double(bytes) / 1e6 / best;
}

int main(int argc, char** argv) {
  CLI::App app{"hash throughput"};
  size_t mib = 64;
  int reps = 5, threads = 2;
  app.add_option("--mib", mib);
  app.add_option("--reps", reps);
  app.add_option("--threads", threads);
  CLI11_PARSE(app, argc, argv);
  std::vector<std::byte> buf(mib << 20);
  std::mt19937_64 rng(1);
  for (size_t i = 0; i + 8 <= buf.size(); i += 8) {
    uint64_t x = rng();
    std::memcpy(buf.data() + i, &x, 8);
  }
  size_t sink = 0;  // printed at the end, so no hash is optimized away
  std::printf("buffer: %zu MiB, best of %d\n", mib, reps);
  std::printf("sha256 (OpenSSL)      1 thread : %7.0f MB/s\n",
              best_mb_s(buf.size(), reps, [&] { sink += sha256_hex(buf).size(); }));
  for (Blake3Kernel k : blake3_kernels_available()) {
    blake3_force_kernel(k);
    std::printf("blake3 %-14s 1 thread : %7.0f MB/s   doppler variant: %7.0f MB/s\n",
                std::string(blake3_kernel_name(k)).c_str(),
                best_mb_s(buf.size(), reps, [&] { sink += blake3(buf)[0]; }),
                best_mb_s(buf.size(), reps, [&] { sink += blake3_doppler(buf)[0]; }));
  }
  blake3_reset_kernel();
  std::printf("blake3 %-14s %d threads: %7.0f MB/s\n",
              std::string(blake3_kernel_name(blake3_kernel())).c_str(), threads,
              best_mb_s(buf.size(), reps, [&] { sink += blake3(buf, threads)[0]; }));
  std::printf("blockMerkle 1 MiB     1 thread : %7.0f MB/s\n",
              best_mb_s(buf.size(), reps, [&] { sink += block_merkle_root(buf, 1 << 20).size(); }));
  std::printf("(checksum %zu)\n", sink);
  return 0;
}
