#!/usr/bin/env bash
# W45 (session 46): every boundary of a layer chained, one more a mode (BLUESHIFT_CHAIN): 0 none, 1 gate + up -> down
# (the default; W43: 1B f16 892.2, 8B f16 199.7 against 880.6 / 194.6), 2 and o -> gate + up (W44's, never run), 3 and
# down -> the next layer's q/k/v, 4 and q/k/v -> split attention -> o (attention_split.comp ATTN_CHAIN: o waits for the
# heads' merges). The prefetch and K/V touch sinks now take a slot a layer and phase, so a read-ahead no longer takes a
# barrier of its own where the chain took one away (in W44's form the 8B's c2 kept 131 barriers a token: the barrier
# moved to before the down's read-ahead).
# Count (barriers a token, c0..c4): 1B 83, 67, 51, 36, 4; 8B 163, 131, 99, 68, 4.
# Session 45: 32 boundaries took 2.6% (8B, ~4 us each) and 16 took 1.3% (1B, ~0.9 us each) at gate + up -> down.
# Predicted: c1 as W43 (892 / 199.7); c2 +1% over c1, c3 +1.5%, c4 +2% more (attention's tails are short): 8B c4
# ~209, 1B c4 ~915. Ids the same in all five (a stale L1 line of x after down -> q/k/v would part them).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w45 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w45/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 c1:BLUESHIFT_CHAIN=1 c2:BLUESHIFT_CHAIN=2 \
    c3:BLUESHIFT_CHAIN=3 c4:BLUESHIFT_CHAIN=4
  for v in 0 1 2 3 4; do
    BLUESHIFT_CHAIN=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 7,300,4000,50000,12,99,1234 \
      --max-tokens 128 --deterministic --json 2>/dev/null |
      python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" \
      > $o/ids2-c$v.txt
  done
  md5sum $o/ids2-*.txt
  for f in $o/c*-a.json; do echo "$(basename $f) $(grep -o '"barriers_per_token": [0-9.]*' $f)"; done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w45.tar.xz w45
done
