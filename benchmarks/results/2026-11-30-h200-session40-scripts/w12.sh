#!/usr/bin/env bash
# W12 (session 40): the persistent kernel's attention blocks twice and four times as long (TPP, spec constant 25,
# BLUESHIFT_PERSISTENT_ATTN_TPP: invocations a position in the scores; a block of positions is wg / TPP).
# Count: an item's blocks run one after another, each a chain of K loads, 5 barriers and V loads. At 512 + 128 a head's
# chunk is 129-160 positions (4 chunks a head): 2 blocks of 128 on the 1B (512 wide), 1 of 160 on the 8B (640 wide).
# At 4,096 + 128, ~1,025-1,056: 9 blocks (1B) and 7 (8B). TPP 2 makes them 1 and 5 (1B), 1 and 4 (8B).
# Predicted: 512 + 128: 1B +3-5% at TPP 2, 8B even; 4,096 + 128: 1B +8-12%, 8B +6-10%. TPP 1 (16 or 32 key loads an
# invocation) below TPP 2 at 512. Registers near 113 / 95 (the scores' loop is what grows). Greedy ids the same or
# parting late (the scores' sums in another order). Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w12
T=BLUESHIFT_PERSISTENT_ATTN_TPP
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w12/$cfg; mkdir -p $o
  benchmarks/kernel_registers.sh $BS /tmp/m/m tpp2:$T=2 tpp1:$T=1 2>&1 | sed 's/^/  /'
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    for n in 4 2 1; do ab_bench $o t${n}_$r $BS /tmp/m/m 512 128 5 $T=$n; done
  done
  for n in 4 2 1; do ab_bench $o long4k_t${n} $BS /tmp/m/m 4096 128 3 $T=$n; done
  ab_ids $o/ids-4.txt $BS /tmp/m/m $T=4
  ab_ids $o/ids-2.txt $BS /tmp/m/m $T=2
  cmp -s $o/ids-4.txt $o/ids-2.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: part at token $(python3 -c "import sys; a, b = (open(f).read().split() for f in sys.argv[1:]); print(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))" $o/ids-4.txt $o/ids-2.txt)"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w12.tar.xz w12
done
