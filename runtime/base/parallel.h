// Large host copies split across threads: one core writes ~4-5 GB/s on the lease machine, so a 16 GB model's
// copies into staging memory took 2.4-3.4 s on one thread, and its multi-shard tensors' assembly as long again
// (session 16, S7-S8). BLUESHIFT_COPY_THREADS sets the threads (1: on the calling thread alone).
#pragma once
#include <algorithm>
#include <cstdint>
#include <future>
#include <thread>
#include <vector>

#include "runtime/base/env.h"

namespace bs {

// Threads for one large copy: BLUESHIFT_COPY_THREADS, else up to 8 of the machine's hardware threads.
inline unsigned copy_threads() {
  static const unsigned n = [] {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    return std::max(1u, env_uint("BLUESHIFT_COPY_THREADS", std::min(8u, hw)));
  }();
  return n;
}

// Calls fn(at, n) over [0, size) in pieces of whole `unit`s (size a multiple of it), at least `min_piece` bytes each,
// on up to copy_threads() threads (this one among them); fn must be safe to run on disjoint ranges at once. An
// exception from any piece is rethrown here once every piece has ended.
template <class Fn>
void parallel_pieces(uint64_t size, uint64_t unit, Fn&& fn, uint64_t min_piece = 4ull << 20) {
  const uint64_t units = unit ? size / unit : 0;
  const uint64_t threads = std::min<uint64_t>({copy_threads(), units, size / std::max<uint64_t>(min_piece, 1)});
  if (threads < 2) {
    fn(uint64_t(0), size);
    return;
  }
  const uint64_t per = (units + threads - 1) / threads * unit;
  std::vector<std::future<void>> rest;
  for (uint64_t at = per; at < size; at += per)
    rest.push_back(std::async(std::launch::async, [&fn, at, n = std::min(per, size - at)] { fn(at, n); }));
  std::exception_ptr first;
  try {
    fn(uint64_t(0), per);
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& f : rest) try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  if (first) std::rethrow_exception(first);
}

}  // namespace bs
