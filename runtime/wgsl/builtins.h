// The builtin functions blueshift resolves: their ids, WGSL names and which need an extension.
#pragma once
#include <string_view>

namespace bs::wgsl {

#define BS_WGSL_BUILTINS(X)                                                                          \
  X(abs) X(acos) X(acosh) X(asin) X(asinh) X(atan) X(atanh) X(atan2) X(ceil) X(clamp) X(cos) X(cosh)  \
  X(countLeadingZeros) X(countOneBits) X(countTrailingZeros) X(cross) X(degrees) X(determinant)      \
  X(distance) X(dot) X(dot4U8Packed) X(dot4I8Packed) X(exp) X(exp2) X(extractBits) X(faceForward)    \
  X(firstLeadingBit) X(firstTrailingBit) X(floor) X(fma) X(fract) X(insertBits) X(inverseSqrt)       \
  X(ldexp) X(length) X(log) X(log2) X(max) X(min) X(mix) X(normalize) X(pow) X(quantizeToF16)        \
  X(radians) X(reflect) X(refract) X(reverseBits) X(round) X(saturate) X(sign) X(sin) X(sinh)        \
  X(smoothstep) X(sqrt) X(step) X(tan) X(tanh) X(transpose) X(trunc) X(all) X(any) X(select)         \
  X(arrayLength) X(bitcast)                                                                          \
  X(pack4x8snorm) X(pack4x8unorm) X(pack4xI8) X(pack4xU8) X(pack4xI8Clamp) X(pack4xU8Clamp)          \
  X(pack2x16snorm) X(pack2x16unorm) X(pack2x16float) X(unpack4x8snorm) X(unpack4x8unorm)              \
  X(unpack4xI8) X(unpack4xU8) X(unpack2x16snorm) X(unpack2x16unorm) X(unpack2x16float)                \
  X(atomicLoad) X(atomicStore) X(atomicAdd) X(atomicSub) X(atomicMax) X(atomicMin) X(atomicAnd)       \
  X(atomicOr) X(atomicXor) X(atomicExchange) X(atomicCompareExchangeWeak)                             \
  X(storageBarrier) X(workgroupBarrier) X(workgroupUniformLoad)                                      \
  X(subgroupAdd) X(subgroupExclusiveAdd) X(subgroupInclusiveAdd) X(subgroupMul)                      \
  X(subgroupExclusiveMul) X(subgroupInclusiveMul) X(subgroupMin) X(subgroupMax) X(subgroupAnd)       \
  X(subgroupOr) X(subgroupXor) X(subgroupAll) X(subgroupAny) X(subgroupBallot) X(subgroupBroadcast)  \
  X(subgroupBroadcastFirst) X(subgroupElect) X(subgroupShuffle) X(subgroupShuffleXor)                \
  X(subgroupShuffleUp) X(subgroupShuffleDown)

enum class BuiltinFn : int {
#define BS_X(name) name,
  BS_WGSL_BUILTINS(BS_X)
#undef BS_X
  count
};

// -1 when `name` is not a builtin function.
int builtin_id(std::string_view name);
std::string_view builtin_name(BuiltinFn f);
inline bool is_subgroup_builtin(BuiltinFn f) { return f >= BuiltinFn::subgroupAdd; }
inline bool is_atomic_builtin(BuiltinFn f) { return f >= BuiltinFn::atomicLoad && f <= BuiltinFn::atomicCompareExchangeWeak; }

}  // namespace bs::wgsl
