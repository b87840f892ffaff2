#!/usr/bin/env bash
# Session 8, run 3: CM_PREFETCH builds (pf_*) against the registry's tiles, isolated at 512 tokens, 8B and 1B shapes.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,1024x4096,2048x2048,8192x2048,2048x8192,512x2048 --reps 20 --rounds 3"
BLUESHIFT_PIPELINE_STATS=1 timeout 400 $BS bs_gemv_bench $S --dtype q4k,q6k,f16 --cm-spv .dev/s8/spv > $OUT/gemm.txt 2> $OUT/gemm-stats.txt
echo "rc=$? $(( $(date +%s) - t0 )) s"
grep -v "^#" $OUT/gemm.txt | grep -v " matmul  \|64x128 " | awk '{print $1, $2, $4, $5, $6, $9, $10}' | column -t
grep pipeline-stats $OUT/gemm-stats.txt | sort -u | grep "pf_\|sk64\|128x128 \|256\|64x64" | sed 's/Binary Size=[0-9]*, Stack Size=0, Local Memory Size=[0-9]*, //' | sed 's/pipeline-stats //'
