#!/usr/bin/env bash
# T7 (session 36): FENCE_KIND (BLUESHIFT_PERSISTENT_FENCE_KIND): a grid barrier's fences narrowed. 1: the fence after
# the wait an acquire alone on buffer memory (memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer,
# gl_SemanticsAcquire)) where memoryBarrier() is acquire and release on every storage class; 2: the count's fence a
# release alone too. T1: a fence in every invocation with a workgroup barrier ~0.5 us, a count alone 0.4.
# Predicted: if the driver makes an acquire alone cheaper than a full fence (no wait for outstanding writes), 1 takes
# ~0.2-0.3 us off each barrier and group wait: the 1B +2-3%, the 3B +1-1.5%; 2 no more (the release must still wait
# for the workgroup's writes). Else even. Greedy ids with --deterministic the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t7
for cfg in llama-3.2-1b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t7/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    for k in 0 1 2; do ab_bench $o kind$k$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_FENCE_KIND=$k; done
  done
  if [ $cfg = llama-3.2-1b ]; then
    for k in 0 2; do
      BLUESHIFT_PERSISTENT_FENCE_KIND=$k $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --deterministic --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$k.txt
    done
    cmp -s $o/ids-0.txt $o/ids-2.txt && echo "  greedy ids --deterministic: same ($(wc -w < $o/ids-2.txt))" || echo "  greedy ids: DIFFER"
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t7.tar.xz t7
done
