#!/usr/bin/env bash
# W26 (session 42): where the persistent kernel's time goes at 8b2f92e (benchmarks/persistent_phases.sh; session 37's
# U7 was the last breakdown, at 70b08ad, before TOUCH, ATTN_TPP and the long recording), on the 1B and the 8B q4_k_m;
# and 8b2f92e ($BS: W25's twins and the window start through bs_window_lo) against f1b180c ($OLD) once more.
# Predicted: the phases as U7 (1B 0.59 ms a step at a 16-token prompt, 8B 2.61), the barriers' skeleton ~0.13 / 0.27
# ms; the pair within 0.3%.
# Carry .gl, .dev/carry (8b2f92e), .dev/carry2 (f1b180c).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "new: $BS_BUILD / old: $OLD_BUILD"
mkdir -p /tmp/w26 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w26/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: the pair, 512 + 128"
  for r in a b; do
    ab_bench $o old-$r $OLD /tmp/m/m 512 128 5
    ab_bench $o new-$r $BS /tmp/m/m 512 128 5
  done
  echo "== $cfg q4_k_m: phases (16-token prompt, 64 tokens)"
  bash benchmarks/persistent_phases.sh $BS /tmp/m/m 64 | tee $o/phases.txt
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w26.tar.xz w26
done
