#!/usr/bin/env bash
# Patch: `w9-w11-attn-gqa.patch` is W11's tree; W9 ran the same V sums without the threshold (always grouped at 1).
# W9 (session 40): the persistent kernel's attention items by kv head (ATTN_GQA, BLUESHIFT_PERSISTENT_ATTN_GQA=1): an
# item takes the kv head's 4 query heads over its chunk, K and V loaded once for the 4, and the grid's workgroups go
# to 4x the chunks a head (splits = grid / n_kv = 16 where they were grid / n_heads = 4).
# Count: at 4,096 + 128 the item of a head covers ~1,025 positions = 9 blocks of 128 (1B, 512 wide) or 7 of 160 (8B),
# each a chain of K loads, 5 barriers and V loads; grouped, ~257 positions = 3 or 2 blocks. W7 put the 1B at 0.93 ms a
# step at 4,096 against 0.62 at 512 (+19 us a layer).
# Predicted: 4,096 + 128: 1B 970 -> ~1,150 tok/s (+15-20%), 8B 279 -> ~300 (+7%); 512 + 128: even to -1% (a chunk of
# 33 positions is one block either way; the merge folds 16 partials a head in 4 rounds where 4 took one). Registers:
# the attention phase is not the kernel's peak (session 38), so 113 / 95 should hold. SPLITS 8 beside 16.
# Greedy ids under --deterministic may part from the ungrouped form's (sums in another order) on these random-weight
# models; the token where they part is printed. Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w9
G=BLUESHIFT_PERSISTENT_ATTN_GQA
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w9/$cfg; mkdir -p $o
  benchmarks/kernel_registers.sh $BS /tmp/m/m gqa:$G=1 2>&1 | sed 's/^/  /'
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o g0_$r $BS /tmp/m/m 512 128 5 $G=0
    ab_bench $o g1_$r $BS /tmp/m/m 512 128 5 $G=1
    ab_bench $o long4k_g0_$r $BS /tmp/m/m 4096 128 3 $G=0
    ab_bench $o long4k_g1_$r $BS /tmp/m/m 4096 128 3 $G=1
    ab_bench $o long4k_g1s8_$r $BS /tmp/m/m 4096 128 3 $G=1 BLUESHIFT_PERSISTENT_SPLITS=8
  done
  ab_ids $o/ids-0.txt $BS /tmp/m/m $G=0
  ab_ids $o/ids-1.txt $BS /tmp/m/m $G=1
  cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: part at token $(python3 -c "import sys; a, b = (open(f).read().split() for f in sys.argv[1:]); print(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))" $o/ids-0.txt $o/ids-1.txt)"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w9.tar.xz w9
done
