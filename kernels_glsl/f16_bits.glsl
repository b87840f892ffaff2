// IEEE binary16 from binary32 bit patterns in integer arithmetic, bit for bit runtime/base/half.h's
// float_to_half (round to nearest even, f16 subnormals kept, overflow to inf, NaN quieted). The repack
// kernels use it where their output must equal the host's: packHalf2x16 leaves the rounding mode and
// the treatment of subnormals to the implementation.

uint bs_f32_bits_to_f16(uint x) {
  uint sign = (x >> 16) & 0x8000u;
  uint ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u);  // inf / NaN
  if (ax >= 0x477ff000u) return sign | 0x7c00u;                                      // rounds past 65504
  if (ax < 0x38800000u) {                                                            // f16 subnormal or zero
    if (ax < 0x33000000u) return sign;
    uint e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    uint shift = 126u - e;
    uint r = m >> shift, rem = m & ((1u << shift) - 1u), tie = 1u << (shift - 1u);
    if (rem > tie || (rem == tie && (r & 1u) != 0u)) ++r;
    return sign | r;
  }
  uint r = (ax - 0x38000000u) >> 13, rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u) != 0u)) ++r;
  return sign | r;
}

// binary32 bits of an f16 (half.h's half_to_float): exact, subnormals normalized here rather than left
// to a conversion that may flush them.
uint bs_f16_bits_to_f32(uint h) {
  uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (e == 0u) {
    if (man == 0u) return sign;
    uint p = uint(findMSB(man));  // man * 2^-24 = 1.f * 2^(p - 24)
    return sign | ((p + 103u) << 23) | ((man << (23u - p)) & 0x7fffffu);
  }
  if (e == 31u) return sign | 0x7f800000u | (man << 13);
  return sign | ((e + 112u) << 23) | (man << 13);
}
