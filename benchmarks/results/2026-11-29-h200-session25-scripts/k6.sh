#!/usr/bin/env bash
# K6: EARLY 2: the gate/up stream's first loads issued between the grid barrier's arrival and its wait (grid_arrive /
# grid_wait), so that their round trip overlaps the wait for the slowest workgroup instead of following it.
# Predicted: up to one round trip (~0.7 us) a layer: 1B +1.5%, 8B +0.7%; 0 if the fence after the wait waits for
# them and the wait is short. Logits identical to EARLY 0 (the same sums).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m e0:BLUESHIFT_PERSISTENT_EARLY=0 e2:BLUESHIFT_PERSISTENT_EARLY=2
stamp logits
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m e2:BLUESHIFT_PERSISTENT_EARLY=2 e1:BLUESHIFT_PERSISTENT_EARLY=1 \
  e2b:BLUESHIFT_PERSISTENT_EARLY=2
stamp 1b
tar -C /tmp -cJf $OUT/k6.tar.xz o
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m e2:BLUESHIFT_PERSISTENT_EARLY=2 e0:BLUESHIFT_PERSISTENT_EARLY=0 \
  e2b:BLUESHIFT_PERSISTENT_EARLY=2
stamp 8b
tar -C /tmp -cJf $OUT/k6.tar.xz o
