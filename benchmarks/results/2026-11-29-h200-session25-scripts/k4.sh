#!/usr/bin/env bash
# K4: COPY_U (spec constant 14): the down projection's input staged with 16 loads in flight an invocation (was 8: two
# round trips to L2 for the 1B's 8192 floats at 512 wide, four for the 8B's passes of 7936 / 6400... at 8, two each).
# EARLY now on above hidden size 2048 only (K3). new = this tree; c8 = COPY_U 8 (the old staging), c32 = 32.
# Predicted: one L2 round trip (~1 us) less a pass: 1B -16 us a step (+2%), 8B -64 us (+2%), qwen2.5-1.5b (8960 floats
# at 384 wide: 3 -> 2 round trips) +2%. Then the head's shape on the 1B (BLUESHIFT_HEAD_WG x HEAD_ROWS): where 2.5 TB/s
# of 4.4 goes.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b qwen2.5-1.5b; do
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m c8:BLUESHIFT_PERSISTENT_COPY_U=8 c32:BLUESHIFT_PERSISTENT_COPY_U=32 \
    c8b:BLUESHIFT_PERSISTENT_COPY_U=8
  stamp $cfg
  tar -C /tmp -cJf $OUT/k4.tar.xz o
done
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m h32x1:BLUESHIFT_HEAD_ROWS=1 h64x2:BLUESHIFT_HEAD_WG=64 \
  h64x4:BLUESHIFT_HEAD_WG=64,BLUESHIFT_HEAD_ROWS=4 h128x4:BLUESHIFT_HEAD_WG=128,BLUESHIFT_HEAD_ROWS=4 \
  h32x4:BLUESHIFT_HEAD_ROWS=4
stamp head
tar -C /tmp -cJf $OUT/k4.tar.xz o
