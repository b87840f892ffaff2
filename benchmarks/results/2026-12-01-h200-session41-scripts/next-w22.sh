#!/usr/bin/env bash
# Next (written in session 41, not run: its device time was spent): the persistent long form's chunks a kv head
# (BLUESHIFT_PERSISTENT_LONG_CHUNKS, in the tree since session 41; default G x splits = 16 on the 1B and the 8B, one
# item a workgroup). W18-W19: the long form loses at 2,048 (1B -3.3%, 8B -1.4%) and on the 8B at 3,072 (-1.9%); a
# grouped item there is one block, partly empty, and the merge folds 16 partials a head.
# Predicted: 8 chunks (64 items, full blocks, 8 partials): 2,048 1B -1..+1%, 8B even..+1%; 4,096 within 1% of 16.
# 32 chunks (256 items, two a workgroup): a loss everywhere (-2..-4%: the merge's 32 partials). If 8 wins at 2,048 and
# 3,072, set it for the persistent long form and lower the persistent threshold (Model::long_context_from) to where it
# crosses.
# Carry .gl, .dev/carry (a bundle of the tree; check $BS_BUILD).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w22 $OUT
F=BLUESHIFT_LONG_DECODE_FROM
C=BLUESHIFT_PERSISTENT_LONG_CHUNKS
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w22/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m"
  for P in 2048 3072 4096; do
    ab_bench $o p${P}_never $BS /tmp/m/m $P 128 3 $F=0
    ab_bench $o p${P}_c16 $BS /tmp/m/m $P 128 3 $F=1
    ab_bench $o p${P}_c8 $BS /tmp/m/m $P 128 3 $F=1 $C=8
    ab_bench $o p${P}_c32 $BS /tmp/m/m $P 128 3 $F=1 $C=32
  done
  ab_ids $o/ids-never.txt $BS /tmp/m/m $F=0
  ab_ids $o/ids-c8.txt $BS /tmp/m/m $F=1 $C=8
  cmp -s $o/ids-never.txt $o/ids-c8.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w22.tar.xz w22
done
