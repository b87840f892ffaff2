#!/usr/bin/env bash
# Session 4, device run 1: correctness of the changed kernels, dispatch/barrier/grid-sync costs, GEMV
# sweep, decode A/B (1B, 8B), HF parity.
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run1.txt
{
echo "== test_kernels (H100)"; timeout 120 $BS test_kernels --gtest_filter='Matvec*:Matmul*' 2>&1 | grep -E "OK|FAILED|PASSED" | tail -12
echo "== bs_micro"; timeout 120 $BS bs_micro --dispatches 10000 --mib 2048 --json | tee $OUT/micro.json
echo "== gemv"; timeout 150 $BS bs_gemv_bench --dtype q4k,q6k --shape 2048x2048,8192x2048,2048x8192,4096x4096,14336x4096,4096x14336,128256x2048 --wg 64,128,256 --rows 2,4 --reps 50 --rounds 2 2>&1
echo "== parity"; timeout 120 python3 benchmarks/parity_check.py $BS $SHARED/data/models 2>&1
echo "== decode A/B 1B"; timeout 200 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.2-1b q4_k_m direct:BLUESHIFT_DECODE_DIRECT=1 full:BLUESHIFT_FULL_BARRIERS=1 2>&1
echo "== decode A/B 8B"; timeout 200 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.1-8b q4_k_m direct:BLUESHIFT_DECODE_DIRECT=1 2>&1
} 2>&1 | tee $L
tar -C /tmp -cJf $OUT/ab.tar.xz ab 2>/dev/null
