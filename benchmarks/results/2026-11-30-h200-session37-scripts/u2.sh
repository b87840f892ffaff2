#!/usr/bin/env bash
# U2 (session 37): NORM_PRE=1 (BLUESHIFT_PERSISTENT_NORM_PRE): where a phase's RMSNorm goes straight into the slots
# (P1 and P4 of q4_k_m layers), its weights are loaded in the wait of the grid barrier that opens the phase into the
# staging floats, not in stage_norm_slots after the wait, against 0. On top of TBL_SMEM (U1, 70b08ad): the next layer's
# table row now comes in at P1's barrier, so that the layer-end wait has P1's norm address.
# Count: after the wait, stage_norm_slots waits on max(x's round trip to L2, the norm weights' to DRAM: the layer's
# weights have left L2 since the last token). With the weights in smem, x's L2 round trip alone: ~0.2-0.4 us less, twice
# a layer. Predicted: 1B (16 layers) +0.8-1.6%, 3B (28) +0.8-1.5%, 8B (32) +0.4-0.8%. Or even, if the norm weights
# stay in L2 (2 KiB - 16 KiB a layer, read by every workgroup).
# Greedy ids with --deterministic must be the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/u2
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/u2/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o pre$r $BS /tmp/m/m 512 128 5
    ab_bench $o nopre$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_NORM_PRE=0
    ab_bench $o u1$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_NORM_PRE=0 BLUESHIFT_PERSISTENT_TBL_SMEM=0
  done
  if [ $cfg != llama-3.2-3b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m nopre:BLUESHIFT_PERSISTENT_NORM_PRE=0
    for v in 0 1; do
      BLUESHIFT_PERSISTENT_NORM_PRE=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
    done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/u2.tar.xz u2
done
