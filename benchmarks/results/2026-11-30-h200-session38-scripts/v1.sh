#!/usr/bin/env bash
# NEXT (written in session 37, not run: the device time was spent). Apply next-qkv-fold.patch to 9c93d3d (or later),
# build, bundle into .dev/carry, then run this from the repository root. Carry .gl, .dev/carry.
# QKV_FOLD=1 (BLUESHIFT_PERSISTENT_QKV_FOLD): no grid barrier between P1 (q/k/v) and P2 (attention). The grid's
# workgroups are shared out over the kv heads (contiguous runs of grid / n_kv: 16-17 on the 1B and 8B); a kv group's
# workgroups take its q, k and v tasks, count themselves in on the group's word, then wait on that word alone before
# its attention items. Against 0 (a grid barrier, as at 9c93d3d).
# Count: a grid barrier costs 1.3-1.5 us in the kernel (session 36, T1); a group's count and wait ~1 us (the o fold's,
# session 30), less the skew of 132 workgroups against 16-17. P1's tasks a subgroup are as before (1B: 192 a group on
# 256-272 subgroups; 8B 384 on 320-340, at most 2). Predicted: 0.3-0.8 us a layer: 1B +0.7-1.7%, 3B +0.5-1.5%, 8B
# +0.3-0.9%; even or worse if the wait on one word by 16 workgroups costs what the barrier did (session 30's o fold
# gained a fifth of its prediction).
# GPU correctness (lavapipe runs a grid of 1, where no group waits on another workgroup): greedy ids with
# --deterministic must be the same under 0 and 1.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v1
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/v1/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o fold$r $BS /tmp/m/m 512 128 5
    ab_bench $o barrier$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_QKV_FOLD=0
  done
  if [ $cfg != llama-3.2-3b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m barrier:BLUESHIFT_PERSISTENT_QKV_FOLD=0
    for v in 0 1; do ab_ids $o/ids-$v.txt $BS /tmp/m/m BLUESHIFT_PERSISTENT_QKV_FOLD=$v; done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/v1.tar.xz v1
done
