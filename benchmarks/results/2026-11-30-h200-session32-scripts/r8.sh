#!/usr/bin/env bash
# R8 (session 32, written, not run: for the next session). `switches.patch` (against 9e99a8c) adds two A/B switches,
# both off by default. (a) NORM_SLOTS: where a phase's
# matrices are all Q4_K (P4's gate/up always in q4_k_m; P1's q/k/v where v is Q4_K), RMSNorm goes straight into the f16
# slots (stage_norm_slots: invocation g loads slot g's 16 values of x and of the norm weights as vec4s, the squares
# summed over the workgroup, then slot_put of the scaled values) instead of floats into sx, a workgroup sum, then
# stage_quantize_scaled reading sx back, writing the slots and the scaled floats. A spec constant, NORM_SLOTS
# (BLUESHIFT_PERSISTENT_NORM_SLOTS=1), set only where dim / 16 fits the workgroup. (b) Q6K_ROT
# (BLUESHIFT_PERSISTENT_Q6K_ROT=1): q6k_dot2's lanes whose 16-byte x reads share bank groups with their neighbours'
# (2-way, float and slot forms alike) take the quarters in the order qq ^ 2; the quarter's codes then by shifts of a
# run-time amount (q6k_code), the scale byte by a select. $BS = 9e99a8c + the patch.
# Predicted: 8B kernel -0.3 to -0.6% (R6 of session 31: staging 0.221 ms a step in all; one shared write-read-write
# pass and its work per norm saved, ~0.3-0.5 us a norm x 64), 1B -0.3 to -0.5%; registers unchanged; logits with the
# fold off at the h16 reorder level or below (the slots' values are the same; the sum of squares is taken in another
# order). Q6K_ROT: 1B -0.3 to -1% (its Q6_K downs and v rows read floats), 8B -0.3 to -0.6% (the slot form's cost in
# R4 was ~1%); logits at the h16 level (each rotated lane sums its quarters in another order).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r8
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  benchmarks/kernel_registers.sh $BS /tmp/m/m ns:BLUESHIFT_PERSISTENT_NORM_SLOTS=1 rot:BLUESHIFT_PERSISTENT_Q6K_ROT=1
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r8/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r8 $cfg-off$i $BS /tmp/m/m 512 128 5
    ab_bench /tmp/r8 $cfg-ns$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_NORM_SLOTS=1
    ab_bench /tmp/r8 $cfg-rot$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_Q6K_ROT=1
  done
  stamp $cfg
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m off:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  ns:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_NORM_SLOTS=1 \
  rot:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_Q6K_ROT=1 | grep -v wrote
stamp logits
tar -C /tmp -cJf $OUT/r8.tar.xz r8
