#!/usr/bin/env bash
# W4: TOUCH in its kept form (K and V rows alone, [lo, pos), 32-byte steps; default 2 touches a lane) against 0, on the
# 1B, 3B and 8B q4_k_m at 512 + 128 (W3 predicts 1B +2.9%, 8B +2.5%; the 3B between), and at 2048 + 128, where K and V
# outgrow a wait's reach (8B: 8.4 MB a layer at 2,048 positions; TOUCH=2 reaches 5.1 MB, 4 10.3 MB): predicted a gain
# there too, larger at 4 if the wait holds it, and no loss at 2. Greedy ids under --deterministic must be the same
# (the touches change no sum). Registers must hold (113 / 95).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w4
T="BLUESHIFT_PERSISTENT_TOUCH"
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w4/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o touch0_$r $BS /tmp/m/m 512 128 5 $T=0
    ab_bench $o touch2_$r $BS /tmp/m/m 512 128 5
  done
  if [ $cfg != llama-3.2-3b ]; then
    for r in a b; do
      for n in 0 2 4; do ab_bench $o long_touch${n}_$r $BS /tmp/m/m 2048 128 3 $T=$n; done
    done
    ab_ids $o/ids-0.txt $BS /tmp/m/m $T=0
    ab_ids $o/ids-2.txt $BS /tmp/m/m
    cmp -s $o/ids-0.txt $o/ids-2.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    benchmarks/kernel_registers.sh $BS /tmp/m/m touch0:$T=0
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w4.tar.xz w4
done
