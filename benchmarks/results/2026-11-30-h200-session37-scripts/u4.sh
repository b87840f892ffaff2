#!/usr/bin/env bash
# U4 (session 37): ATT_PRE=1 (BLUESHIFT_PERSISTENT_ATT_PRE): an attention item's block of positions loads all its K and
# V words at once before any of its math (the first block's before q is staged), against the loop's loads (0): K's
# after q's barrier, V's after the scores' reductions. On top of 70b08ad (TBL_SMEM).
# Count: at 512 + 128 an item is 1-2 blocks (128 positions at 512 wide, 160 at 640); its chain was q (L2) -> K
# (memory) -> reductions -> V (memory). With both kinds in flight at once: ~2 round trips less an item (~1-1.5 us), on
# the path to the o fold's group counts. Predicted: 1B +1.5-2.5%, 3B +1-2%, 8B +0.8-1.4%. Registers: 32 more in the
# attention code (16 f16vec4s), below the matvec loops' peak; a spill would show in kernel_registers.
# Greedy ids with --deterministic must be the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/u4
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/u4/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o pre$r $BS /tmp/m/m 512 128 5
    ab_bench $o nopre$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_ATT_PRE=0
  done
  if [ $cfg != llama-3.2-3b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m nopre:BLUESHIFT_PERSISTENT_ATT_PRE=0
    for v in 0 1; do
      BLUESHIFT_PERSISTENT_ATT_PRE=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
    done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/u4.tar.xz u4
done
