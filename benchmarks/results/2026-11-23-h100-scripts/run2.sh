#!/usr/bin/env bash
# Session 4, device run 2: conditional-rendering decode loop + unrolled sampler; Q4_K kernel A/B.
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run2.txt
{
echo "== test_gpu + test_generate (H100)"; (cd /tmp/bs/bundle && timeout 120 ./run test_gpu 2>&1 | grep -E "FAILED|PASSED|Conditional" | tail -4)
echo "== parity"; timeout 120 python3 benchmarks/parity_check.py $BS $SHARED/data/models 2>&1
echo "== decode A/B 1B"; timeout 200 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.2-1b q4_k_m indirect:BLUESHIFT_NO_CONDITIONAL=1 2>&1
echo "== gemv q4k v0 (old) vs registry (new)"; timeout 150 $BS bs_gemv_bench --dtype q4k --shape 2048x2048,8192x2048,2048x8192,4096x4096,14336x4096,4096x14336,128256x2048 --wg 32,64,128,256 --rows 2,4 --reps 50 --rounds 2 --mv-spv .dev/spv 2>&1
echo "== decode 8B"; timeout 200 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.1-8b q4_k_m 2>&1
} 2>&1 | tee $L
tar -C /tmp -cJf $OUT/ab.tar.xz ab 2>/dev/null
