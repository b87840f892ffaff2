#!/usr/bin/env bash
# M2 (an experimental build: the working tree's PKX_* variants of decode_persistent_h16, picked by BLUESHIFT_PKX;
# not landed). M1 found 640 wide +4.2% on the 8B (6 gate/up rounds instead of 7) although the driver capped the kernel
# at 96 registers with 48 bytes of spill, and -8% on the 1B (4 rounds either way: the spill's cost alone).
# What sets the registers? Variants: xs (the h16 math with each slot half's x loaded just before its two rows: 16
# registers of x held -> 8), q6x / q8x (the Q6_K / Q8_0 + F16 branches of dot2 compiled out: statistics only),
# att2 (the attention merge folds 2 splits a round, not 4), min (q6x + q8x + att2).
# Predicted: xs trims 4-8 registers at 512 and the spill at 640; the Q6_K branch sets the peak (q6x -10 or more).
# Then decode: 8B and 1B at 512 / 640, with and without xs; the 3B at 640 (predicted +3%: q/k/v 2 rounds -> 1).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
for x in "" xs q6x q8x att2 min; do
  for w in 512 640 768; do
    r=$(env ${x:+BLUESHIFT_PKX=$x} BLUESHIFT_PERSISTENT_WG=$w BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/st/m \
      --prompt-tokens 16 --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep -i "decode_persistent" | head -1 |
      sed -E 's/.*Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 \2/')
    set -- $r
    echo "${x:-base} WG $w: registers ${1:-?} spill $(( ${2:-68719476736} - 68719476736 ))"
  done
done | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 100 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: xs:BLUESHIFT_PKX=xs \
  wg640:BLUESHIFT_PERSISTENT_WG=640 | tee /tmp/o/logits.txt
stamp logits
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m xs:BLUESHIFT_PKX=xs \
  xs640:BLUESHIFT_PKX=xs,BLUESHIFT_PERSISTENT_WG=640
stamp 1b
tar -C /tmp -cJf $OUT/m2.tar.xz o
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m wg640:BLUESHIFT_PERSISTENT_WG=640 \
  xs:BLUESHIFT_PKX=xs xs640:BLUESHIFT_PKX=xs,BLUESHIFT_PERSISTENT_WG=640
stamp 8b
tar -C /tmp -cJf $OUT/m2.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m wg640:BLUESHIFT_PERSISTENT_WG=640
stamp 3b
tar -C /tmp -cJf $OUT/m2.tar.xz o
