#!/usr/bin/env bash
# Session 8: experiment builds of matmul_cm_exp.comp into spv/<dtype>.<label>-<BM>x<BN>.spv (bs_gemv_bench --cm-spv).
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; mkdir -p spv; rm -f spv/*.spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv matmul_cm_exp.comp; }
T="-DCM_BM=128 -DCM_BN=128 -DCM_BK=64 -DCM_WARPS_N=4 -DCM_SINGLE"
g q4k W_Q4K sk64 128x128 $T
for k in LDX LDW ST BAR MMA; do g q4k W_Q4K sk64_no$k 128x128 $T -DKNOCK_$k; done
g q4k W_Q4K sk64_noLDXLDW 128x128 $T -DKNOCK_LDX -DKNOCK_LDW
g q4k W_Q4K sk64_noBARST 128x128 $T -DKNOCK_BAR -DKNOCK_ST
ls spv | wc -l
