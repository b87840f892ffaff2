#!/usr/bin/env bash
# R4 (session 32). Q6_K down projections on the f16 slots too (h16 form: q6k_dot2 reads a quarter's 8 columns as one
# half of a slot, scaled back by the slot's power of 2), so they take the whole shared array as R1's Q4_K ones do: the
# 8B's 16 Q6_K downs in 1 pass instead of 3; the 1B's stay at 1 (8d955b3). $BS = that tree, $OLD = 8d955b3.
# Predicted: 8B kernel -1.5% (R1's Q4_K passes: -1.7% for the same 16 layers x 2 passes), 1B within 0.5% (no pass
# saved; 4 f16 slot loads and 8 unpacks a part in place of 8 float loads). Registers: 1B <= 112, 8B 96 without spill.
# Logits (fold off) against $OLD at the h16 level, 1e-3 to 5e-3 rel L2: the Q6_K rows now meet x rounded to f16.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r4
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  for t in old:$OLD new:$BS; do echo "${t%%:*}:"; benchmarks/kernel_registers.sh ${t#*:} /tmp/m/m; done
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r4/$cfg-warm.json
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['decode_kernel'])" /tmp/r4/$cfg-warm.json
  for i in 1 2 3; do
    ab_bench /tmp/r4 $cfg-old$i $OLD /tmp/m/m 512 128 5
    ab_bench /tmp/r4 $cfg-new$i $BS /tmp/m/m 512 128 5
  done
  stamp $cfg
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  benchmarks/logits_ab.sh $BS $cfg q4_k_m old@$OLD:BLUESHIFT_PERSISTENT_FOLD_O=0 new:BLUESHIFT_PERSISTENT_FOLD_O=0 | grep -v wrote
done
stamp logits
tar -C /tmp -cJf $OUT/r4.tar.xz r4
