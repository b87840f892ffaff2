#!/usr/bin/env bash
# W50 (session 47): W49's p0 (barriers, gate + up's first step peeled with its weights loaded first) beat the
# barrier default on both models (1B f16 890.3 -> 903.9, 8B 195.0 -> 197.6) and is now the default (mask 4, mode 2).
# This run: the new default against the old (BLUESHIFT_MV_WFIRST=0) on the 1B, 3B and 8B f16, and the peel on more of
# the matvecs: + o / down (mask 6), + q/k/v (5), + the head (12).
# Predicted: d = n + 1.2..1.6% on the 1B and 8B (W49), 3B + 1..2%; 6, 5, 12: within +-1% of d (W48's q/k/v in every
# step was -0.2%). Ids the same.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w50 $OUT
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w50/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 d:BLUESHIFT_CHAIN=0 n:BLUESHIFT_MV_WFIRST=0 d6:BLUESHIFT_MV_WFIRST=6 \
    d5:BLUESHIFT_MV_WFIRST=5 d12:BLUESHIFT_MV_WFIRST=12
  python3 - $o/d-a.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("d-a: %.1f tok/s, %.0f GB/s, %.1f%% of the measured %.0f GB/s peak, floor %.1f tok/s" % (
    d["decode_tok_s"], d["achieved_gb_s"], d["pct_of_peak"], d["peak_gb_s"], d["floor_tok_s"]))
PY
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w50.tar.xz w50
done
