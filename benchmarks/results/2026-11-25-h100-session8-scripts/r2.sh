#!/usr/bin/env bash
# Session 8, run 2: the warp-specialized GEMM (matmul_cm_*_128x128ws, CM_PRODUCERS subgroups that only stage).
# test_coopmat (every tile vs float64, ws included), then isolated GEMM times at 512 tokens: this tree (registry
# tiles + ws2/ws8/ws4_4x2 builds) and base = main 1266380 (its registry tiles; register counts beside).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s8b/base-bins.tar.xz && ln -sf /tmp/bs/bundle/lib /tmp/bsbase/bundle/lib
OLD=/tmp/bsbase/bundle/run; t0=$(date +%s)
timeout 240 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E 'Failure|Which|actual|error' $OUT/test_coopmat.txt | head -12
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,1024x4096,2048x2048,8192x2048,2048x8192 --reps 20 --rounds 3"
BLUESHIFT_PIPELINE_STATS=1 timeout 300 $BS bs_gemv_bench $S --dtype q4k,q6k,f16 --cm-spv .dev/s8/spv > $OUT/gemm-new.txt 2> $OUT/gemm-new-stats.txt
echo "new rc=$? $(( $(date +%s) - t0 )) s"
BLUESHIFT_PIPELINE_STATS=1 timeout 200 $OLD bs_gemv_bench $S --dtype q4k,q6k > $OUT/gemm-old.txt 2> $OUT/gemm-old-stats.txt
echo "old rc=$? $(( $(date +%s) - t0 )) s"
grep -v "^#" $OUT/gemm-new.txt | grep -v " matmul  " | grep -v "64x128 \|64x64k64\| 64x64 " | cut -c1-110
echo "--- base"; grep -v "^#" $OUT/gemm-old.txt | grep "128x128\|256x128" | cut -c1-110
grep pipeline-stats $OUT/gemm-new-stats.txt | sort -u | grep "ws\|sk64\|128x128 \|256" | sed 's/Binary Size=[0-9]*, Stack Size=0, Local Memory Size=[0-9]*, //' 
grep pipeline-stats $OUT/gemm-old-stats.txt | sort -u | grep "sk64\|128x128 \|256" | sed 's/Binary Size=[0-9]*, Stack Size=0, Local Memory Size=[0-9]*, //'
