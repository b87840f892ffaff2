// `bench --parallel N`: decode throughput of N sequences decoding together (serve's continuous batching).
#pragma once
#include <cstdint>
#include <string>

#include "runtime/generate/session.h"

namespace bs::cli {

struct BenchParallelArgs {
  std::string model, precision = "f16";
  int32_t parallel = 2, prompt_tokens = 512, gen_tokens = 128, reps = 5, ctx = 0;
  generate::SamplingOptions sampling;
  bool json = false, profile = false;  // profile: GPU ms by kernel of one step, after the timed runs
};

// Prefills N sequences of random tokens (one per slot), then times the replayed decode batches until every
// sequence has its gen_tokens: aggregate and per-sequence decode tokens/s, medians over reps.
void run_bench_parallel(const BenchParallelArgs& a);

}  // namespace bs::cli
