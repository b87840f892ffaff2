#!/usr/bin/env bash
# K5: does the DRAM access order bind the Q4_K phases? PROBE 32 (timing only, wrong logits) has the gate/up and down
# phases read their Q4_K blocks as if laid out [4-block run][row][4 blocks]: at one step the grid's subgroups read one
# contiguous range, where in the model's layout they read 576-byte runs 2304 bytes apart (8B; 1152 apart on the 1B).
# With and without the math (SKIP 64: the loads alone). Predicted: if DRAM row-buffer locality binds, the loads-alone
# kernel falls by 10-30% (P4 + P5 are ~55% of it); if not, under 2%. Then the 3B under this tree's defaults against
# EARLY 0 / COPY_U 8 (both on above hidden size 2048 since K3 / K4, measured on the 8B only).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.1-8b llama-3.2-1b; do
  timeout 200 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m tiled:BLUESHIFT_PERSISTENT_PROBE=32 \
    lo:BLUESHIFT_PERSISTENT_SKIP=64 lo-tiled:BLUESHIFT_PERSISTENT_SKIP=64,BLUESHIFT_PERSISTENT_PROBE=32
  stamp $cfg
  tar -C /tmp -cJf $OUT/k5.tar.xz o
done
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m e0c8:BLUESHIFT_PERSISTENT_EARLY=0,BLUESHIFT_PERSISTENT_COPY_U=8 \
  c8:BLUESHIFT_PERSISTENT_COPY_U=8 e0:BLUESHIFT_PERSISTENT_EARLY=0
stamp 3b
tar -C /tmp -cJf $OUT/k5.tar.xz o
