#!/usr/bin/env bash
# W7 (session 40; written in session 39): TOUCH_AHEAD (`w7-touch-ahead.patch`, on d290ce0), the next layer's K and V
# rows touched already in the wait at the layer's end, beside TOUCH's touches in the wait after q/k/v. W5 found the cap
# of 16 barely above 8 at 4,096 + 128 (1B 969 / 970, 8B 281 / 279): the one wait is what limits there. The q/k/v phase
# between the two waits reads 3.5 MB (1B) to 15 MB (8B) of weights, so what the first wait brings in should stay in L2.
# Predicted: 4,096 + 128 +2-5% at AHEAD 8 over 0 (more of the 16.8 MB a layer of the 8B's K and V warm), 512 + 128
# even (its rows fit the one wait already), or a loss at 512 if the layer's last wait, short like gate/up's and down's
# (W2), holds the last arriver. Greedy ids under --deterministic must be the same.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w7
A="BLUESHIFT_PERSISTENT_TOUCH_AHEAD"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w7/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    for n in 0 8; do ab_bench $o ahead${n}_$r $BS /tmp/m/m 512 128 5 $A=$n; done
    for n in 0 4 8; do ab_bench $o long4k_ahead${n}_$r $BS /tmp/m/m 4096 128 3 $A=$n; done
  done
  ab_ids $o/ids-0.txt $BS /tmp/m/m $A=0
  ab_ids $o/ids-8.txt $BS /tmp/m/m $A=8
  cmp -s $o/ids-0.txt $o/ids-8.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w7.tar.xz w7
done
