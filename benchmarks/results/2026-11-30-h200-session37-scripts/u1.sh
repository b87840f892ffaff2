#!/usr/bin/env bash
# U1 (session 37): TBL_SMEM=1 (BLUESHIFT_PERSISTENT_TBL_SMEM): the running layer's row of the layer table read from
# shared memory, copied there in the wait of the grid barrier before the layer, against reads of binding 0 (0).
# Count: each phase's first weight loads depend on a table word (address, dtype), and P1's norm weights on two (the
# dtype checks, then the address). The table's lines are out of L1 by then (the weights stream through it), so each is
# an L2 round trip (~0.3-0.5 us) on the critical path: ~3-4 a layer (P1 2, P2 1, P3 fold 1; P4's are issued before its
# grid wait by EARLY 2, P5's beside its staging).
# Predicted: ~1.2-2 us a layer: the 1B (16 layers, ~41 us a layer) +2.5-4%, the 3B (28) +2-3%, the 8B (32, ~88 us)
# +1.3-2%. Or even, if the driver already issues the table loads early (readonly binding).
# Greedy ids with --deterministic must be the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/u1
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/u1/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o smem$r $BS /tmp/m/m 512 128 5
    ab_bench $o tbl$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TBL_SMEM=0
  done
  python3 -c "import json; d=json.load(open('$o/smema.json')); print('  down_passes', d['decode_kernel']['down_passes'], 'staging', d['decode_kernel']['staging_floats'])"
  if [ $cfg != llama-3.2-3b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m tbl:BLUESHIFT_PERSISTENT_TBL_SMEM=0
    for v in 0 1; do
      BLUESHIFT_PERSISTENT_TBL_SMEM=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
    done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/u1.tar.xz u1
done
