#!/usr/bin/env bash
# W25 (session 42): the review's twins, one function each (no change meant to the code the GPU runs): store_partial in
# decode_persistent.comp (attention_item, attention_group_item) and in attention_split.comp (both forms), and
# merge_partials (attention_split.comp's two merges). $OLD is f1b180c, $BS the tree with them; each row twice, in turn.
# Predicted: every pair within the spread of its own repeats (<= 0.5%); greedy ids the same.
# Carry .gl, .dev/carry (the tree), .dev/carry2 (f1b180c).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "new: $BS_BUILD / old: $OLD_BUILD"
mkdir -p /tmp/w25 $OUT
for spec in llama-3.2-1b:q4_k_m llama-3.2-1b:f16 llama-3.1-8b:q4_k_m; do
  cfg=${spec%%:*} q=${spec#*:}
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  o=/tmp/w25/$cfg-$q; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg $q"
  for P in 512 4096; do
    reps=5; [ $P = 4096 ] && reps=3
    for r in a b; do
      ab_bench $o old-p$P-$r $OLD /tmp/m/m $P 128 $reps
      ab_bench $o new-p$P-$r $BS /tmp/m/m $P 128 $reps
    done
  done
  ab_ids $o/ids-old.txt $OLD /tmp/m/m
  ab_ids $o/ids-new.txt $BS /tmp/m/m
  cmp -s $o/ids-old.txt $o/ids-new.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  ab_ids $o/ids-old-long.txt $OLD /tmp/m/m BLUESHIFT_LONG_DECODE_FROM=1
  ab_ids $o/ids-new-long.txt $BS /tmp/m/m BLUESHIFT_LONG_DECODE_FROM=1
  cmp -s $o/ids-old-long.txt $o/ids-new-long.txt && echo "  greedy ids, long forms: same" || echo "  greedy ids, long forms: DIFFER"
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/w25.tar.xz w25
done
