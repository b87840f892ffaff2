#!/usr/bin/env bash
# W46 (session 46): W45 found two things. (1) c1 (gate + up -> down, the default) at 851 / 188.6 tok/s, below c0
# (878 / 194.6) and below W43's 892 / 199.7 for the same form; (2) modes 2-4 parted the greedy ids at token 1-3.
# (2)'s cause, as read: stale L1 lines. A consumer's plain loads of x hit lines an earlier dispatch of the chain
# loaded on the same SM (o's residual add loads x's lines, gate + up then reads x there), and memoryBarrierBuffer does
# not drop them. A memory-model form (nonprivate, MakeVisible) wrote NaNs on lavapipe and was put back; modes 2-4 now
# need BLUESHIFT_CHAIN_UNSAFE=1.
# This run: the session-45 tree (6468604, $OLD) against this one, c0 and c1 each, to find whether (1) came with this
# session's change or was in 6468604 already (W44 never ran, so its form of c1 was never measured).
# Predicted: o1 ~ W43's 892 / 199.7 if the regression is this session's, else ~851 / 188.6 like c1.
# Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD old: ${OLD_BUILD:-none}"
mkdir -p /tmp/w46 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w46/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 o0@$OLD:BLUESHIFT_CHAIN=0 o1@$OLD:BLUESHIFT_CHAIN=1 \
    c1:BLUESHIFT_CHAIN=1
  for f in $o/*-a.json; do echo "$(basename $f) $(grep -o '"barriers_per_token": [0-9.]*' $f)"; done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w46.tar.xz w46
done
