#!/usr/bin/env bash
# V2: QKV_ORDER (BLUESHIFT_PERSISTENT_QKV_ORDER), the q/k/v phase's tasks dealt so that the subgroups with two tasks
# take two q tasks, against 0 (q, then k, then v: a subgroup's second task, a v task, follows a q task). On the 8B at
# 640 wide: 3,072 tasks on 2,640 subgroups; 432 take two. In the 16 of 32 layers whose W_v is Q6_K (the q4_k_m mix),
# those 432 took a Q4_K q task and a Q6_K v task (rows 1.46x the bytes); now two Q4_K q tasks. The 3B (2,560 on 2,112)
# likewise. The 1B (1,536 on 2,112) has no second round (e = 0): not run.
# Count: P1 ~10 us a layer on the 8B (session 37, U7), of which two task rounds ~8 us; the chain 1 + 1.46 -> 2 units:
# ~1.5 us in each Q6_K layer, 16 layers: ~24 us a step of 2.7 ms. Predicted: 8B +0.5-1.2%, 3B +0.5-1.2%, 1B even.
# Also P1 alone (SKIP=30, 16-token prompt) at both settings on the 8B: P1's own time should fall ~0.02-0.05 ms a step.
# GPU correctness: the sums are the same tasks' sums, so greedy ids under --deterministic must be the same.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v2
for cfg in llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/v2/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o order$r $BS /tmp/m/m 512 128 5
    ab_bench $o plain$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_QKV_ORDER=0
  done
  if [ $cfg = llama-3.1-8b ]; then
    for r in a b; do
      ab_bench $o p1order$r $BS /tmp/m/m 16 64 3 BLUESHIFT_PERSISTENT_SKIP=30
      ab_bench $o p1plain$r $BS /tmp/m/m 16 64 3 BLUESHIFT_PERSISTENT_SKIP=30 BLUESHIFT_PERSISTENT_QKV_ORDER=0
    done
    benchmarks/kernel_registers.sh $BS /tmp/m/m plain:BLUESHIFT_PERSISTENT_QKV_ORDER=0
  fi
  if [ $cfg != llama-3.2-1b ]; then
    for v in 0 1; do ab_ids $o/ids-$v.txt $BS /tmp/m/m BLUESHIFT_PERSISTENT_QKV_ORDER=$v; done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/v2.tar.xz v2
done
