#!/usr/bin/env bash
# M1: widths between 512 and 1,024. At one workgroup an SM the width sets the warps an SM (L6: 16 -> 12 warps cost the
# 8B's loads 22%) and the driver's register cap (65,536 / width: 512 -> 128, 576 -> 113, 640 -> 102, 768 -> 85).
# The kernel takes 119 at 512 (L5); 1,024 (cap 64) spilled and lost 27%. Never measured: 576, 640, 768.
# Predicted: 576 fits without spill (cap 112: a few registers of ILP lost) and gains ~3-5% on the 8B (18 warps);
# 640 spills a little or not at all and gains or breaks even; 768 spills and loses.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
for w in 512 576 640 768; do
  echo "== WG $w"
  BLUESHIFT_PERSISTENT_WG=$w BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/st/m --prompt-tokens 16 \
    --gen-tokens 8 --reps 1 --json 2>&1 >/dev/null | grep -i "persistent" | head -3
done | tee /tmp/o/stats.txt
stamp stats
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m wg576:BLUESHIFT_PERSISTENT_WG=576 \
  wg640:BLUESHIFT_PERSISTENT_WG=640 wg768:BLUESHIFT_PERSISTENT_WG=768
stamp 1b
tar -C /tmp -cJf $OUT/m1.tar.xz o
timeout 250 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m wg576:BLUESHIFT_PERSISTENT_WG=576 \
  wg640:BLUESHIFT_PERSISTENT_WG=640 wg768:BLUESHIFT_PERSISTENT_WG=768
stamp 8b
tar -C /tmp -cJf $OUT/m1.tar.xz o
