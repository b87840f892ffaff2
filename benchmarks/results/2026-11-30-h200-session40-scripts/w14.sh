#!/usr/bin/env bash
# W14 (session 40): ATTN_TPP on a second head_dim-64 shape, Qwen2.5-0.5B's (qwen2.5-0.5b-shape.json here: hidden 896,
# FFN 4864, 24 layers, 14 heads on 2 kv heads of 64; qwen2.5-1.5b.json's other fields), q4_k_m. The default (TPP 2 at
# head_dim 64) against TPP 4, 512 + 128 and 4,096 + 128, in one command on the 3dcd2cb bundle.
# Count: 14 heads on a grid of 132 make 9 chunks a head: at 512 + 128 a chunk is 57-72 positions, one block either
# way (128 at TPP 4); at 4,096 + 128 ~456-470: 4 blocks at TPP 4, 2 at TPP 2.
# Predicted: 512 + 128 even (no blocks saved; each invocation's 8 key pieces, as on the 1B); 4,096 + 128 +3-5%.
# Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w14
T=BLUESHIFT_PERSISTENT_ATTN_TPP
rm -rf /tmp/m; mkdir -p /tmp/m
ab_model $BS benchmarks/results/2026-11-30-h200-session40-scripts/qwen2.5-0.5b-shape.json q4_k_m /tmp/m
o=/tmp/w14/qwen2.5-0.5b; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
for r in a b; do
  ab_bench $o default_$r $BS /tmp/m/m 512 128 5
  ab_bench $o tpp4_$r $BS /tmp/m/m 512 128 5 $T=4
done
ab_bench $o long4k_default $BS /tmp/m/m 4096 128 3
ab_bench $o long4k_tpp4 $BS /tmp/m/m 4096 128 3 $T=4
stamp "done"
tar -C /tmp -cJf $OUT/w14.tar.xz w14
