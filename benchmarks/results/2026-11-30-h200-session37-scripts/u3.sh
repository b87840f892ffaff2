#!/usr/bin/env bash
# U3 (session 37): FREQ_SMEM=1 (BLUESHIFT_PERSISTENT_FREQ_SMEM): P1's RoPE frequencies read from shared memory (s_q,
# copied at the barrier before each layer beside TBL_SMEM's row), against lane 0 of each q or k task reading binding 5
# after the task's sums (0). On top of 70b08ad (TBL_SMEM).
# Count: an L2 round trip (~0.3-0.5 us) at the end of each q / k task, after its subgroup sum: on the critical path of
# P1's last tasks, once a layer. Predicted: 1B +0.8-1.2%, 3B +0.6-1%, 8B +0.4-0.6%. Or even, if the driver hoists the
# load above the task's math (a readonly binding, an index known at the task's start).
# Greedy ids with --deterministic must be the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/u3
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/u3/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o smem$r $BS /tmp/m/m 512 128 5
    ab_bench $o nosmem$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_FREQ_SMEM=0
  done
  if [ $cfg != llama-3.2-3b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m nosmem:BLUESHIFT_PERSISTENT_FREQ_SMEM=0
    for v in 0 1; do
      BLUESHIFT_PERSISTENT_FREQ_SMEM=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
    done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    wc -w $o/ids-*.txt | head -2
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/u3.tar.xz u3
done
