#!/usr/bin/env bash
# Session 8, run 4: Q4_K sk64 with X-only touches (CM_PREFETCH_X), with each block's header loaded once
# (CM_HDR_CACHE), both; F16 / Q8_0 with touches on sk64 and 128x128.
set -euo pipefail
cd "$(dirname "$0")"; K=../../kernels_glsl; rm -rf spv; mkdir -p spv
g() { local dt=$1 def=$2 label=$3 tile=$4; shift 4
  glslc --target-env=vulkan1.2 -std=450 -O -Werror -fshader-stage=compute -I $K -D$def "$@" -o spv/$dt.$label-$tile.spv $K/matmul_cm.comp; }
SK="-DCM_BM=128 -DCM_BN=128 -DCM_BK=64 -DCM_WARPS_N=4 -DCM_SINGLE"
g q4k W_Q4K pfx_sk64 128x128 $SK -DCM_PREFETCH -DCM_PREFETCH_X
g q4k W_Q4K hdr_sk64 128x128 $SK -DCM_HDR_CACHE
g q4k W_Q4K hdrpfx_sk64 128x128 $SK -DCM_HDR_CACHE -DCM_PREFETCH -DCM_PREFETCH_X
g q6k W_Q6K pfx_sk64 128x128 $SK -DCM_PREFETCH -DCM_PREFETCH_X
for dt in f16 q8_0; do D=W_F16; [ $dt = q8_0 ] && D=W_Q8_0
  g $dt $D pf_sk64 128x128 $SK -DCM_PREFETCH
  g $dt $D pfx_sk64 128x128 $SK -DCM_PREFETCH -DCM_PREFETCH_X
  g $dt $D pf_128 128x128 -DCM_BM=128 -DCM_BN=128 -DCM_WARPS_N=4 -DCM_PREFETCH
done
ls spv | wc -l
