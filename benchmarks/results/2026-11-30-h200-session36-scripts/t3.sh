#!/usr/bin/env bash
# T3 (session 36): PRE (BLUESHIFT_PERSISTENT_PRE): a subgroup's first Q4_K step of the down projection (bit 0) and of
# the next layer's q/k/v (bit 1) loaded between the arrival and the wait at the grid barrier that opens the phase, as
# EARLY 2 does for gate/up (which gave the 1B +1.2%, the 8B +0.9%: session 25, K7). $OLD = b8da5bd (POLL_COUNT, no
# PRE): the code-shape check for PRE 0.
# Predicted: each bit takes one DRAM round trip (~0.6 us) off the phase's start on the critical path: bit 0 the 1B
# +1.3%, the 8B +0.35% (half its down projections are Q6_K, which bit 0 leaves); bit 1 the 1B +1.3%, the 8B +0.7%;
# both together the sum, unless the 8B spills at its 96-register cap (16 registers held through the staging).
# Greedy ids with --deterministic: the same. Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t3
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t3/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o old$r $OLD /tmp/m/m 512 128 5
    for v in 0 1 2 3; do ab_bench $o pre$v$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_PRE=$v; done
  done
  if [ $cfg != llama-3.2-3b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m pre3:BLUESHIFT_PERSISTENT_PRE=3
    for v in 0 3; do
      BLUESHIFT_PERSISTENT_PRE=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
    done
    cmp -s $o/ids-0.txt $o/ids-3.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t3.tar.xz t3
done
