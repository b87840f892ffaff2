#!/usr/bin/env bash
# T2 (session 36): POLL_COUNT=1 (BLUESHIFT_PERSISTENT_POLL_COUNT): grid barriers whose workgroups poll the arrival
# count itself (b x grid), adding their arrival without waiting for it back, against the release word that the last
# arriver raises once its add comes back (a round trip more). T1 measured a grid barrier at 1.32-1.51 us inside the
# kernel and a count alone (fence, workgroup barrier, add) at 0.36-0.46.
# Predicted: a barrier ~0.4 us cheaper (one L2 round trip): the 1B (65 barriers a step) +3.5%, the 8B (129) +1.8%;
# or slower, if polls on the line the adds land on slow the adds (6.5 us a barrier on the H100 in session 6's scheme).
# Greedy ids with --deterministic (no float atomics) must be the same. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t2
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t2/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o base$r $BS /tmp/m/m 512 128 5
    ab_bench $o count$r $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_POLL_COUNT=1
  done
  if [ $cfg != llama-3.2-3b ]; then
    for e in 0 4; do
      ab_bench $o c1e$e $BS /tmp/m/m 16 64 3 BLUESHIFT_PERSISTENT_POLL_COUNT=1 BLUESHIFT_PERSISTENT_EXTRA_SYNC=$e
    done
    for v in 0 1; do
      for d in "" --deterministic; do
        BLUESHIFT_PERSISTENT_POLL_COUNT=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
          --max-tokens 64 $d --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v$d.txt
      done
    done
    cmp -s $o/ids-0--deterministic.txt $o/ids-1--deterministic.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids: same" || echo "  greedy ids: differ (float atomics)"
    wc -w $o/ids-*.txt | head -4
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t2.tar.xz t2
done
