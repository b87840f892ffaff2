#!/usr/bin/env bash
# Builds the GEMM experiment variants (X in f16) into spv/<dtype>.<label>-<BM>x<BN>.spv (bs_gemv_bench --cm-spv).
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; mkdir -p spv; rm -f spv/*.spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv matmul_cm_exp.comp; }
for dt in q4k f16 q6k; do D=W_Q4K; [ $dt = f16 ] && D=W_F16; [ $dt = q6k ] && D=W_Q6K
  g $dt $D s256x128 256x128 -DCM_SINGLE -DCM_BM=256 -DCM_BN=128 -DCM_WARPS_M=4 -DCM_WARPS_N=2
  g $dt $D s128x256 128x256 -DCM_SINGLE -DCM_BM=128 -DCM_BN=256 -DCM_WARPS_M=2 -DCM_WARPS_N=4
  g $dt $D s256x128w16 256x128 -DCM_SINGLE -DCM_BM=256 -DCM_BN=128 -DCM_WARPS_M=4 -DCM_WARPS_N=4
  g $dt $D s128x256w16 128x256 -DCM_SINGLE -DCM_BM=128 -DCM_BN=256 -DCM_WARPS_M=4 -DCM_WARPS_N=4
  g $dt $D s128x128 128x128 -DCM_SINGLE -DCM_BM=128 -DCM_BN=128 -DCM_WARPS_M=2 -DCM_WARPS_N=4
  g $dt $D t256x128k16 256x128 -DCM_BM=256 -DCM_BN=128 -DCM_BK=16 -DCM_WARPS_M=4 -DCM_WARPS_N=2
done
ls spv | wc -l
