#!/usr/bin/env bash
# Session 7, run 7 (an experiment; needs r7-prefill-split2.patch applied and built): would split-k pay in the
# prefill GEMM? Grids of at most N workgroups run each tile as two workgroups over half of k (both store their
# partial: wrong values, timing only; a real split-k adds the partials' reduction).
# Prediction (the latency-chain reading of r6): the 128-workgroup GEMMs (8B q/o/down, k/v) halve their chains:
# 8B TTFT 84 -> ~70 ms; 1B less (its big GEMMs have 256 workgroups).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
NEW=$BS; t0=$(date +%s)
mk() { $NEW blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $NEW blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; }
pf() { env $2 timeout 90 $NEW blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 16 --reps 3 --json > /tmp/p.json 2>/tmp/p.err \
  && python3 -c "
import json; d=json.load(open('/tmp/p.json'))
print('prefill %-3s %-26s %8.1f tok/s TTFT %.2f ms' % ('$1', '$2', d['prefill_tok_s'], d.get('ttft_ms', 0)))" \
  || { echo "prefill $1 $2 failed: $(tail -2 /tmp/p.err)"; }; }
for m in m1:llama-3.2-1b m8:llama-3.1-8b; do
  M=${m%%:*}; mk ${m#*:} $M; echo "$M ready $(( $(date +%s) - t0 )) s"
  for k in X=0 BLUESHIFT_PREFILL_SPLIT2=132 BLUESHIFT_PREFILL_SPLIT2=64; do env $k $NEW blueshift bench --model /tmp/$M --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1; done
  for r in 1 2; do for k in X=0 BLUESHIFT_PREFILL_SPLIT2=132 BLUESHIFT_PREFILL_SPLIT2=64; do pf $M $k; done; done
  rm -rf /tmp/$M
done
echo "all done $(( $(date +%s) - t0 )) s"
