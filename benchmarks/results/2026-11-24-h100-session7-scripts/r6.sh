#!/usr/bin/env bash
# Session 7, run 6 (an experiment, not committed): what bounds the prefill GEMM (matmul_cm)? Knock-out variants,
# wrong logits, timing only: _knmma (no multiply-adds, nor the shared fragment loads feeding them), _kndec (W
# tiles the raw words: no decode), _knld (no global loads: X and W words made up in registers).
# Needs r6-prefill-knockout.patch applied (git apply) and built: the knock-out variants are not in the tree.
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
  $NEW blueshift bench --model /tmp/$M --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
  for r in 1 2; do for k in X=0 BLUESHIFT_PREFILL_KNOCK=mma BLUESHIFT_PREFILL_KNOCK=dec BLUESHIFT_PREFILL_KNOCK=ld; do pf $M $k; done; done
  rm -rf /tmp/$M
done
echo "all done $(( $(date +%s) - t0 )) s"
