#!/usr/bin/env bash
# Session 10, run A3: the gated GEMM with token tiles along x (W from DRAM once). (a) test_coopmat; (b) 8B q4_k_m
# logits gated vs not, TTFT A/B, profile; (c) the plain GEMMs with token tiles along x (CM_TOKENS_X builds, _tx)
# against the registered ones, 8B and 1B shapes, M = 512; (d) 1B q4_k_m / f16 TTFT A/B.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 150 $BS test_coopmat --gtest_filter='MatmulCm.*' > $OUT/test_coopmat.txt 2>&1; grep -E "OK|FAIL|PASSED|Failure|error|Expected" $OUT/test_coopmat.txt | head -30
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,8192x2048,2048x8192,2048x2048 --reps 20 --rounds 3 --only matmul_cm,sk64_tx,k16_tx,64_tx"
timeout 200 $BS bs_gemv_bench $S --dtype f16,q4k,q6k --cm-spv .dev/s10/spv > $OUT/tx.txt 2>&1
grep -E "matmul_cm|_tx" $OUT/tx.txt | awk '{printf "%-5s %-11s %-14s %-12s %8s %s\n", $1, $2, $4, $5, $6, $7}'
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(400)))")
check() {
  BLUESHIFT_GATED_GEMM=0 $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/a.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/b.npy >/dev/null 2>&1
  python3 .dev/s10/cmp.py /tmp/b.npy /tmp/a.npy; cmp -s /tmp/a.npy /tmp/b.npy && echo "$1: logits bit-identical"
}
ttft() { for r in 1 2; do for s in 0 1; do
  BLUESHIFT_GATED_GEMM=$s timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/b.json 2>/dev/null \
    && python3 -c "
import json; d=json.load(open('/tmp/b.json')); print('$1 GATED=$s prefill %8.1f tok/s  TTFT %6.2f ms' % (d['prefill_tok_s'], d['ttft_ms']))"; done; done; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
echo "8B converted $(( $(date +%s) - t0 )) s"
check m8q; ttft m8q
timeout 90 $BS bs_prefill_profile /tmp/m8q --tokens 512 --reps 3 --warm 4 > $OUT/profile-m8q.txt 2>&1; grep -E "profiled|gated" $OUT/profile-m8q.txt
rm -rf /tmp/m8q
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
for m in m1q m1f; do ttft $m; done
echo "all done $(( $(date +%s) - t0 )) s"
