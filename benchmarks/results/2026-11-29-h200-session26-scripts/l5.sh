#!/usr/bin/env bash
# L5: the h16 kernel takes 119 registers (L4) at 512 invocations, one workgroup an SM: 16 warps an SM. Its registers at
# 1,024 invocations (32 warps, at most 64 registers without spilling) and at PARTS 2 (K2: twice the words in flight a
# lane, the loads alone no faster: were they spilled?), and decode under each.
# Predicted: 1,024 spills (Local Memory Size > 0) and loses; PARTS 2 stays under 128 with PIPE off.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
for v in "" BLUESHIFT_PERSISTENT_WG=1024 BLUESHIFT_PERSISTENT_PARTS=2 "BLUESHIFT_PERSISTENT_PARTS=2 BLUESHIFT_PERSISTENT_PIPE=1" \
         BLUESHIFT_PERSISTENT_SKIP=64 "BLUESHIFT_PERSISTENT_SKIP=64 BLUESHIFT_PERSISTENT_PARTS=2"; do
  echo "== ${v:-default}"
  env $v BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/st/m --prompt-tokens 16 --gen-tokens 8 --reps 1 \
    --json 2>&1 >/dev/null | grep -i "persistent" | head -3
done | tee /tmp/o/stats.txt
stamp stats
timeout 90 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m wg1024:BLUESHIFT_PERSISTENT_WG=1024 \
  parts2:BLUESHIFT_PERSISTENT_PARTS=2
stamp 1b
tar -C /tmp -cJf $OUT/l5.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m wg1024:BLUESHIFT_PERSISTENT_WG=1024
stamp 8b
tar -C /tmp -cJf $OUT/l5.tar.xz o
