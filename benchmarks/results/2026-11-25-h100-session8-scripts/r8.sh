#!/usr/bin/env bash
# Session 8, run 8: the 1B q4_k_m's persistent decode at the peer table's shape (512 + 128): Q4_K parts per lane
# (BLUESHIFT_PERSISTENT_PARTS 1-3) x width (384 default now, 512), and attention splits 2 / 8 (default 132 / 32 = 4).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
dec() { env $2 timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/d.json 2>/tmp/d.err \
  && python3 -c "
import json; d=json.load(open('/tmp/d.json'))
print('decode %-4s %-60s %7.1f tok/s' % ('$1', '$2', d['decode_tok_s']))" || echo "decode $1 $2 failed: $(tail -2 /tmp/d.err)"; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
$BS blueshift bench --model /tmp/m1 --prompt-tokens 512 --gen-tokens 32 --reps 1 >/dev/null 2>&1
for r in 1 2; do
  for e in X=0 BLUESHIFT_PERSISTENT_PARTS=1 BLUESHIFT_PERSISTENT_PARTS=3 BLUESHIFT_PERSISTENT_WG=512 \
           "BLUESHIFT_PERSISTENT_WG=512 BLUESHIFT_PERSISTENT_PARTS=1" BLUESHIFT_PERSISTENT_SPLITS=2 BLUESHIFT_PERSISTENT_SPLITS=8; do
    dec m1 "$e"; done; done
echo "all done $(( $(date +%s) - t0 )) s"
