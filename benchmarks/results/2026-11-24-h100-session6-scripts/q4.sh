#!/usr/bin/env bash
# Session 6, run 4: the single-buffered 128x128 k-64 tile for Q6_K (the 8B's down projection): the coopmat float64
# tests on the H100, then 8B prefill A/B (default vs BLUESHIFT_MATMUL_Q6K_SK64=0), alternating, medians of 5.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "test_coopmat: $(timeout 200 $BS test_coopmat 2>&1 | grep -E '^\[  (PASSED|FAILED)|tests ran' | tr '\n' ' ')"
timeout 200 $BS test_coopmat 2>&1 | grep -E 'FAILED|Failure' | head -5
mk() { $BS blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $BS blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; }
bench() { env $3 timeout 90 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 32 --reps 5 --json > /tmp/$1-$2.json 2>/tmp/b.err \
  && python3 -c "
import json; d=json.load(open('/tmp/$1-$2.json'))
print('%-3s %-8s prefill %7.1f tok/s  TTFT %.2f ms  decode %.1f' % ('$1','$2',d['prefill_tok_s'],d.get('ttft_ms',0),d['decode_tok_s']))" \
  || { echo "$1 $2 FAILED: $(tail -2 /tmp/b.err)"; }; }
t0=$(date +%s); mk llama-3.1-8b m8; echo "== m8 ready in $(( $(date +%s) - t0 )) s"
$BS blueshift bench --model /tmp/m8 --prompt-tokens 512 --gen-tokens 8 --reps 1 --json >/dev/null 2>&1
for r in 1 2 3; do bench m8 sk64.$r X=0; bench m8 base.$r BLUESHIFT_MATMUL_Q6K_SK64=0; done
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(300)))")
timeout 60 $BS blueshift logits --model /tmp/m8 --tokens $T --out /tmp/a.npy >/dev/null 2>&1
BLUESHIFT_MATMUL_Q6K_SK64=0 timeout 60 $BS blueshift logits --model /tmp/m8 --tokens $T --out /tmp/b.npy >/dev/null 2>&1
echo -n "prefill logits sk64 vs 128x128: "; python3 .dev/s6/cmp.py /tmp/a.npy /tmp/b.npy
