#!/usr/bin/env bash
# GEMM experiment variants: loads two k steps ahead (CM_PF2), single-buffered k64 tiles.
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; mkdir -p spv; rm -f spv/*.spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv matmul_cm_exp.comp; }
for dt in q4k q6k f16; do D=W_Q4K; [ $dt = f16 ] && D=W_F16; [ $dt = q6k ] && D=W_Q6K
  g $dt $D pf2 128x128 -DCM_PF2 -DCM_BM=128 -DCM_BN=128 -DCM_WARPS_M=2 -DCM_WARPS_N=4
  g $dt $D pf2k16 256x128 -DCM_PF2 -DCM_BM=256 -DCM_BN=128 -DCM_BK=16 -DCM_WARPS_M=4 -DCM_WARPS_N=2
  g $dt $D pf2 64x64 -DCM_PF2
  g $dt $D pf2k64 64x64 -DCM_PF2 -DCM_BK=64 -DCM_WARPS_N=4
  g $dt $D sk64 128x128 -DCM_SINGLE -DCM_BM=128 -DCM_BN=128 -DCM_BK=64 -DCM_WARPS_M=2 -DCM_WARPS_N=4
done
ls spv | wc -l
