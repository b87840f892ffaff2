#!/usr/bin/env bash
# Session 4, device run 3: RoPE/KV folded into q/k/v, head norm folded; correctness (kernels, HF parity,
# decode vs prefill over 600 positions) and A/B (rope fold off, matvec workgroup 32) on 1B and 8B.
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run3.txt
{
echo "== test_kernels (H100)"; (cd /tmp/bs/bundle && timeout 120 ./run test_kernels --gtest_filter='Matvec*' 2>&1 | grep -E "OK|FAILED|PASSED" | tail -10)
echo "== parity"; timeout 120 python3 benchmarks/parity_check.py $BS $SHARED/data/models 2>&1
echo "== decode vs prefill 1B"; BENCH_WORK=/tmp/dc timeout 200 benchmarks/decode_check.sh $BS /tmp/dc-out llama-3.2-1b q4_k_m 2>&1 | grep -E "positions|matvec wg default"
echo "== decode A/B 1B"; timeout 200 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.2-1b q4_k_m norope:BLUESHIFT_NO_ROPE_FOLD=1 wg32:BLUESHIFT_MATVEC_WG=32 2>&1
echo "== decode A/B 8B"; timeout 200 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.1-8b q4_k_m wg32:BLUESHIFT_MATVEC_WG=32 2>&1
} 2>&1 | tee $L
tar -C /tmp -cJf $OUT/ab.tar.xz ab 2>/dev/null
