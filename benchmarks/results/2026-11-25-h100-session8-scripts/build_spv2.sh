#!/usr/bin/env bash
# Session 8, run 2: warp-specialized builds of kernels_glsl/matmul_cm.comp (CM_PRODUCERS = 2, 8; 4 is registered)
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; rm -rf spv; mkdir -p spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv $K/matmul_cm.comp; }
for dt in q4k q6k f16; do D=W_Q4K; [ $dt = f16 ] && D=W_F16; [ $dt = q6k ] && D=W_Q6K
  for P in 2 8; do g $dt $D ws$P 128x128 -DCM_BM=128 -DCM_BN=128 -DCM_WARPS_N=4 -DCM_PRODUCERS=$P; done
  g $dt $D ws4_4x2 128x128 -DCM_BM=128 -DCM_BN=128 -DCM_WARPS_M=4 -DCM_WARPS_N=2 -DCM_PRODUCERS=4
done
ls spv | wc -l
