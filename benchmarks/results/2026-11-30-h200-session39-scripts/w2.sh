#!/usr/bin/env bash
# W2: TOUCH's span and sites. W1: dense 32-byte touches won (1B TOUCH=4 +1.6%; 8B TOUCH=2 +2.3%), 64-byte steps over
# the same span lost on the 1B (so a touch warms its 32-byte sector alone), and the 8B lost past ~5 MB a wait. Here: the
# span on either side of each optimum, 16-byte steps (two touches a sector: predicted no better than 32), and each site
# alone (_TOUCH_SITES bits: 1 the next layer's q/k/v, 2 K/V rows and W_o, 4 gate/up, 8 down) at each model's best n.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w2
T="BLUESHIFT_PERSISTENT_TOUCH"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w2/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  if [ $cfg = llama-3.2-1b ]; then ns="3 4 6 8"; best=4; else ns="1 2 3"; best=2; fi
  for r in a b; do
    ab_bench $o base$r $BS /tmp/m/m 512 128 5
    for n in $ns; do ab_bench $o t${n}s32$r $BS /tmp/m/m 512 128 5 $T=$n ${T}_STEP=32; done
    ab_bench $o t$((best * 2))s16$r $BS /tmp/m/m 512 128 5 $T=$((best * 2)) ${T}_STEP=16
    for s in 1 2 4 8; do ab_bench $o site${s}_t${best}$r $BS /tmp/m/m 512 128 5 $T=$best ${T}_STEP=32 ${T}_SITES=$s; done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w2.tar.xz w2
done
