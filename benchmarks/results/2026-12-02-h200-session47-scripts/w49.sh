#!/usr/bin/env bash
# W49 (session 47): W48 reproduced W43 on one lease (8B f16: bb39b98 at 39 199.3 against its 0 at 194.4; 1B 888.7
# against 878.4) and put the loss in the next commit, 51d64b8 (its FFN-only chain 189.2 / 851.3). That commit records
# the same dispatches, barriers and chain links; what it changed in what runs is gate + up's code: in bb39b98 the
# producer took the peeled first step (CHAIN_EARLY's default, never overridden for it: the first step's weights
# loaded, then x, then its math, then the plain loop). MV_W_FIRST=2 (BLUESHIFT_MV_WFIRST=4, _MODE=2) is that peeled
# step, on gate + up only.
# Predicted: p1 (chain 1 + the peel) = o39 within 0.5%; p0 (barriers + the peel) = c0 + 0..+1% (W41's bit 9: the
# chain's kernels with the barrier kept, 8B +1.0%); g1 (chain 1, gate + up weights first in every step) = p1 on the
# 1B (one step at k 2,048), under it on the 8B. Ids the same.
# Carry .gl, .dev/carry, .dev/carry2 (bb39b98's blueshift).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD old: ${OLD_BUILD:-none}"
mkdir -p /tmp/w49 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w49/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 c1:BLUESHIFT_CHAIN=1 o39@$OLD:BLUESHIFT_CHAIN=39 \
    p1:BLUESHIFT_CHAIN=1,BLUESHIFT_MV_WFIRST=4,BLUESHIFT_MV_WFIRST_MODE=2 \
    p0:BLUESHIFT_CHAIN=0,BLUESHIFT_MV_WFIRST=4,BLUESHIFT_MV_WFIRST_MODE=2 g1:BLUESHIFT_CHAIN=1,BLUESHIFT_MV_WFIRST=4
  for f in $o/*-a.json; do echo "$(basename $f) $(grep -o '"barriers_per_token": [0-9.]*' $f)"; done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w49.tar.xz w49
done
