#!/usr/bin/env bash
# W47 (session 47): why did W43's chain variant 39 (892 / 199.7 tok/s) beat the landed chain form (857 / 189) by
# 4-5%, when both record the same 67 / 131 barriers and dispatches a token? Read in the session-45 patch: variant 39's
# gate + up (the producer) ran the peeled first step (CHAIN_EARLY's default 1 was never overridden for it), whose
# weights are loaded before its x. In the plain loop, each step's x loads come first, under a branch (lanes past nw)
# with the norm's arithmetic on what they load; in-order issue then holds the step's weight loads back by an L2 round
# trip. MV_W_FIRST (matvec_f16.comp, spec constant 6; BLUESHIFT_MV_WFIRST=1) issues each step's weight loads first,
# in every F16 matvec (q/k/v with the rope, o, gate + up, down, the head).
# Predicted: w1 (barriers, weights first) +2..+4% on both models (1B f16 ~900-915, 8B f16 ~199-202), ids the same;
# c1w (chain 1, weights first) ~ W43's 892 / 199.7, c1 ~ W46's 857 / 189.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w47 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w47/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 w1:BLUESHIFT_MV_WFIRST=1 \
    c1w:BLUESHIFT_CHAIN=1,BLUESHIFT_MV_WFIRST=1 c1:BLUESHIFT_CHAIN=1
  for f in $o/*-a.json; do echo "$(basename $f) $(grep -o '"barriers_per_token": [0-9.]*' $f)"; done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w47.tar.xz w47
done
