#!/usr/bin/env bash
# L1: PRIME (spec constant 14: the q/k/v, o and down phases' first Q4_K words loaded between grid_arrive and grid_wait)
# and the barrier fold (grid_barrier = grid_wait(grid_arrive()); the last arriver no longer polls the release it raised
# at a split barrier). $BS is the tree with both (PRIME off by default); $OLD is the tree with PRIME only (the split
# barrier's last arriver polls).
# Predicted: PRIME 1B +3%, 8B +2%; the fold +0.3% with PRIME 0 (one split barrier a layer) and +1% with PRIME 1 (four).
# Logits identical between all four (the same words, the same sums).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 70 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m p0: p1:BLUESHIFT_PERSISTENT_PRIME=1 a0@$OLD: a1@$OLD:BLUESHIFT_PERSISTENT_PRIME=1
timeout 90 benchmarks/logits_ab.sh $BS llama-3.1-8b q4_k_m p0: p1:BLUESHIFT_PERSISTENT_PRIME=1 a1@$OLD:BLUESHIFT_PERSISTENT_PRIME=1
stamp logits
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m p1:BLUESHIFT_PERSISTENT_PRIME=1 a0@$OLD: \
  a1@$OLD:BLUESHIFT_PERSISTENT_PRIME=1 p1b:BLUESHIFT_PERSISTENT_PRIME=1
stamp 1b
tar -C /tmp -cJf $OUT/l1.tar.xz o
timeout 230 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m p1:BLUESHIFT_PERSISTENT_PRIME=1 a0@$OLD: \
  a1@$OLD:BLUESHIFT_PERSISTENT_PRIME=1 p1b:BLUESHIFT_PERSISTENT_PRIME=1
stamp 8b
tar -C /tmp -cJf $OUT/l1.tar.xz o
