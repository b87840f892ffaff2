#!/usr/bin/env bash
# Session 7, run 8: the prefill GEMM's Q4_K chunk pairs (one header + one code load per 32 weights at k steps of
# 64: the 64x64k64 and 128x128sk64 tiles). Base = main a4c5860. Prediction: the W loads of those tiles halve;
# the 8B's k / v GEMMs (64x64k64) ~-10%, TTFT -0.5-1 ms by default; with 128x128sk64 forced everywhere
# (BLUESHIFT_MATMUL_TILE), new beats base by ~5-10 ms and may beat the default tiles.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s7/base.tar.xz
NEW=$BS; OLD=/tmp/bsbase/bundle/run; t0=$(date +%s)
timeout 200 $NEW test_coopmat --gtest_filter='MatmulCm.*:PrefillPlan.*' > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat MatmulCm rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
grep -E 'Failure|Which|actual' $OUT/test_coopmat.txt | head -6
mk() { $NEW blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $NEW blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; }
pf() { env $3 timeout 90 $1 blueshift bench --model /tmp/$2 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/p.json 2>/tmp/p.err \
  && python3 -c "
import json; d=json.load(open('/tmp/p.json'))
print('prefill %-3s %-4s %-34s %8.1f tok/s TTFT %.2f ms' % ('$2', '$4', '$3', d['prefill_tok_s'], d.get('ttft_ms', 0)))" \
  || { echo "prefill $2 $4 $3 failed: $(tail -2 /tmp/p.err)"; }; }
for m in m1:llama-3.2-1b m8:llama-3.1-8b; do
  M=${m%%:*}; mk ${m#*:} $M; echo "$M ready $(( $(date +%s) - t0 )) s"
  for e in X=0 BLUESHIFT_MATMUL_TILE=128x128sk64; do for b in $OLD $NEW; do env $e $b blueshift bench --model /tmp/$M --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1; done; done
  for r in 1 2; do for e in X=0 BLUESHIFT_MATMUL_TILE=128x128sk64; do pf $OLD $M $e old; pf $NEW $M $e new; done; done
  T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(300)))")
  $OLD blueshift logits --model /tmp/$M --tokens $T --out /tmp/old.npy >/dev/null 2>&1
  $NEW blueshift logits --model /tmp/$M --tokens $T --out /tmp/new.npy >/dev/null 2>&1
  python3 -c "import numpy as np; a=np.load('/tmp/old.npy'); b=np.load('/tmp/new.npy'); print('$M prefill logits new vs old:', 'bit-identical' if np.array_equal(a,b) else 'max abs diff %.3e' % np.abs(a-b).max())"
  rm -rf /tmp/$M /tmp/*.npy
done
echo "all done $(( $(date +%s) - t0 )) s"
