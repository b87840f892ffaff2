#!/usr/bin/env bash
# W30 (session 43): the down projection's 256-column blocks dealt evenly over the grid's subgroups, sums added by
# atomics (decode_persistent.comp SPLIT, the _fold variants), against the default grid-stride tasks.
# Count (q4_k_m): 8B down 2,048 tasks x 56 blocks on 2,640 subgroups at 640 wide: one round of 14 steps, 592 subgroups
# idle; split ~44 blocks = 11 steps. 3B 1,536 tasks x 32 blocks on its subgroups (TEAM 1): 8 steps against ~5. 1B
# (TEAM 2: 1,024 teams of 2 on 2,112 subgroups, 4 steps a member) ~15.5 blocks = 4 steps: even.
# Predicted: 8B P5 0.59 -> ~0.50 ms a step, tok/s +3..+4%; 3B +4..+6%; 1B -0.5..+0.5%. Logits within the fold's
# atomics' noise (rel L2 ~1e-6 against base); --deterministic ids the same (it takes the unfolded kernel).
# Carry .gl, .dev/carry (the tree with SPLIT, default 0).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w30 $OUT
V="base: split:BLUESHIFT_PERSISTENT_SPLIT=1"
echo "== logits, 1B q4_k_m, split against base"
BENCH_WORK=/tmp/w30/la bash benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: split:BLUESHIFT_PERSISTENT_SPLIT=1 2>&1 | tail -3
rm -rf /tmp/w30/la
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w30/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m split:BLUESHIFT_PERSISTENT_SPLIT=1 2>&1 | tee $o/regs.txt
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  for r in a b c; do
    for v in $V; do
      ab_variant $BS "$v"
      ab_bench $o $ab_name-$r $ab_run /tmp/m/m 512 128 5 "${ab_env[@]}"
    done
  done
  for v in $V; do
    ab_variant $BS "$v"; ab_ids $o/ids-$ab_name.txt $ab_run /tmp/m/m "${ab_env[@]}"
  done
  cmp -s $o/ids-base.txt $o/ids-split.txt && echo "ids (--deterministic): same" || echo "ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w30.tar.xz w30
done
