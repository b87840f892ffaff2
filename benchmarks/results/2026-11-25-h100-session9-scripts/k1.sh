#!/usr/bin/env bash
# Session 9, run K1: the NV -> KHR cooperative-matrix rewrite. (a) test_coopmat on the rewritten kernels; (b) which
# kernels were rewritten; (c) the prefill GEMMs, NV (BLUESHIFT_COOPMAT_NV=1) vs KHR, on the 8B's and 1B's shapes.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
timeout 120 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; tail -3 $OUT/test_coopmat.txt
BLUESHIFT_COOPMAT_NV=1 timeout 120 $BS test_coopmat > $OUT/test_coopmat_nv.txt 2>&1; tail -1 $OUT/test_coopmat_nv.txt
BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS bs_gemv_bench --matmul 512 --shape 4096x4096 --reps 2 --rounds 1 --dtype f16 2>&1 | grep -E "^coopmat|pipeline-stats matmul_cm_f16_128x128sk64" | head -8
echo "tests done $(( $(date +%s) - t0 )) s"
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,1024x4096,2048x2048,8192x2048,2048x8192 --reps 20 --rounds 3"
for r in 1; do
BLUESHIFT_COOPMAT_NV=1 timeout 150 $BS bs_gemv_bench $S --dtype f16,q4k,q6k,q8_0 > $OUT/gemm_nv$r.txt 2>&1
timeout 150 $BS bs_gemv_bench $S --dtype f16,q4k,q6k,q8_0 > $OUT/gemm_khr$r.txt 2>&1
done
for f in nv1 khr1; do grep "(best)" $OUT/gemm_$f.txt | awk -v t=$f '{printf "%-4s %-5s %-11s %-14s %8s %s %s\n", t, $1, $2, $5, $6, $8, $9}'; done
echo "all done $(( $(date +%s) - t0 )) s"
