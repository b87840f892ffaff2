#!/usr/bin/env bash
# N4: dot2's Q6_K rows (q4_k_m's attn_v and ffn_down in half the layers: llama.cpp's promoted layers) in 8-byte loads,
# a step ahead of their math (Q6_PIPE 2, now the default; base), against the word loads with each step's loads then its
# math (q0, the old loop) and 8-byte loads not ahead (q1). p5*: the down phase's work alone (SKIP=15: P1-P4 skipped,
# wrong logits), the kernel's time a step.
# Predicted: the 8B's Q6_K down layers' P5 from ~27 to ~20 us: kernel -0.1 ms, decode +3%; 1B and 3B +2-3%; logits
# identical (the same arithmetic in the same order).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
Q=BLUESHIFT_PERSISTENT_Q6_PIPE
benchmarks/kernel_registers.sh $BS /tmp/st/m q0:$Q=0 q1:$Q=1 w640:BLUESHIFT_PERSISTENT_WG=640 \
  q0w640:$Q=0,BLUESHIFT_PERSISTENT_WG=640 q1w640:$Q=1,BLUESHIFT_PERSISTENT_WG=640 | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 80 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: q0:$Q=0 | tee /tmp/o/logits.txt
stamp logits
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m q0:$Q=0 q1:$Q=1 p5:BLUESHIFT_PERSISTENT_SKIP=15 \
  p5q0:BLUESHIFT_PERSISTENT_SKIP=15,$Q=0
stamp 8b
tar -C /tmp -cJf $OUT/n4.tar.xz o
timeout 80 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m q0:$Q=0 q1:$Q=1
stamp 1b
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m q0:$Q=0
stamp 3b
tar -C /tmp -cJf $OUT/n4.tar.xz o
