#!/usr/bin/env bash
# Session 8, run 3: kernels_glsl/matmul_cm.comp with CM_PREFETCH (each k step's lines touched into L1 a step
# ahead) in each tile, for bs_gemv_bench --cm-spv beside the registry's tiles (the same builds without it).
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; rm -rf spv; mkdir -p spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv $K/matmul_cm.comp; }
for dt in q4k q6k f16; do D=W_Q4K; [ $dt = f16 ] && D=W_F16; [ $dt = q6k ] && D=W_Q6K
  g $dt $D pf_sk64 128x128 -DCM_BM=128 -DCM_BN=128 -DCM_BK=64 -DCM_WARPS_N=4 -DCM_SINGLE -DCM_PREFETCH
  g $dt $D pf_128 128x128 -DCM_BM=128 -DCM_BN=128 -DCM_WARPS_N=4 -DCM_PREFETCH
  g $dt $D pf_256k16 256x128 -DCM_BM=256 -DCM_BN=128 -DCM_BK=16 -DCM_WARPS_M=4 -DCM_WARPS_N=2 -DCM_PREFETCH
  g $dt $D pf_64k64 64x64 -DCM_BK=64 -DCM_WARPS_N=4 -DCM_PREFETCH
  g $dt $D pf_64 64x64 -DCM_PREFETCH
done
ls spv | wc -l
