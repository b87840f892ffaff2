// Host emulation of a plan: the same partition across PEs, the same roundings, the same order.
//
// What it reproduces of the PE programs (pe_program.csl):
//   - per PE, f32 sums in index order over its tile (padding lanes are zero);
//   - the row reduction (reduce_fadds) as a sum over columns in ascending px order, starting from
//     column 0. The library's internal order is not documented; another order changes the f32
//     result by a few ulps, far below the tolerances — proof.json says so in "assumptions";
//   - inv_rms = 1 / sqrt(total / dim + eps) with a correctly rounded f32 sqrt;
//   - lm_head: x rounded to f16 (round to nearest even), products of two f16 values are exact in
//     f32, one f32 rounding per add.
#pragma once
#include <cstdint>
#include <vector>

#include "cli/csl/plan.h"

namespace bs::csl {

struct PlanInputs {
  std::vector<float> hidden;         // [dim], before the final norm
  std::vector<float> norm_weight;    // [dim], as stored (the plan applies the 1 + w offset)
  std::vector<uint32_t> head_tiles;  // lm_head: [height][width][rows_per_pe][tile_width / 2] f16 pairs
};

// Packs head rows ([tokens][dim] f16 bits) into per-PE tiles: element (row r, column j) of the tile
// of PE (px, py) is token py * rows_per_pe + r, hidden index px * tile_width + j; the even element
// of a pair is the low half of the u32. Padding is zero.
std::vector<uint32_t> pack_head_tiles(const Plan& plan, const std::vector<std::vector<uint16_t>>& rows);
size_t head_tile_words(const Plan& plan);
// The f16 bits of head row `token`, hidden index d, read back out of packed tiles.
uint16_t head_tile_element(const Plan& plan, const std::vector<uint32_t>& tiles, int token, int d);

// Checks sizes against the plan (bs::Error naming the input), then runs it.
// rmsnorm returns [dim] normalized values; lm_head returns [tokens] logits.
std::vector<float> emulate(const Plan& plan, const PlanInputs& in);

}  // namespace bs::csl
