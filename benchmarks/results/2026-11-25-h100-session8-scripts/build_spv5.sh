#!/usr/bin/env bash
# Session 8, run 7: k-64 single-buffered tiles of 4 or 2 subgroups (64x32 or 64x64 each), so that two or more
# workgroups share a multiprocessor and one's staging can overlap another's multiply-adds.
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; rm -rf spv; mkdir -p spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv $K/matmul_cm.comp; }
for dt in q4k f16; do D=W_Q4K; PF=; [ $dt = f16 ] && D=W_F16 && PF=-DCM_PREFETCH
  g $dt $D s64x128w1x4 64x128 -DCM_BM=64 -DCM_BN=128 -DCM_BK=64 -DCM_WARPS_M=1 -DCM_WARPS_N=4 -DCM_SINGLE $PF
  g $dt $D s128x64w2x2 128x64 -DCM_BM=128 -DCM_BN=64 -DCM_BK=64 -DCM_WARPS_M=2 -DCM_WARPS_N=2 -DCM_SINGLE $PF
  g $dt $D s128x128w2x2 128x128 -DCM_BM=128 -DCM_BN=128 -DCM_BK=64 -DCM_WARPS_M=2 -DCM_WARPS_N=2 -DCM_SINGLE $PF
  g $dt $D s64x64w1x2 64x64 -DCM_BM=64 -DCM_BN=64 -DCM_BK=64 -DCM_WARPS_M=1 -DCM_WARPS_N=2 -DCM_SINGLE $PF
done
ls spv | wc -l
