#!/usr/bin/env bash
# W44 (session 45): the chain in its kept form (W43's c39: atomicLoad poll, wait before any load, a fill zeroing the
# counters before the layers), now also o -> gate + up (the o projection signals, gate + up waits on it and signals
# down). BLUESHIFT_CHAIN: 0 none, 1 gate + up -> down only (the default; W43: 1B f16 892.2, 8B f16 199.7 against
# 880.6 / 194.6), 2 both. Prepared in session 45, whose device time ran out before it ran.
# Count: one more boundary a layer chained (barriers a token, c0 -> c1 -> c2: 1B 83 -> 67 -> 51, 8B 163 -> 131 -> 99).
# The o projection is small (8B 32 MB, 1B 8 MB), so its tail is a larger share of its time.
# Predicted: c1 as W43's c39; c2 +1..+2% over c1 on both (8B 201.5-204, 1B 900-910). Ids the same.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w44 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w44/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 c1:BLUESHIFT_CHAIN=1 c2:BLUESHIFT_CHAIN=2
  for v in 0 1 2; do
    BLUESHIFT_CHAIN=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 7,300,4000,50000,12,99,1234 \
      --max-tokens 128 --deterministic --json 2>/dev/null |
      python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" \
      > $o/ids2-c$v.txt
  done
  md5sum $o/ids2-*.txt
  grep -h -o '"barriers_per_token": [0-9]*' $o/c*-a.json
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w44.tar.xz w44
done
