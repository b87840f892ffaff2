// runtime/base/parallel.h: the pieces of a large copy cover the range once, in whole units, and an exception
// from any piece reaches the caller.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/base/parallel.h"

namespace bs {
namespace {

TEST(ParallelPieces, CoverTheRangeOnceInWholeUnits) {
  for (uint64_t unit : {1ull, 210ull, 224ull, 4096ull})
    for (uint64_t units : {0ull, 1ull, 7ull, 999ull, 4097ull}) {
      const uint64_t size = unit * units;
      std::mutex mu;
      std::vector<std::pair<uint64_t, uint64_t>> seen;
      parallel_pieces(size, unit, [&](uint64_t at, uint64_t n) {
        std::lock_guard lock(mu);
        seen.emplace_back(at, n);
      }, 1000);
      std::sort(seen.begin(), seen.end());
      uint64_t next = 0;
      for (auto [at, n] : seen) {
        EXPECT_EQ(at, next) << "unit " << unit << ", size " << size;
        EXPECT_EQ(at % unit, 0u) << "unit " << unit;
        EXPECT_EQ(n % unit, 0u) << "unit " << unit;
        next = at + n;
      }
      EXPECT_EQ(next, size) << "unit " << unit;
      if (copy_threads() > 1 && size >= 4000 && units >= 2) {
        EXPECT_GT(seen.size(), 1u) << "unit " << unit;
      }
    }
}

TEST(ParallelPieces, CopiesBitExact) {
  std::mt19937 rng(std::random_device{}());
  std::vector<unsigned char> src((9u << 20) + 13), dst(src.size(), 0xAB);
  for (auto& b : src) b = static_cast<unsigned char>(rng());
  parallel_pieces(src.size(), 1, [&](uint64_t at, uint64_t n) { std::memcpy(dst.data() + at, src.data() + at, n); });
  EXPECT_EQ(src, dst);
}

TEST(ParallelPieces, AnExceptionReachesTheCaller) {
  if (copy_threads() > 1) {  // a piece on another thread
    EXPECT_THROW(parallel_pieces(1 << 20, 1, [](uint64_t at, uint64_t) {
                   if (at > 0) throw std::runtime_error("piece failed");
                 }, 1000),
                 std::runtime_error);
  }
  EXPECT_THROW(parallel_pieces(100, 1, [](uint64_t, uint64_t) { throw std::runtime_error("alone"); }), std::runtime_error);
}

}  // namespace
}  // namespace bs
