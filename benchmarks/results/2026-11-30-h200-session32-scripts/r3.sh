#!/usr/bin/env bash
# R3 (session 32). Why R2's B lost, and whether the staging's round trips are what A's 8B passes pay. $BS = R2's A with a
# temporary spec constant STAGE (BLUESHIFT_PERSISTENT_STAGE; not landed): bit 0 = staging loads past the end skipped,
# not clamped to the last word (B clamped its second slot to the last one: 384 of the 8B's 640 invocations, all 512 of
# the 1B's, loaded one address); bit 1 = stage_copy up to 16 loads an invocation at once (A's 8B Q6_K passes of 7168
# floats on 640 invocations: one round trip, not two); bit 2 = stage_slots two slots at once (guarded, not clamped).
# $OLD = a71b618 (R1's tree: Q6_K downs in 3 passes on the 8B, 2 on the 1B).
# Predicted (kernel ms a step against STAGE 0): 1: -0.2 to -0.5% (fewer same-address loads in every staging); 2: 8B
# -0.5 to -1% (16 Q6_K passes a step one round trip shorter), 1B -0.5% (its 8192-float Q6_K pass); 4: 8B -0.3%, 1B
# even (one round already); 7: the sum. Registers unchanged.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r3
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  benchmarks/kernel_registers.sh $BS /tmp/m/m s7:BLUESHIFT_PERSISTENT_STAGE=7
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r3/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r3 $cfg-old$i $OLD /tmp/m/m 512 128 5
    for st in 0 1 2 3 4 7; do ab_bench /tmp/r3 $cfg-s$st-$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_STAGE=$st; done
  done
  stamp $cfg
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m s0:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  s7:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_STAGE=7
stamp logits
tar -C /tmp -cJf $OUT/r3.tar.xz r3
