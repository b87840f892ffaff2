#!/usr/bin/env bash
# Session 9, run A1: one-pass tensor-core prefill attention (attention_fa.comp). (a) the attention tests on the H100
# (float64 references, both tensor-core kernels); (b) 400-token prefill logits FA vs tiled, greedy ids; (c) TTFT
# A/B (BLUESHIFT_FA_ATTENTION=0|1, two alternating pairs, 512 + 16, 5 reps) and the 8B's attention time.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
timeout 120 $BS test_gpu --gtest_filter='*Attention*' > $OUT/test_attention.txt 2>&1; grep -E "OK|FAIL|PASSED|Failure|nmse|Expected" $OUT/test_attention.txt | head -20
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(400)))")
P=$(python3 -c "import random; random.seed(6); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
ids() { python3 -c "import sys,json; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))"; }
check() {
  BLUESHIFT_FA_ATTENTION=0 $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/t.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/f.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --step --out /tmp/s.npy >/dev/null 2>&1
  python3 .dev/s9/cmp.py /tmp/f.npy /tmp/t.npy; python3 .dev/s9/cmp.py /tmp/f.npy /tmp/s.npy; python3 .dev/s9/cmp.py /tmp/t.npy /tmp/s.npy
  BLUESHIFT_FA_ATTENTION=0 $BS blueshift generate --model /tmp/$1 --prompt-tokens $P --max-tokens 32 --json 2>/dev/null | ids > /tmp/g0.txt
  $BS blueshift generate --model /tmp/$1 --prompt-tokens $P --max-tokens 32 --json 2>/dev/null | ids > /tmp/g1.txt
  cmp -s /tmp/g0.txt /tmp/g1.txt && echo "$1 greedy ids (300-token prompt): same ($(wc -w < /tmp/g1.txt))" || { echo "$1 greedy ids differ"; cat /tmp/g0.txt /tmp/g1.txt; }
}
ttft() { for r in 1 2; do for fa in 0 1; do
  BLUESHIFT_FA_ATTENTION=$fa timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/b.json 2>/dev/null \
    && python3 -c "
import json; d=json.load(open('/tmp/b.json')); print('$1 FA=$fa prefill %8.1f tok/s  TTFT %6.2f ms' % (d['prefill_tok_s'], d['ttft_ms']))"; done; done; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
check m1q; ttft m1q
rm -rf /tmp/m1q
echo "1B done $(( $(date +%s) - t0 )) s"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
check m8q; ttft m8q
for fa in 0 1; do BLUESHIFT_FA_ATTENTION=$fa timeout 90 $BS bs_prefill_profile /tmp/m8q --tokens 512 --reps 3 > $OUT/profile-8b-fa$fa.txt 2>&1; grep -E "profiled|^  attention" $OUT/profile-8b-fa$fa.txt; done
echo "all done $(( $(date +%s) - t0 )) s"
