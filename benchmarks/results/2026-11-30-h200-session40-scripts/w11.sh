#!/usr/bin/env bash
# Patch: `w9-w11-attn-gqa.patch` (on 9c96608). Not kept.
# W11 (session 40): ATTN_GQA with W9's V sums back (each V row piece loaded once into the G heads' 4 accumulators; W10's
# one-head-a-group form won less at 4,096: 1B +3.7% against W9's +8.5%), and W10's threshold (BLUESHIFT_PERSISTENT_
# ATTN_GQA=N: grouped where a head's chunk would pass N positions). Where does grouping start to win, and what does the
# code cost where it is not taken?
# Predicted: 512 + 128 at GQA 256 (not taken) -0.2..-0.5% (W10: -0.5% 1B, -0.2% 8B); GQA 1 against 0: 4,096 + 128
# +8% (1B) and +7% (8B) as in W9; 2,048 + 128 +3% / +3%; 1,024 + 128 -2% / -3%. Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w11
G=BLUESHIFT_PERSISTENT_ATTN_GQA
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w11/$cfg; mkdir -p $o
  benchmarks/kernel_registers.sh $BS /tmp/m/m gqa256:$G=256 2>&1 | sed 's/^/  /'
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    for n in 0 256; do ab_bench $o g${n}_$r $BS /tmp/m/m 512 128 5 $G=$n; done
  done
  for len in 1024 2048 4096; do
    for n in 0 1; do ab_bench $o len${len}_g${n} $BS /tmp/m/m $len 128 3 $G=$n; done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w11.tar.xz w11
done
