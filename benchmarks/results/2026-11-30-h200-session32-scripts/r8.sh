#!/usr/bin/env bash
# R8 (session 32, written, not run: for the next session). `norm-slots.patch` (against 72f0c1b): where a phase's
# matrices are all Q4_K (P4's gate/up always in q4_k_m; P1's q/k/v where v is Q4_K), RMSNorm goes straight into the f16
# slots (stage_norm_slots: invocation g loads slot g's 16 values of x and of the norm weights as vec4s, the squares
# summed over the workgroup, then slot_put of the scaled values) instead of floats into sx, a workgroup sum, then
# stage_quantize_scaled reading sx back, writing the slots and the scaled floats. A spec constant, NORM_SLOTS
# (BLUESHIFT_PERSISTENT_NORM_SLOTS=1), set only where dim / 16 fits the workgroup. $BS = 72f0c1b + the patch.
# Predicted: 8B kernel -0.3 to -0.6% (R6 of session 31: staging 0.221 ms a step in all; one shared write-read-write
# pass and its work per norm saved, ~0.3-0.5 us a norm x 64), 1B -0.3 to -0.5%; registers unchanged; logits with the
# fold off at the h16 reorder level or below (the slots' values are the same; the sum of squares is taken in another
# order).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r8
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  benchmarks/kernel_registers.sh $BS /tmp/m/m ns:BLUESHIFT_PERSISTENT_NORM_SLOTS=1
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r8/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r8 $cfg-off$i $BS /tmp/m/m 512 128 5
    ab_bench /tmp/r8 $cfg-on$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_NORM_SLOTS=1
  done
  stamp $cfg
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m off:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  on:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_NORM_SLOTS=1 | grep -v wrote
stamp logits
tar -C /tmp -cJf $OUT/r8.tar.xz r8
