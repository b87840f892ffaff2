#!/usr/bin/env bash
# W48 (session 47): W47 put the weights-first load order out as the cause of W43's variant 39 gain (it lost: 1B
# -0.6%, 8B -3.6%; its serialized profile moved the q/k/v matvecs -8..-11% and the gated +6.7%). So this run bisects
# the chain's 5.5% swing on the 8B (W43: variant 39 +2.6% over barriers; W46/W47: the landed mode 1 -2.9%) on one
# lease: the W43 tree (bb39b98, $OLD) at 0 and 39, the next commit (51d64b8, the kept form, $OLD2) at 0 and 2 (gate +
# up -> down only there), this tree at 0 and 1. And BLUESHIFT_MV_WFIRST=1 (weights first in the q/k/v matvecs only,
# where the profile gained).
# Predicted: if W43 holds on this lease, o39 = o0 + 1..2% (1B) / + 2..3% (8B). k2 either the same as o39 (then the
# loss is in 6468604's refactor) or as c1 (then in 51d64b8's). q1: 1B +0..+1%, 8B +0..+0.5%. Ids the same.
# Carry .gl, .dev/carry, .dev/carry2 (bb39b98's blueshift), .dev/carry3 (51d64b8's).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/bsold2 && tar -C /tmp/bsold2 -xJf .dev/carry3/bundle-old2.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold2/bundle/
OLD2=/tmp/bsold2/bundle/run
echo "bundle: $BS_BUILD old: ${OLD_BUILD:-none} old2: $(tr '\n' ' ' < /tmp/bsold2/bundle/BUILD)"
mkdir -p /tmp/w48 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w48/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 o0@$OLD:BLUESHIFT_CHAIN=0 o39@$OLD:BLUESHIFT_CHAIN=39 \
    k0@$OLD2:BLUESHIFT_CHAIN=0 k2@$OLD2:BLUESHIFT_CHAIN=2 c1:BLUESHIFT_CHAIN=1 q1:BLUESHIFT_MV_WFIRST=1
  for f in $o/*-a.json; do echo "$(basename $f) $(grep -o '"barriers_per_token": [0-9.]*' $f)"; done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w48.tar.xz w48
done
