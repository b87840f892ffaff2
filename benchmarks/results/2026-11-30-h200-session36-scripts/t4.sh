#!/usr/bin/env bash
# T4 (session 36): O_SPLIT=2 (BLUESHIFT_PERSISTENT_O_SPLIT): the folded o projection's rows taken by two invocations
# each, a half of the row's Q4_K block apiece (one load round trip for the block where one invocation took it in two
# halves), their sums met by a shuffle. $OLD = b8da5bd (the code-shape check for O_SPLIT 1). Then POLL_COUNT (T2, now
# the default) on the f16 models, which T2 did not run.
# Predicted: one round trip (~0.7 us) off each layer's o fold: the 1B +1.5%, the 8B +0.8%, the 3B +1%. POLL_COUNT on
# f16: the 1B +2.5%, the 8B +0.5%. Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t4
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t4/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o old$r $OLD /tmp/m/m 512 128 5
    ab_bench $o split1$r $BS /tmp/m/m 512 128 5
    ab_bench $o split2$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_O_SPLIT=2
  done
  [ $cfg != llama-3.2-3b ] && benchmarks/kernel_registers.sh $BS /tmp/m/m split2:BLUESHIFT_PERSISTENT_O_SPLIT=2
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t4.tar.xz t4
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  o=/tmp/t4/$cfg-f16; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg f16"
  for r in a b; do
    ab_bench $o count0$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_POLL_COUNT=0
    ab_bench $o count1$r $BS /tmp/m/m 512 128 5
  done
  stamp "$cfg f16 done"
  tar -C /tmp -cJf $OUT/t4.tar.xz t4
done
