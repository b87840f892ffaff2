#!/usr/bin/env bash
# O3 (session 29): teams in the q/k/v phase. Apply next-o3.patch (git apply, on 57a88bb or
# later), build, bundle. QKV_TEAM subgroups share a q/k/v task's columns (as TEAM does for o and down), member 0 adds
# the shares, then bias, rotation and store. BLUESHIFT_PERSISTENT_QKV_TEAM=N; 1 (the default) is the loop as it was.
# Why: N7 found the time following each subgroup's dependent steps. The 8B's q/k/v phase (3,072 tasks, 2,640
# subgroups at 640) takes 2 rounds of 4 steps; at QKV_TEAM 2, 3 rounds of 2 (1,320 teams); at 4, 5 rounds of 1.
# Predicted: the 8B's P1 work (SKIP=30: P1 alone) 0.335 -> 0.26-0.28 ms a step, decode +1.5-2.5%; the 3B (2,560
# tasks on 2,112 subgroups at 512: 2 x 3 steps; 3 x 2 at 2; 5 x 1 at 4) within +-1%; the 1B (1 round of 2 steps
# already) even to -1%. Logits: rounding-level (the two halves' sums are added in a different order).
# Lavapipe: test_persistent's 5 QKV_TEAM cases (in the patch) passed with the other 28 (33/33).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
Q=BLUESHIFT_PERSISTENT_QKV_TEAM
benchmarks/kernel_registers.sh $BS /tmp/st/m t2:$Q=2 w640:BLUESHIFT_PERSISTENT_WG=640 t2w640:$Q=2,BLUESHIFT_PERSISTENT_WG=640 \
  | tee /tmp/o/stats.txt
BENCH_WORK=/tmp/lg timeout 80 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: t2:$Q=2 t4:$Q=4 | tee /tmp/o/logits.txt
stamp logits
timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m t2:$Q=2 t4:$Q=4 p1:BLUESHIFT_PERSISTENT_SKIP=30 \
  p1t2:BLUESHIFT_PERSISTENT_SKIP=30,$Q=2 p1t4:BLUESHIFT_PERSISTENT_SKIP=30,$Q=4
stamp 8b
tar -C /tmp -cJf $OUT/o3.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m t2:$Q=2 t4:$Q=4
stamp 3b
timeout 80 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m t2:$Q=2
stamp 1b
tar -C /tmp -cJf $OUT/o3.tar.xz o
