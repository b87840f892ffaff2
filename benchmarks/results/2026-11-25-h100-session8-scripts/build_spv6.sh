#!/usr/bin/env bash
# Session 8, run 9: the 128x64 k-64 tile of 4 subgroups (R7's one gain, Q4_K 2048x8192) for Q6_K and Q8_0 too.
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; rm -rf spv; mkdir -p spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv $K/matmul_cm.comp; }
for dt in q4k q6k q8_0; do D=W_Q4K; [ $dt = q6k ] && D=W_Q6K; [ $dt = q8_0 ] && D=W_Q8_0
  g $dt $D s128x64w2x2 128x64 -DCM_BM=128 -DCM_BN=64 -DCM_BK=64 -DCM_WARPS_M=2 -DCM_WARPS_N=2 -DCM_SINGLE
done
ls spv | wc -l
