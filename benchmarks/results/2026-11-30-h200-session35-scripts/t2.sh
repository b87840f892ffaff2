#!/usr/bin/env bash
# T2 (session 35): DOWN_STREAM (BLUESHIFT_PERSISTENT_DOWN_STREAM=1): the down projection's (row pair, step) units in
# one contiguous run a subgroup, the Q4_K words a step ahead across pairs, each pair's partial sums added into x by
# float atomics where a run leaves it. T1 fitted "a step ~ one loaded round trip, a cold task start ~ one more" to
# DOWN_SPLIT's losses. Count (8B q4_k_m, 2,640 subgroups): 2,048 pairs x 14 steps = 28,672 units, runs of 10-11
# against 14 steps now; one cold start a run, as now; ~4,700 atomic adds a layer (about 2 a row) against DOWN_SPLIT
# 14's 57,344.
# Predicted: 8B P5 0.569 -> ~0.46 ms a step (-3 steps of ~1.1 us on 32 layers), +3-4% tok/s; the 1B (TEAM 2, 1,024
# pairs x 8 steps on 2,112 subgroups: 4 steps either way) even to +0.5%; the 3B (dim 3072, ffn 8192: 1,536 pairs x 8
# on 2,112: 6 steps against 8 at TEAM 1) +2%; qwen2.5-1.5b (1536, 8960: 768 pairs x 9 on 1,584: 5 against 9/2 rounded
# up at TEAM 2) ~even.
# Carry .gl and .dev/carry (26a42df + t2-down-stream.patch).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t2
for cfg in llama-3.1-8b llama-3.2-1b llama-3.2-3b qwen2.5-1.5b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t2/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  ab_bench $o base1 $BS /tmp/m/m 512 128 5
  ab_bench $o stream1 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DOWN_STREAM=1
  ab_bench $o base2 $BS /tmp/m/m 512 128 5
  ab_bench $o stream2 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DOWN_STREAM=1
  if [ $cfg = llama-3.1-8b ] || [ $cfg = llama-3.2-1b ]; then
    benchmarks/kernel_registers.sh $BS /tmp/m/m stream:BLUESHIFT_PERSISTENT_DOWN_STREAM=1
    for s in 0 1; do
      echo "== phases, DOWN_STREAM $s"
      BLUESHIFT_PERSISTENT_DOWN_STREAM=$s benchmarks/persistent_phases.sh $BS /tmp/m/m 32 2>/dev/null | head -9
    done
    # Greedy ids, 64 tokens, stream against base (both under the o fold's float atomics, so they may part late).
    for v in 0 1; do
      BLUESHIFT_PERSISTENT_DOWN_STREAM=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000,31000,9 \
        --max-tokens 64 --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/ids-$v.txt
    done
    cmp -s $o/ids-0.txt $o/ids-1.txt && echo "  greedy ids: same" || echo "  greedy ids: differ"
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t2.tar.xz t2
done
