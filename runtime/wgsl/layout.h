// How the GLSL emitter reproduces WGSL's memory layout (see layout.cpp).
#pragma once
#include <vector>

#include "runtime/wgsl/types.h"

namespace bs::wgsl {

// One slot of an emitted GLSL struct: a WGSL member (member >= 0) or `pad_bytes` of padding made
// of units of `pad_unit` bytes (4: uint, 2: float16_t).
// Pads of up to this many units are emitted as separate scalar members (std140 keeps those packed).
constexpr uint32_t kMaxScalarPads = 16;

struct GlslSlot {
  int member = -1;
  uint32_t pad_bytes = 0;
  uint32_t pad_unit = 0;
};

// The GLSL member list that makes std430 place every member at its WGSL offset and gives the
// struct its WGSL size.
std::vector<GlslSlot> glsl_struct_plan(const Decl* s);
bool needs_padding(const Decl* s);
// True when std140 rules place everything in `t` where WGSL does (then a uniform block can be std140).
bool std140_matches_wgsl(const Type* t);

}  // namespace bs::wgsl
