#!/usr/bin/env bash
# W1: TOUCH (BLUESHIFT_PERSISTENT_TOUCH=n, _TOUCH_STEP=s): in the wait of each grid barrier that opens a phase, every
# subgroup but each workgroup's first reads n words a lane of the next phase's weights (K/V rows and W_o; gate/up's first
# round; down's row heads; the next layer's k, v, q), s bytes apart, folded and consumed before the wait ends: L2 is
# warmed while the multiprocessors idle. Count: a barrier's wait is ~1-1.5 us (session 37, U7: the 1B's 0.135 ms of
# barriers in ~64 waits), in which DRAM could move ~4-6 MB; at n=2, s=64 the 1B's grid (132 x 15 x 32 lanes) reaches
# 8.1 MB a wait, the 8B's (132 x 19 x 32) 10.3 MB. Upper bound: every wait's DRAM time recovered, 1B ~60 us of 742 a
# token (+8%), 8B ~130 us of 2,760 (+5%). Predicted: 1B +2-4%, 8B +1-2%, or a loss where the last arriver's touches
# (a DRAM round trip after its arrival) delay its departure by more than its phase saves.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w1
T="BLUESHIFT_PERSISTENT_TOUCH"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w1/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o base$r $BS /tmp/m/m 512 128 5
    ab_bench $o t1s64$r $BS /tmp/m/m 512 128 5 $T=1 ${T}_STEP=64
    ab_bench $o t2s64$r $BS /tmp/m/m 512 128 5 $T=2 ${T}_STEP=64
    ab_bench $o t2s32$r $BS /tmp/m/m 512 128 5 $T=2 ${T}_STEP=32
    ab_bench $o t4s32$r $BS /tmp/m/m 512 128 5 $T=4 ${T}_STEP=32
    ab_bench $o t2s128$r $BS /tmp/m/m 512 128 5 $T=2 ${T}_STEP=128
  done
  benchmarks/kernel_registers.sh $BS /tmp/m/m t2s64:$T=2,${T}_STEP=64 t4s32:$T=4,${T}_STEP=32
  if [ $cfg = llama-3.1-8b ]; then
    ab_ids $o/ids-0.txt $BS /tmp/m/m
    ab_ids $o/ids-2.txt $BS /tmp/m/m $T=2
    cmp -s $o/ids-0.txt $o/ids-2.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w1.tar.xz w1
done
