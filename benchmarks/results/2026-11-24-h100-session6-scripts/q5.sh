#!/usr/bin/env bash
# Session 6, run 5: the persistent kernel's Q4_K rows by 64-value pairs of parts (BLUESHIFT_PERSISTENT_Q4_PAIRS=1, new) vs by parts (0);
# weights pulled toward L2 before each grid barrier. Correctness on the real grid, breakdown, A/B on 1B and 8B.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export BS_BINARY=/tmp/bs/bundle/bin/blueshift
for e in "X=0" "BLUESHIFT_PERSISTENT_Q4_PAIRS=0"; do
  echo "test_model Persistent [$e]: $(env $e timeout 90 $BS test_model --gtest_filter='Synth/Persistent.*' 2>&1 | grep -E 'PASSED|FAILED' | head -3 | tr '\n' ' ')"
done
mk() { $BS blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $BS blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; }
bench() { env $3 timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/$1-$2.json 2>/tmp/b.err \
  && python3 -c "
import json; d=json.load(open('/tmp/$1-$2.json')); k=d['gpu_ms_by_kernel']
print('%-3s %-12s decode %6.1f tok/s (%.3f ms) pk %s' % ('$1','$2',d['decode_tok_s'],1000/d['decode_tok_s'], '%.3f'%k.get('decode_persistent',0)))" \
  || { echo "$1 $2 FAILED: $(tail -2 /tmp/b.err)"; }; }
P="BLUESHIFT_PERSISTENT=1"
for m in m1:llama-3.2-1b m8:llama-3.1-8b; do
  M=${m%%:*}; t0=$(date +%s); mk ${m#*:} $M; echo "== $M ready in $(( $(date +%s) - t0 )) s"
  $BS blueshift bench --model /tmp/$M --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null 2>&1
  bench $M nopk BLUESHIFT_NO_PERSISTENT=1
  for r in 1 2; do bench $M pairs.$r "$P"; bench $M parts.$r "$P BLUESHIFT_PERSISTENT_Q4_PAIRS=0"; done
  bench $M skip31 "$P BLUESHIFT_PERSISTENT_SKIP=31"
  N=200; [ $M = m8 ] && N=60
  T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range($N)))")
  BLUESHIFT_NO_PERSISTENT=1 timeout 60 $BS blueshift logits --model /tmp/$M --tokens $T --out /tmp/ref.npy --step >/dev/null 2>&1
  for e in "$P"; do
    env $e timeout 60 $BS blueshift logits --model /tmp/$M --tokens $T --out /tmp/pk.npy --step >/dev/null 2>&1 && echo -n "[$e] vs per-phase: " && python3 .dev/s6/cmp.py /tmp/pk.npy /tmp/ref.npy
  done
  rm -f /tmp/*.npy; rm -rf /tmp/$M
done
