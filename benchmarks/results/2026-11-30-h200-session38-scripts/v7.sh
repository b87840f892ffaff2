#!/usr/bin/env bash
# V7: V6's DTYPES A/B on the 1B and 3B q4_k_m (V6 ran the 8B: 365.1 / 365.2 tok/s against 362.9 / 362.7, +0.6%, the
# registers unchanged). Predicted: +0-0.6% (less code in the kernel; no register change). Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v7
for cfg in llama-3.2-1b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/v7/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o mask$r $BS /tmp/m/m 512 128 5
    ab_bench $o all$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DTYPES_ALL=1
  done
  for v in 0 1; do ab_ids $o/ids-$v.txt $BS /tmp/m/m BLUESHIFT_PERSISTENT_DTYPES_ALL=$v; done
  cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/v7.tar.xz v7
done
