#!/usr/bin/env bash
# Session 10, run A2: the gated prefill GEMM (matmul_cm CM_GATED) and rope_kv's items. (a) test_coopmat on the H100;
# (b) 400-token prefill logits, gated GEMM vs the two GEMMs + gated_act (BLUESHIFT_GATED_GEMM=0); (c) TTFT A/B,
# two alternating pairs, 512 + 16, 5 reps; (d) warm profiles; 1B q4_k_m and f16, 8B q4_k_m.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 150 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; grep -E "OK|FAIL|PASSED|Failure|error|Expected|Which" $OUT/test_coopmat.txt | head -30
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
prof() { for s in 0 1; do BLUESHIFT_GATED_GEMM=$s timeout 90 $BS bs_prefill_profile /tmp/$1 --tokens 512 --reps 3 --warm $2 > $OUT/profile-$1-gated$s.txt 2>&1; grep -E "profiled|gated|rope_kv  " $OUT/profile-$1-gated$s.txt; done; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
for m in m1q m1f; do check $m; ttft $m; prof $m 30; done
rm -rf /tmp/m1q /tmp/m1f
echo "1B done $(( $(date +%s) - t0 )) s"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
echo "8B converted $(( $(date +%s) - t0 )) s"
check m8q; ttft m8q; prof m8q 4
echo "all done $(( $(date +%s) - t0 )) s"
