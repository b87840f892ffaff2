#!/usr/bin/env bash
# Session 7, run 9: the plan takes 128x128sk64 (chunk pairs) for Q4_K where it took 128x128 (default, =1), also in
# place of 256x128k16 (=2), or never (=0); base = main a4c5860. Prediction: 8B =1 ~76-78 ms (q/o/down), =2 ~73.7
# (run 8's forced figure); 1B =1 unchanged (no 128x128 there), =2 slower (run 8: forcing cost the 1B ~0.4 ms).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s7/base.tar.xz
NEW=$BS; OLD=/tmp/bsbase/bundle/run; t0=$(date +%s)
timeout 200 $NEW test_coopmat --gtest_filter='MatmulCm.*:PrefillPlan.*' > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat MatmulCm/PrefillPlan rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
grep -E 'Failure|Which|actual' $OUT/test_coopmat.txt | head -6
mk() { $NEW blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $NEW blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; }
pf() { env $3 timeout 90 $1 blueshift bench --model /tmp/$2 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/p.json 2>/tmp/p.err \
  && python3 -c "
import json; d=json.load(open('/tmp/p.json'))
print('%-3s %-4s %-30s prefill %8.1f tok/s TTFT %.2f ms decode %.1f' % ('$2', '$4', '$3', d['prefill_tok_s'], d.get('ttft_ms', 0), d['decode_tok_s']))" \
  || { echo "prefill $2 $4 $3 failed: $(tail -2 /tmp/p.err)"; }; }
for m in m1:llama-3.2-1b m8:llama-3.1-8b; do
  M=${m%%:*}; mk ${m#*:} $M; echo "$M ready $(( $(date +%s) - t0 )) s"
  for e in X=0 BLUESHIFT_MATMUL_Q4K_SK64=0 BLUESHIFT_MATMUL_Q4K_SK64=2; do env $e $NEW blueshift bench --model /tmp/$M --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1; done
  $OLD blueshift bench --model /tmp/$M --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
  for r in 1 2; do pf $OLD $M X=0 old; for e in X=0 BLUESHIFT_MATMUL_Q4K_SK64=0 BLUESHIFT_MATMUL_Q4K_SK64=2; do pf $NEW $M $e new; done; done
  T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(300)))")
  $OLD blueshift logits --model /tmp/$M --tokens $T --out /tmp/old.npy >/dev/null 2>&1
  $NEW blueshift logits --model /tmp/$M --tokens $T --out /tmp/new.npy >/dev/null 2>&1
  python3 .dev/s7/cmp.py /tmp/new.npy /tmp/old.npy
  rm -rf /tmp/$M /tmp/*.npy
done
echo "all done $(( $(date +%s) - t0 )) s"
