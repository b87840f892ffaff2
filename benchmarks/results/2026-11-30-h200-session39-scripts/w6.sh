#!/usr/bin/env bash
# W6: the shipped default (4cdea74: TOUCH 8, nothing in the environment) against BLUESHIFT_PERSISTENT_TOUCH=0, 1B, 3B
# and 8B q4_k_m at 512 + 128, two rounds; greedy ids under --deterministic on the 3B (W4 checked the 1B and 8B at 2).
# Predicted: W5's 1B +3.3%, 8B +2.1%; the 3B about W4's +3.3%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w6
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w6/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o default_$r $BS /tmp/m/m 512 128 5
    ab_bench $o touch0_$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TOUCH=0
  done
  if [ $cfg = llama-3.2-3b ]; then
    ab_ids $o/ids-0.txt $BS /tmp/m/m BLUESHIFT_PERSISTENT_TOUCH=0
    ab_ids $o/ids-8.txt $BS /tmp/m/m
    cmp -s $o/ids-0.txt $o/ids-8.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w6.tar.xz w6
done
