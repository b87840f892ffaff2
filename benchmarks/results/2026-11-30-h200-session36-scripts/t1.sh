#!/usr/bin/env bash
# T1 (session 36): what one synchronization costs inside the persistent decode kernel. EXTRA_SYNC=N adds N at each
# layer's end (decode_persistent.comp): kind 0 (N) grid barriers, kind 1 (256 + N) counts alone (fence, workgroup
# barrier, atomic), kind 2 (512 + N) fences with a workgroup barrier. The kernel's GPU ms a step (16-token prompt, 64
# tokens, 3 reps), working and with every phase skipped (BLUESHIFT_PERSISTENT_SKIP=63). Cost = (ms(N) - ms(0)) /
# (N x layers). $OLD = a6a10b3's code (no EXTRA_SYNC): the code-shape check at 512 + 128, medians of 5.
# Predicted: a grid barrier 1.5-2.5 us working (the 1B's skeleton ran 0.164 ms for its ~80 synchronizations), the
# count ~1 us, the fence ~0.2 us. Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t1
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t1/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  ab_bench $o olda $OLD /tmp/m/m 512 128 5
  ab_bench $o newa $BS /tmp/m/m 512 128 5
  ab_bench $o oldb $OLD /tmp/m/m 512 128 5
  ab_bench $o newb $BS /tmp/m/m 512 128 5
  for skip in 0 63; do
    for e in 0 4 8 260 516; do
      ab_bench $o s${skip}e$e $BS /tmp/m/m 16 64 3 BLUESHIFT_PERSISTENT_SKIP=$skip BLUESHIFT_PERSISTENT_EXTRA_SYNC=$e
    done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t1.tar.xz t1
done
