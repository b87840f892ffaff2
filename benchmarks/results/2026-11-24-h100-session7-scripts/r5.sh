#!/usr/bin/env bash
# Session 7, run 5: the rows kernel with X staged in shared memory (*_xs, M <= 16; BLUESHIFT_ROWSCM_XS=0 for A/B).
# Prediction (from run 4's knock-out: constant A fragments took the step 3.13 -> 2.31 ms): most of that
# 0.82 ms, less the cost of the extra shared stores and one subgroup fewer in the gated / head kernels:
# ~2.5-2.6 ms a step, ~6,200 tok/s, ~7.3x batch 1.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
NEW=$BS; t0=$(date +%s)
timeout 200 $NEW test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
grep -E 'Failure|actual|Which' $OUT/test_coopmat.txt | head -6
$NEW blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$NEW blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; echo "m1 ready $(( $(date +%s) - t0 )) s"
sv() { env $1 timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json --parallel $2 ${3:-} > /tmp/s.json 2>/tmp/s.err \
  && python3 -c "
import json; d=json.load(open('/tmp/s.json')); by=d.get('profile_ms_by_kernel') or {}
print('serve%-2s %-34s %8.1f tok/s %.3f ms/step' % ('$2', '$1', d['aggregate_decode_tok_s'], d['ms_per_step']), ' '.join('%s %.3f' % kv for kv in sorted(by.items(), key=lambda kv: -kv[1])[:8]))" \
  || { echo "serve $1 failed: $(tail -2 /tmp/s.err)"; }; }
b1() { timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json > /tmp/b1.json 2>/dev/null && python3 -c "
import json; d=json.load(open('/tmp/b1.json')); print('batch 1 %.1f tok/s, bar 6x -> %.3f ms/step at N=16' % (d['decode_tok_s'], 16e3/(6*d['decode_tok_s'])))"; }
$NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1
b1
for r in 1 2; do sv BLUESHIFT_ROWSCM_XS=0 16; sv BLUESHIFT_ROWSCM_XS=1 16; done
sv "BLUESHIFT_ROWSCM_XS=1 BLUESHIFT_ROWSCM_GATED_SG=4" 16
sv "BLUESHIFT_ROWSCM_XS=1 BLUESHIFT_ROWSCM_SG=6" 16
sv "BLUESHIFT_ROWSCM_XS=1 BLUESHIFT_ROWSCM_SG=4" 16
sv BLUESHIFT_ROWSCM_XS=1 16 --profile
for n in 8 32; do sv X=0 $n; done
sv BLUESHIFT_ROWSCM_XS=0 8
b1
echo "all done $(( $(date +%s) - t0 )) s"
