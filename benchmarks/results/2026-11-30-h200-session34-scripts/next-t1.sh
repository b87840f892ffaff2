#!/usr/bin/env bash
# next-t1 (written in session 34, not run: its device time was spent). DOWN_SPLIT (next-down-split.patch, on fca38e3
# or later; it passed the lavapipe case q4_k_m_down_split and failed it with a doubled partial): the down projection's
# tasks split in S column parts that add into x by float atomics, so that the 8B's 2,048 tasks of 14 steps on 2,640
# subgroups (22% of them idle) spread over the whole grid.
# Apply the patch, build, bundle (scripts/bundle.sh) into .dev/carry; carry .gl and .dev/carry.
# Count (8B q4_k_m, 640 wide, 132 workgroups, TEAM 1, PARTS 1): S 2: 4,096 tasks of 7 steps, 2 rounds = 14 steps
# (even); S 7: 14,336 of 2, 6 rounds = 12 (-14%); S 14: 28,672 of 1, 11 rounds = 11 (-21%).
# Predicted: P5 0.58 -> 0.46-0.50 ms a step and the 8B +3-4.5% at S 7-14 if the steps bind the phase; even or worse
# if the 1-2 step tasks lose what PIPE overlaps inside a task. Atomics: 4,096 rows x S adds a layer, 448 a cache line
# of x at S 14 (session 34's S1: ~8,000-16,000 a line cost 7-21 us; ~450 should cost < 1 us).
# 1B: TEAM 2 is its default (the split is off there); S 2 at TEAM 1 is TEAM 2's split without its workgroup barrier.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t1
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m
o=/tmp/t1/8b; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
ab_bench $o base1 $BS /tmp/m/m 512 128 5
for s in 2 7 14; do ab_bench $o s$s $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DOWN_SPLIT=$s; done
ab_bench $o base2 $BS /tmp/m/m 512 128 5
benchmarks/kernel_registers.sh $BS /tmp/m/m s14:BLUESHIFT_PERSISTENT_DOWN_SPLIT=14
for s in 1 14; do
  echo "== 8B phases, DOWN_SPLIT $s"
  BLUESHIFT_PERSISTENT_DOWN_SPLIT=$s benchmarks/persistent_phases.sh $BS /tmp/m/m 32 | head -8
done
stamp "8B done"
tar -C /tmp -cJf $OUT/t1.tar.xz t1
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m
o=/tmp/t1/1b; mkdir -p $o
ab_bench $o base1 $BS /tmp/m/m 512 128 5
ab_bench $o team1 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TEAM=1
ab_bench $o team1s2 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TEAM=1 BLUESHIFT_PERSISTENT_DOWN_SPLIT=2
ab_bench $o team1s4 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TEAM=1 BLUESHIFT_PERSISTENT_DOWN_SPLIT=4
ab_bench $o base2 $BS /tmp/m/m 512 128 5
stamp "1B done"
tar -C /tmp -cJf $OUT/t1.tar.xz t1
