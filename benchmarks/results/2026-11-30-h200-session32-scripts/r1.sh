#!/usr/bin/env bash
# R1 (session 32). The Q4_K down projection on its f16 slots alone, staged straight from scratch over the whole shared
# array (decode_persistent.comp stage_slots; floats and slots now one uvec4 array, the slots in 40-uvec4 records a
# block). $BS = that tree, $OLD = HEAD e100d20 (kernels byte-identical to 81da4c9). Q4_K down layers take 1 pass (8B:
# 56 blocks fit exactly; 1B: 32 of 60) where they took 3 (8B) / 2 (1B); Q6_K layers unchanged.
# Predicted: 8B kernel -2 to -3% (R6 of session 31: P5 0.722 ms a step; 16 of 32 downs are Q4_K, 2 passes saved each),
# 1B -1 to -2% (8 of 16, 1 pass saved); registers unchanged (1B 112, 8B 96, no spill); logits with the fold off at the
# h16 reorder level (~1e-3 to 5e-3 rel L2: the passes' partial sums go into x in another grouping), top-1 >= 98%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p $OUT/r1
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  echo "new:"; benchmarks/kernel_registers.sh $BS /tmp/m/m
  echo "head:"; benchmarks/kernel_registers.sh $OLD /tmp/m/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > $OUT/r1/$cfg-warm.json
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['decode_kernel'])" $OUT/r1/$cfg-warm.json
  for i in 1 2; do
    ab_bench $OUT/r1 $cfg-new$i $BS /tmp/m/m 512 128 5
    ab_bench $OUT/r1 $cfg-head$i $OLD /tmp/m/m 512 128 5
  done
  stamp $cfg
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m head@$OLD:BLUESHIFT_PERSISTENT_FOLD_O=0 new:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  head-fold@$OLD:X=1 new-fold:X=1
stamp logits
