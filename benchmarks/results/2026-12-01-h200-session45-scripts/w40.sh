#!/usr/bin/env bash
# W40 (session 45): decode's F16 down projection chained to gate + up (BLUESHIFT_CHAIN, matvec.glsl MV_CHAIN): no
# barrier between the two dispatches; down's workgroups load their first weights, then spin on a counter that gate + up's
# workgroups raise once their rows of h are written. 1B and 8B f16, 512 + 128, 5 reps, alternated twice.
# Count: session 44's calibration put each dependent dispatch at 6-10 us over its bytes' streaming time (launch, ramp,
# tail). A chained boundary keeps the tail's idle slots busy with down's first loads and hides the launch; the wait's
# spin and the counter's atomics cost back some. Predicted: 2-4 us a layer saved, i.e. 8B f16 (32 layers, 5.13 ms a
# step) +1.2..+2.5% (194.7 -> 197-200 tok/s), 1B f16 (16 layers, 1.14 ms) +3..+5% (880 -> 905-925). Ids the same (the
# sums are the same). If it wins, the other four boundaries of a layer (q/k/v -> attention -> o -> gate + up, down ->
# the next q/k/v) are next.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w40 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w40/$cfg-f16; mkdir -p $o
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 chain: nochain:BLUESHIFT_CHAIN=0
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w40.tar.xz w40
done
