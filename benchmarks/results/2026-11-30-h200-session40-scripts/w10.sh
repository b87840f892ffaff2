#!/usr/bin/env bash
# Patch: `w10-attn-gqa-v-by-head.patch` (on 9c96608).
# W10 (session 40): ATTN_GQA after W9, reworked. W9's form (each invocation's V sums for all 4 heads, 4 accumulators;
# the 4 heads' partials summed in 4 passes) won at 4,096 + 128 (1B 976 -> 1,059 tok/s, 8B 280 -> 299) and lost at
# 512 + 128 (1B 1,387 -> 1,268, 8B 370 -> 335), with 128 registers on the 1B (113) and a 64-byte spill on the 8B.
# Now: a group of hd4 invocations takes one head's V sums (one accumulator), the partials go out in one pass, and
# BLUESHIFT_PERSISTENT_ATTN_GQA=N groups only where a head's chunk would pass N positions (1: always; 256: not at 512,
# whose head chunks are 129).
# Predicted: registers back near 113 / 95 with no spill; 4,096 + 128 at GQA 1 as W9 or better (fewer barriers): 1B
# ~1,070, 8B ~300; 512 + 128: GQA 256 even with GQA 0 (the code is there, the path not taken), GQA 1 -3..-5% (the
# merge of 16 partials a head and chunks of 33). 1,024 and 2,048 + 128 show where grouping starts to win.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w10
G=BLUESHIFT_PERSISTENT_ATTN_GQA
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w10/$cfg; mkdir -p $o
  benchmarks/kernel_registers.sh $BS /tmp/m/m gqa1:$G=1 gqa256:$G=256 2>&1 | sed 's/^/  /'
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    for n in 0 1 256; do ab_bench $o g${n}_$r $BS /tmp/m/m 512 128 5 $G=$n; done
    for n in 0 1; do ab_bench $o long4k_g${n}_$r $BS /tmp/m/m 4096 128 3 $G=$n; done
  done
  for len in 1024 2048; do
    for n in 0 1; do ab_bench $o len${len}_g${n} $BS /tmp/m/m $len 128 3 $G=$n; done
  done
  ab_ids $o/ids-0.txt $BS /tmp/m/m $G=0
  ab_ids $o/ids-1.txt $BS /tmp/m/m $G=1
  cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: part at token $(python3 -c "import sys; a, b = (open(f).read().split() for f in sys.argv[1:]); print(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))" $o/ids-0.txt $o/ids-1.txt)"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w10.tar.xz w10
done
