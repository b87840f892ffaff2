#!/usr/bin/env bash
# W43 (session 45): W42 put the atomicLoad poll (c3) at 1B f16 874.9 / 8B f16 198.55 tok/s against 878.2 / 194.6
# unchained, ids the same; the chain's kernels with the barrier kept (c9) at 861.4 / 196.25: on the 1B the kernels
# themselves cost 1.9%, the overlap gains 1.6%. What in them costs: the peeled first step (bit 4 now waits first and
# runs the plain loop), or each consumer's atomicAdd round trip for the reset (bit 32: a fill zeroes the counters
# before each step instead).
# Predicted: c7 against c3: 1B +1..+2%, 8B -0.5..+0.5%. c35 against c3: +0.3..+1% on both. Ids the same.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w43 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w43/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 c3:BLUESHIFT_CHAIN=3 c7:BLUESHIFT_CHAIN=7 \
    c35:BLUESHIFT_CHAIN=35 c39:BLUESHIFT_CHAIN=39
  for v in 0 3 7 35 39; do
    BLUESHIFT_CHAIN=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 7,300,4000,50000,12,99,1234 \
      --max-tokens 128 --deterministic --json 2>/dev/null |
      python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" \
      > $o/ids2-c$v.txt
  done
  md5sum $o/ids2-*.txt
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w43.tar.xz w43
done
