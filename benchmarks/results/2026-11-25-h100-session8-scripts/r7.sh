#!/usr/bin/env bash
# Session 8, run 7: build_spv5.sh's smaller-workgroup k-64 tiles beside the registry's, isolated at 512 tokens, with
# their registers (two workgroups per SM need <= 128 x 256 or <= 256 x 128 registers).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,8192x2048,2048x8192 --reps 20 --rounds 3"
BLUESHIFT_PIPELINE_STATS=1 timeout 200 $BS bs_gemv_bench $S --dtype q4k,f16 --cm-spv .dev/s8/spv > $OUT/gemm.txt 2> $OUT/gemm-stats.txt
echo "rc=$? $(( $(date +%s) - t0 )) s"
grep -v "^#" $OUT/gemm.txt | grep "sk64\|w1x\|w2x" | awk '{printf "%-5s %-11s %-14s %-12s %8s\n", $1, $2, $4, $5, $6}'
grep pipeline-stats $OUT/gemm-stats.txt | sort -u | grep "w1x\|w2x\|sk64" | sed 's/Binary Size=[0-9]*, Stack Size=0, Local Memory Size=[0-9]*, //' | sed 's/pipeline-stats //'
