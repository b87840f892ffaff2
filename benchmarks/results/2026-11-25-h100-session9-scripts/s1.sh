#!/usr/bin/env bash
# Session 9, run S1: split-k for the prefill GEMMs whose 128x128 grid leaves the GPU half idle. (a) test_coopmat on
# the H100 (split-k against float64, the plan); (b) 400-token prefill logits split vs not; (c) TTFT A/B
# (BLUESHIFT_MATMUL_SPLITK=0|1, two alternating pairs, 512 + 16, 5 reps), 1B q4_k_m and f16, 8B q4_k_m.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
timeout 150 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; grep -E "OK|FAIL|PASSED|Failure|error|Expected" $OUT/test_coopmat.txt | head -24
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(400)))")
check() {
  BLUESHIFT_MATMUL_SPLITK=0 $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/a.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/b.npy >/dev/null 2>&1
  python3 .dev/s9/cmp.py /tmp/b.npy /tmp/a.npy
}
ttft() { for r in 1 2; do for s in 0 1; do
  BLUESHIFT_MATMUL_SPLITK=$s timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/b.json 2>/dev/null \
    && python3 -c "
import json; d=json.load(open('/tmp/b.json')); print('$1 SPLITK=$s prefill %8.1f tok/s  TTFT %6.2f ms' % (d['prefill_tok_s'], d['ttft_ms']))"; done; done; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
check m1q; ttft m1q; ttft m1f
rm -rf /tmp/m1q /tmp/m1f
echo "1B done $(( $(date +%s) - t0 )) s"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
check m8q; ttft m8q
for s in 0 1; do BLUESHIFT_MATMUL_SPLITK=$s timeout 90 $BS bs_prefill_profile /tmp/m8q --tokens 512 --reps 3 > $OUT/profile-8b-split$s.txt 2>&1; grep -E "profiled|1024x4096|splitk" $OUT/profile-8b-split$s.txt; done
echo "all done $(( $(date +%s) - t0 )) s"
