// Fuzz target: synth --like's manifest plan on arbitrary bytes. Built as a libFuzzer binary with
// -DBLUESHIFT_FUZZ=ON (clang); test_synth_like.cpp runs the same function on deterministic mutations.
// Whatever it accepts must be writable: every piece inside its shard, no two overlapping, each item's
// pieces adding up to its stream, and (for small plans) every stream readable over every piece.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "rdrr/synth_like_plan.h"
#include "runtime/base/error.h"

int fuzz_synth_like(const uint8_t* data, size_t size) {
  using namespace bs::synth_like_detail;
  try {
    Plan p = make_plan_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", 1);
    std::vector<uint64_t> placed(p.items.size(), 0);
    for (auto& sh : p.shards) {
      uint64_t end = 0;
      for (auto& pc : sh.pieces) {
        if (pc.item >= p.items.size() || pc.offset < end || pc.offset + pc.size > sh.size) __builtin_trap();
        end = pc.offset + pc.size;
        placed[pc.item] += pc.size;
      }
    }
    for (size_t i = 0; i < p.items.size(); ++i)
      if (placed[i] != p.items[i].stream.size()) __builtin_trap();
    if (p.total <= (1u << 20)) {
      std::vector<uint8_t> buf;
      for (auto& sh : p.shards) {
        buf.assign(sh.size, 0);
        for (auto& pc : sh.pieces) p.items[pc.item].stream.read(pc.at, pc.at + pc.size, buf.data() + pc.offset);
      }
    }
  } catch (const bs::Error&) {
  }
  return 0;
}

#ifdef BLUESHIFT_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_synth_like(data, size); }
#endif
