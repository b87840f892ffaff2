#!/usr/bin/env bash
# Session 7, run 4 (an experiment, not committed): what bounds serve's rows kernels? Knock-out variants (wrong
# logits, timing only): _knx (A fragments a constant: no X loads), _kndec (W tiles the raw words: no decode),
# _knmma (no multiply-adds: nor the A / B fragment loads that feed them).
# The knock-out variants (BLUESHIFT_ROWSCM_KNOCK) were a local patch like r6-prefill-knockout.patch, not kept: A fragments
# F16MAT(0.5) (_knx), W tiles the raw words (_kndec), MMA() empty (_knmma), in matmul_rows_cm.comp.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
NEW=$BS; t0=$(date +%s)
$NEW blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$NEW blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; echo "m1 ready $(( $(date +%s) - t0 )) s"
sv() { env $1 timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json --parallel 16 ${2:-} > /tmp/s.json 2>/tmp/s.err \
  && python3 -c "
import json; d=json.load(open('/tmp/s.json')); by=d.get('profile_ms_by_kernel') or {}
print('serve16 %-26s %8.1f tok/s %.3f ms/step' % ('$1', d['aggregate_decode_tok_s'], d['ms_per_step']), ' '.join('%s %.3f' % kv for kv in sorted(by.items(), key=lambda kv: -kv[1])[:7]))" \
  || { echo "serve $1 failed: $(tail -2 /tmp/s.err)"; }; }
$NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1
for r in 1 2; do for k in X=0 BLUESHIFT_ROWSCM_KNOCK=x BLUESHIFT_ROWSCM_KNOCK=dec BLUESHIFT_ROWSCM_KNOCK=mma; do sv $k; done; done
for k in X=0 BLUESHIFT_ROWSCM_KNOCK=x BLUESHIFT_ROWSCM_KNOCK=dec BLUESHIFT_ROWSCM_KNOCK=mma; do sv $k --profile; done
echo "all done $(( $(date +%s) - t0 )) s"
