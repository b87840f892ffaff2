#!/usr/bin/env bash
# U5 (session 37): ATT_PRE by kind (BLUESHIFT_PERSISTENT_ATT_PRE: bit 0 K, bit 1 V). U4's both-at-once (3) raised the
# kernel's registers to the cap (1B 112 -> 128, 8B 95 -> 96 with 224 bytes spilled: -14%), so the attention code's 16
# f16vec4s had become the kernel's register peak. One kind is 8 f16vec4s (16 registers).
# Predicted: V alone (2) or K alone (1) ~1 round trip an item: 1B +0.8-1.2%, 8B +0.4-0.7%, if the registers stay under
# the matvecs' peak (1B 112, 8B 95); a spill or a rise to the cap loses as in U4.
# Greedy ids with --deterministic must be the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/u5
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/u5/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  benchmarks/kernel_registers.sh $BS /tmp/m/m k:BLUESHIFT_PERSISTENT_ATT_PRE=1 v:BLUESHIFT_PERSISTENT_ATT_PRE=2 \
    none:BLUESHIFT_PERSISTENT_ATT_PRE=0
  for r in a b; do
    for v in 0 1 2; do ab_bench $o pre$v$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_ATT_PRE=$v; done
  done
  for v in 0 1 2; do
    BLUESHIFT_PERSISTENT_ATT_PRE=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
      --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
  done
  cmp -s $o/ids-0.txt $o/ids-1.txt && cmp -s $o/ids-0.txt $o/ids-2.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/u5.tar.xz u5
done
