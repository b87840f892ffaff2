#!/usr/bin/env bash
# T4 (session 35): TAIL_TEAM (spec constant 18): the gate/up phase's partial last round of Q4_K tasks in teams of T
# subgroups of a workgroup, each member a T-th of the task's steps, member 0 adding the team's sums after a workgroup
# barrier. $BS = 26a42df + t4-tail-team.patch; $OLD = 26a42df. BLUESHIFT_PERSISTENT_TAIL_TEAM=1 keeps the round whole.
# Count (T1/T2 fitted a step at ~1.1 us, one loaded round trip):
# - 8B q4_k_m: 14,336 tasks of 4 steps on 2,640 subgroups = 5 rounds + 1,136 tasks; T 2 (T 4 needs <= 660): the phase
#   ends after 22 steps against 24. Predicted P4 0.825 -> ~0.76 ms a step, decode +2-2.5% (356 -> ~364 tok/s).
# - qwen2.5-7b q4_k_m: 18,944 tasks of 4 steps (3,584 columns) on 2,640 = 7 rounds + 464: T 4, 29 steps against 32.
#   Predicted P4 -9%, decode +3%.
# - The 1B (T 1: its partial round is 1,856 tasks on 2,112 subgroups) and 3B: the kernel compiles the old loop's
#   sums; predicted even against $OLD.
# bench 512 + 128, medians of 5, variants alternating. Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t4
for cfg in llama-3.1-8b qwen2.5-7b llama-3.2-1b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t4/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  ab_bench $o old1 $OLD /tmp/m/m 512 128 5
  ab_bench $o new1 $BS /tmp/m/m 512 128 5
  ab_bench $o tail1 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TAIL_TEAM=1
  [ $cfg = qwen2.5-7b ] && ab_bench $o tail2 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TAIL_TEAM=2
  ab_bench $o new2 $BS /tmp/m/m 512 128 5
  ab_bench $o old2 $OLD /tmp/m/m 512 128 5
  if [ $cfg != llama-3.2-1b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m tail1:BLUESHIFT_PERSISTENT_TAIL_TEAM=1
    for v in 1 0; do
      echo "== phases, TAIL_TEAM $v (0: the default)"
      BLUESHIFT_PERSISTENT_TAIL_TEAM=$v benchmarks/persistent_phases.sh $BS /tmp/m/m 32 2>/dev/null | head -8
    done
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t4.tar.xz t4
done
