#!/usr/bin/env bash
# W32 (session 43): P1's RMSNorm straight into the slots in the layers where v is Q6_K too (NORM_SLOTS 2, new default:
# stage_norm_slots stages the floats beside the slots from the same registers), against NORM_SLOTS 1 (those layers
# through stage_norm: x into the floats, the reduction, then the floats read back into the slots and rescaled).
# Count: W31 put P1's staging at 3.0 us (8B) against P4's 2.6 (slots alone, behind EARLY's loads); Q4_K_M gives half
# the layers a Q6_K v (16 of 32 on the 8B, 8 of 16 on the 1B, 14 of 28 on the 3B).
# Predicted: ~0.5-1 us a mixed layer: 8B +0.3..+0.6%, 1B +0.5..+1.0%, 3B +0.4..+0.8%; logits within the slots'
# rounding (the squares summed in another order); registers unchanged.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w32 $OUT
V="ns2: ns1:BLUESHIFT_PERSISTENT_NORM_SLOTS=1"
echo "== logits, 1B q4_k_m, NORM_SLOTS 2 against 1"
BENCH_WORK=/tmp/w32/la bash benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m ns1:BLUESHIFT_PERSISTENT_NORM_SLOTS=1 ns2: 2>&1 | tail -1
rm -rf /tmp/w32/la
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w32/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m ns1:BLUESHIFT_PERSISTENT_NORM_SLOTS=1 2>&1 | tee $o/regs.txt
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  for r in a b c; do
    for v in $V; do
      ab_variant $BS "$v"
      ab_bench $o $ab_name-$r $ab_run /tmp/m/m 512 128 5 "${ab_env[@]}"
    done
  done
  for v in $V; do
    ab_variant $BS "$v"; ab_ids $o/ids-$ab_name.txt $ab_run /tmp/m/m "${ab_env[@]}"
  done
  cmp -s $o/ids-ns1.txt $o/ids-ns2.txt && echo "ids (--deterministic): same" || echo "ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w32.tar.xz w32
done
