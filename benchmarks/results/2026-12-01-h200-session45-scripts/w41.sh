#!/usr/bin/env bash
# W41 (session 45): why W40's chained down lost on the 1B f16 (867.4 against 882.7 tok/s) and won on the 8B f16 (197.6
# against 195.0). BLUESHIFT_CHAIN's bits (model.cpp): 1 chains, 2 polls the counter with a coherent load instead of an
# atomic, 4 waits before the first weights' loads, 8 keeps the barrier (the chain's kernels and atomics, no overlap).
# Count: the 1B's down has 1,024 workgroups, about all resident at once; each spins with an atomic on one L2 address,
# which queues the producers' last signals (and the consumers' own reset atomics) behind the polls.
# Predicted:
#   9 (barrier kept) against 0: the mechanism's cost alone, -0.3..-1% on both.
#   3 (load poll) against 1: 1B +1..+3% (at or above 0), 8B +0..+1%.
#   5 (wait first) against 1: -0.5..-1% on the 8B (the early loads are the overlap).
# Ids the same in all. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w41 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w41/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 c0:BLUESHIFT_CHAIN=0 c1:BLUESHIFT_CHAIN=1 c3:BLUESHIFT_CHAIN=3 \
    c5:BLUESHIFT_CHAIN=5 c9:BLUESHIFT_CHAIN=9
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w41.tar.xz w41
done
