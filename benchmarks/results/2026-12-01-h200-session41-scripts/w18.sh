#!/usr/bin/env bash
# W18: the long-context decode recording (this tree): the session records the decode batch twice and replays the long
# one from Model::long_context_from. Per-phase (f16): attention_split_f16kv_gqa, from 32 x head_dim. Persistent
# (q4_k_m): decode_persistent* with ATTN_GQA 1 (W9's form, its own pipeline), from the same position for now.
# BLUESHIFT_LONG_DECODE_FROM: 0 never, 1 always.
# Predicted: 512 + 128 default = never (the long graph is recorded but not replayed; +-0.3%). Always against never:
# f16 as W16-W17's grouped rows (1B 2,048 +3.5%, 4,096 +14%; 8B 2,048 -0.5%, 4,096 +3%); q4_k_m as W9 (4,096: 1B
# +8.5%, 8B +6.8%; 2,048: -2..+2%, unmeasured in W9's form). Greedy ids: f16 the same; q4_k_m may part late (the
# grouped chunks change the merge's order).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w18 $OUT
F=BLUESHIFT_LONG_DECODE_FROM
for mq in llama-3.2-1b:f16 llama-3.2-1b:q4_k_m llama-3.1-8b:q4_k_m llama-3.1-8b:f16; do
  cfg=${mq%%:*}; q=${mq#*:}
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  o=/tmp/w18/$cfg-$q; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg $q"
  for r in a b; do
    ab_bench $o p512_never_$r $BS /tmp/m/m 512 128 5 $F=0
    ab_bench $o p512_default_$r $BS /tmp/m/m 512 128 5
  done
  for P in 2048 4096; do
    ab_bench $o p${P}_never $BS /tmp/m/m $P 128 3 $F=0
    ab_bench $o p${P}_always $BS /tmp/m/m $P 128 3 $F=1
  done
  ab_ids $o/ids-never.txt $BS /tmp/m/m $F=0
  ab_ids $o/ids-always.txt $BS /tmp/m/m $F=1
  cmp -s $o/ids-never.txt $o/ids-always.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/w18.tar.xz w18
done
